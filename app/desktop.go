package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"strings"
	"time"

	"vetlens/app/patient"
	"vetlens/app/repo"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
	"vetlens/internal/ident"
)

// DesktopCustomer is the built-in customer the desktop app measures,
// meters and records under. API keys cannot be created for it.
const DesktopCustomer = "desktop"

// DesktopCaller is the Caller of every desktop use case.
func DesktopCaller() Caller { return Caller{Customer: DesktopCustomer, KeyPrefix: DesktopCustomer} }

// MaxPatientIDLen is the longest patient id the desktop accepts: the
// identifier rule's cap (internal/ident).
const MaxPatientIDLen = ident.MaxBytes

// PatientID is a patient id (patient.ID): parsed by ParsePatientID at a
// boundary, or read back from a store.
type PatientID = patient.ID

// ParsePatientID parses a patient id typed at the desktop, given on the
// command line or read from a DICOM Patient ID tag, by the one identifier
// rule (internal/ident: at most MaxPatientIDLen bytes of UTF-8, graphic
// characters only). The id is taken as given (callers trim it where they
// read it). The empty id is valid (no patient); callers that need one
// check for it. Errors are KindInvalid, "patient ID: " and why.
func ParsePatientID(s string) (PatientID, error) {
	if err := ident.Check(s); err != nil {
		return "", &Error{Kind: KindInvalid, Msg: "patient ID", Err: err}
	}
	return PatientID(s), nil
}

// CheckUUID validates a cardiac request's uuid by the same rule as
// ParsePatientID (KindInvalid, the message naming the uuid).
func CheckUUID(uuid string) error {
	if err := ident.Check(uuid); err != nil {
		return &Error{Kind: KindInvalid, Msg: "uuid", Err: err}
	}
	return nil
}

// ensureDesktop creates the desktop customer (tier paygo) on first use.
func (s *Accounts) ensureDesktop(ctx context.Context) error {
	_, err := s.repos.Customers.Get(ctx, DesktopCustomer)
	if err == nil {
		return nil
	}
	if !errors.Is(err, repo.ErrNotFound) {
		return fmt.Errorf("desktop customer: %w", err)
	}
	c := repo.Customer{Name: DesktopCustomer, Tier: string(TierPaygo), Created: s.clock.Now().UTC()}
	if err := s.repos.Customers.Put(ctx, c); err != nil {
		return fmt.Errorf("create desktop customer: %w", err)
	}
	return nil
}

// Measurement is a desktop measurement awaiting the clinician's review.
type Measurement struct {
	// Result is the model's result. Positions refer to Image.
	Result *cardiac.Result
	// Image is what was measured: the rectified display area when the
	// input was a photograph of a screen, else the decoded input.
	Image image.Image
	// ModelVersion is the cardiac model version.
	ModelVersion string
	// PatientID is the patient id the measurement was metered for ("" none).
	PatientID PatientID
	// Billing is how the measurement was metered (DesktopCustomer).
	Billing Billing
	// DICOM holds the tags, pixel spacing and encoding of a DICOM input;
	// nil for JPEG and PNG.
	DICOM *DICOMImage
	// Base is the history entry this measurement was reopened from
	// (ReopenMeasurement); nil for a new measurement. Saving it stores a
	// correction that supersedes the base.
	Base *EntryRef
	// KeepPatient is the patient the clinician chose to file this
	// measurement under although its DICOM patient tags name another
	// (the mismatch acknowledged: StudyMismatch); "" when not asked.
	KeepPatient PatientID
	// Captured is set for the result of a capture session: unlike a file
	// it cannot be opened again, so leaving it unsaved loses it
	// (UnsavedWork).
	Captured bool
}

// UnsavedWork says what leaving a measurement on screen would lose, ""
// for nothing: landmarks the clinician changed (edited, placed by hand
// or confirmed: changed) since it was opened or last saved, or the
// result of a capture session never saved. saved is whether the screen
// holds what was last saved (or reopened). A model measurement of a file
// loses nothing: the file can be opened again. Quitting and changing the
// patient ask first while there is some.
func UnsavedWork(m *Measurement, kind MeasurementKind, changed, saved bool) string {
	switch {
	case m == nil || saved:
		return ""
	case changed && kind == MeasurementManual:
		return "landmarks placed by hand"
	case changed:
		return "edited landmarks"
	case m.Captured && m.Base == nil:
		return "a capture session's result"
	}
	return ""
}

// EntryRef names one stored history entry.
type EntryRef struct {
	PatientID PatientID
	Customer  string
	Seq       uint64
	// Kind is the entry's kind.
	Kind MeasurementKind
	// Time is when it was saved.
	Time time.Time
}

// HasModelLandmarks reports whether the model gave landmarks the clinician
// can correct (the image was not rejected and the ensemble ran). Hand
// placement needs none.
func (m *Measurement) HasModelLandmarks() bool {
	return m != nil && m.Result != nil && !m.Result.Rejected && len(m.Result.ModelLandmarks) > 0
}

// size is the measured image's size in pixels: the image's when there is
// one, else the result's.
func (m *Measurement) size() (w, h int) {
	if m.Image != nil {
		b := m.Image.Bounds()
		return b.Dx(), b.Dy()
	}
	return m.Result.Width, m.Result.Height
}

// PoPMeasurer is the port of a PoP pipeline that measures one image
// screen-aware (as PoPPredictor) and also returns the image the result's
// positions refer to. The desktop uses it, when Deps.PoPMeasurer is set,
// to show a corrected screen photo.
type PoPMeasurer interface {
	Measure(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error)
}

// MeasureDesktop measures one radiograph opened at the desktop (JPEG, PNG
// or DICOM bytes, told by content), correcting a photograph of a screen
// first when the PoP pipeline is wired (Deps.PoPMeasurer; a DICOM file is measured as it
// is; its tags come back in Measurement.DICOM, and its Patient ID, when
// ParsePatientID accepts it, is the measurement's patient when patientID
// is empty). It is metered like an API single call of the desktop
// customer (patientID gives the 24 h recheck grace) but not recorded:
// SaveMeasurement records it after the clinician's review.
func (s *Cardiac) MeasureDesktop(ctx context.Context, patientID PatientID, b []byte) (*Measurement, error) {
	if s.cardiac == nil {
		return nil, ErrCardiacUnavailable
	}
	if err := s.accounts.ensureDesktop(ctx); err != nil {
		return nil, err
	}
	var (
		res   *cardiac.Result
		img   image.Image
		err   error
		dicom *DICOMImage
	)
	if ImageKind(b) == "dicom" {
		r, d, err := s.measureDesktopDICOM(ctx, b)
		if err != nil {
			return nil, err
		}
		res, img, dicom = r, d.Gray, newDICOMImage(d)
		if patientID == "" {
			// The file's own patient when none was given: the tag is read
			// here, so it is parsed here; an id the rule refuses is left out.
			if id, err := ParsePatientID(strings.TrimSpace(dicom.Tags.PatientID)); err == nil {
				patientID = id
			}
		}
	} else if pm := s.popMeasure; pm != nil {
		_, release, err := s.reservePoP(ctx, b)
		if err != nil {
			return nil, err
		}
		defer release()
		res, err = s.inCardiacSlot(ctx, func() (*cardiac.Result, error) {
			r, shown, err := pm.Measure(ctx, b, cardiac.PredictOptions{})
			img = shown
			return r, err
		})
		if err != nil {
			if mapped := imageError(err); mapped != err {
				return nil, mapped
			}
			return nil, fmt.Errorf("measure: %w", err)
		}
		if img == nil { // code 7: show the photograph as it is
			if img, err = decodeImage(b); err != nil {
				return nil, err
			}
		}
	} else {
		var release func()
		if img, release, err = s.decodeReserved(ctx, b, 0); err != nil {
			return nil, err
		}
		defer release() // the review keeps img: it is reserved only while measured
		if res, err = s.predictImage(ctx, img, cardiac.PredictOptions{}); err != nil {
			return nil, fmt.Errorf("measure: %w", err)
		}
	}
	bill := s.accounts.Meter(ctx, DesktopCaller(), Charge{Service: "cardiac", CallType: CallSingle, Valid: ValidCode(res.Code), UUID: patientID.String()})
	return &Measurement{Result: res, Image: img, ModelVersion: s.cardiac.ModelVersion(), PatientID: patientID, Billing: bill, DICOM: dicom}, nil
}

// Values are VHS and VLAS from a set of landmarks, rounded as the engine
// rounds them; nil where they cannot be computed.
type Values struct {
	VHS, VLAS         *float64
	AxesPerpendicular bool
}

// EditedValues recomputes VHS and VLAS from landmarks a clinician placed
// (the engine's geometry, so edited and model values compare).
func EditedValues(l cardiac.Landmarks) Values {
	g := cardiac.Measure(l)
	v := Values{AxesPerpendicular: g.AxesPerpendicular()}
	if isFiniteValue(g.VHS) {
		x := math.Round(g.VHS*100) / 100
		v.VHS = &x
	}
	if isFiniteValue(g.VLAS) {
		x := math.Round(g.VLAS*100) / 100
		v.VLAS = &x
	}
	return v
}

// isFiniteValue reports whether a computed VHS or VLAS is a usable value.
func isFiniteValue(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 }

// SaveRequest asks to record a reviewed measurement in a patient's history.
type SaveRequest struct {
	// PatientID is required.
	PatientID PatientID
	// Measurement is the model's measurement (MeasureDesktop or a
	// completed DesktopSession); for a hand placement, the image it was
	// placed on and the model's result for it, whatever its code.
	Measurement *Measurement
	// Landmarks are the clinician's landmarks in pixels of
	// Measurement.Image: the model's moved (kind edited) or all 7 placed
	// by hand (kind manual). Nil for kind model.
	Landmarks *cardiac.Landmarks
	// Kind is how the values were obtained. Empty: model without
	// Landmarks, edited with them.
	Kind MeasurementKind
	// ConfirmedRadiograph is the clinician's confirmation that an image
	// the model rejected (result code 6) is a radiograph; a hand
	// placement on a rejected image is saved only with it.
	ConfirmedRadiograph bool
	// Confirmed marks the model's points the clinician confirmed as they
	// are (one action per point): with the points moved or placed, they
	// settle the points a withheld result doubts (CheckDoubt).
	Confirmed Settled
}

// Saved is the outcome of SaveMeasurement.
type Saved struct {
	// Entry is the stored entry (for a repeat, the one already stored).
	Entry repo.HistoryEntry
	// Repeat is set when the patient's latest entry already holds this
	// measurement (same image, kind and landmarks): nothing was written.
	Repeat bool
}

// kind resolves and checks the request's kind against its landmarks.
func (r SaveRequest) kind() (MeasurementKind, error) {
	k := r.Kind
	if k == "" {
		k = MeasurementModel
		if r.Landmarks != nil {
			k = MeasurementEdited
		}
	}
	switch {
	case !k.Valid():
		return k, errf(KindInvalid, "unknown measurement kind %q (want model, edited or manual)", string(k))
	case k == MeasurementModel && r.Landmarks != nil:
		return k, errf(KindInvalid, "a model measurement takes the model's landmarks; send kind edited or manual with landmarks")
	case k.Clinician() && r.Landmarks == nil:
		return k, errf(KindInvalid, "a measurement of kind %s needs the clinician's landmarks", k)
	}
	return k, nil
}

// SaveMeasurement records a reviewed measurement in the patient's history
// (desktop customer) with its kind: the values in effect (the model's for
// kind model, else computed from the clinician's landmarks with the
// engine's geometry), the model's values beside clinician values, the
// model's result code, confidence and version, and the landmarks in
// effect. Kind model needs a result with a VHS; kind edited needs model
// landmarks to have been moved (not a rejected image); kind manual works
// on any image, a rejected one only with ConfirmedRadiograph. Clinician
// landmarks must lie inside the image and give a VHS. Saving meters
// nothing: the model's measurement was metered when it was made, and a
// hand placement is not a model prediction.
//
// The measured image is kept beside the entry (PNG) so that it can be
// reopened and corrected (ReopenMeasurement); a correction of a reopened
// entry is stored as a new entry that supersedes it, and both are kept.
// Saving what the patient's latest entry already holds (same image, kind
// and landmarks) writes nothing and reports a repeat: one save per change.
func (s *Patients) SaveMeasurement(ctx context.Context, req SaveRequest) (Saved, error) {
	var e repo.HistoryEntry
	id := req.PatientID
	if id == "" {
		return Saved{Entry: e}, errf(KindInvalid, "a patient ID is required to save")
	}
	if err := s.disk.checkWritable(); err != nil {
		return Saved{Entry: e}, err
	}
	m := req.Measurement
	if m == nil || m.Result == nil {
		return Saved{Entry: e}, errf(KindInvalid, "nothing measured to save")
	}
	if err := s.checkStudyPatient(ctx, m, id); err != nil {
		return Saved{Entry: e}, err
	}
	kind, err := req.kind()
	if err != nil {
		return Saved{Entry: e}, err
	}
	dropVLAS, err := req.checkDoubt(kind)
	if err != nil {
		return Saved{Entry: e}, err
	}
	r := m.Result
	e = repo.HistoryEntry{
		Time: s.clock.Now().UTC(), Source: "desktop", Kind: string(kind), Code: int(r.Code),
		Confidence: string(r.Confidence), ModelVersion: m.ModelVersion,
	}
	lm := r.Landmarks
	switch kind {
	case MeasurementModel:
		if !r.Code.HasVHS() {
			return Saved{Entry: e}, errf(KindInvalid, "no VHS was measured (result %d: %s); correct the landmarks or place them by hand first", r.Code, r.Code.Description())
		}
		e.VHS, e.VLAS = r.VHS, r.VLAS
	default:
		if kind == MeasurementEdited && !m.HasModelLandmarks() {
			return Saved{Entry: e}, errf(KindInvalid, "the model gave no landmarks to edit (result %d); place them by hand instead", r.Code)
		}
		if kind == MeasurementManual && r.Rejected && !req.ConfirmedRadiograph {
			return Saved{Entry: e}, errf(KindInvalid, "the model rejected this image as not a radiograph (result %d); confirm it is a radiograph to save a hand placement", r.Code)
		}
		w, h := m.size()
		for k, p := range req.Landmarks {
			// Written as "inside" so that NaN (every comparison false) and
			// the infinities are outside too.
			inside := p.X >= 0 && p.X <= float64(w) && p.Y >= 0 && p.Y <= float64(h)
			if !inside {
				return Saved{Entry: e}, errf(KindInvalid, "landmark %s lies outside the image", cardiac.ClassNames[k])
			}
		}
		v := EditedValues(*req.Landmarks)
		if v.VHS == nil {
			return Saved{Entry: e}, errf(KindInvalid, "the %s landmarks give no VHS (the vertebral span is empty)", kind)
		}
		e.Edited, e.VHS, e.VLAS = true, v.VHS, v.VLAS
		if dropVLAS {
			e.VLAS = nil // from a VLAS point the model doubted
		}
		e.ModelVHS, e.ModelVLAS = r.VHS, r.VLAS
		lm = *req.Landmarks
	}
	e.Study = studyOf(m)
	e.Landmarks = make([][2]float64, len(lm))
	for k, p := range lm {
		e.Landmarks[k] = [2]float64{p.X, p.Y}
	}
	if err := s.accounts.ensureDesktop(ctx); err != nil {
		return Saved{Entry: e}, err
	}
	png, sum, err := encodeImage(m.Image)
	if err != nil {
		return Saved{Entry: e}, fmt.Errorf("save measurement: %w", err)
	}
	e.ImageSHA256 = sum
	prev, err := s.repos.History.List(ctx, DesktopCustomer, id.String())
	if err != nil {
		return Saved{Entry: e}, fmt.Errorf("save measurement: %w", err)
	}
	if last, ok := latestVisible(prev); ok && sum != "" && sameMeasurement(last, e) {
		return Saved{Entry: last, Repeat: true}, nil
	}
	if b := m.Base; b != nil {
		for _, p := range prev {
			if p.Seq == b.Seq && sameMeasurement(p, e) {
				return Saved{Entry: p, Repeat: true}, nil
			}
		}
	}
	if b := m.Base; b != nil {
		if b.PatientID != id {
			return Saved{Entry: e}, errf(KindInvalid, "this measurement was reopened from patient %s; open patient %s to correct it", b.PatientID, b.PatientID)
		}
		e.Supersedes = b.Seq
	}
	stored, err := s.repos.History.Add(ctx, DesktopCustomer, id.String(), e, png)
	if err != nil {
		return Saved{Entry: e}, fmt.Errorf("save measurement: %w", err)
	}
	if stored.Supersedes != 0 {
		ev := repo.AuditEvent{Time: stored.Time, PatientID: id, Action: "corrected", Customer: DesktopCustomer, Entry: stored.Supersedes,
			Detail: fmt.Sprintf("entry %d corrected by entry %d (%s, VHS %s)", stored.Supersedes, stored.Seq, kind, fmtPtr(stored.VHS))}
		if _, err := s.repos.Audit.Append(ctx, ev); err != nil {
			return Saved{Entry: stored}, fmt.Errorf("save measurement: audit: %w", err)
		}
	}
	if err := s.auditKeptPatient(ctx, m, stored); err != nil {
		return Saved{Entry: stored}, fmt.Errorf("save measurement: %w", err)
	}
	return Saved{Entry: stored}, nil
}

// USGVisit is one USG prediction of a patient, from the USG log.
type USGVisit struct {
	Seq                 uint64
	Time                time.Time
	Customer            string
	ProbabilityImpaired float64
	RiskTier            string
	RiskLabel           string
	Classification      string
	ConformalSet        []string
	ModelVersion        string
	// Features are the values the model used, in the spec's units (after
	// any unit conversion and auto-correction), by feature key.
	Features map[string]float64
	// Entered are the values as the clinician entered them, with their
	// units, in the form's order (desktop screenings; empty for API
	// calls and older entries).
	Entered []EnteredValue
	// Corrections are the auto-corrections applied, in words.
	Corrections []string
	// Hidden is set when the screening was removed from view, with why.
	Hidden *repo.Hidden
}

// PatientRecord is everything kept for one patient id, across the desktop
// and every API customer of this installation (the desktop is the
// clinic's own console).
type PatientRecord struct {
	// PatientID is the patient id.
	PatientID PatientID
	// Details is the patient's record; HasDetails is false for an id
	// known only from its history (older data directories).
	Details    repo.Patient
	HasDetails bool
	// Reference is the reference ranges for the patient's species and
	// breed.
	Reference Reference
	// Cardiac is the VHS/VLAS history with each entry's kind, oldest
	// first, hidden entries and superseded versions included (see
	// CardiacEntry.Current).
	Cardiac []CardiacEntry
	// USG is the USG predictions, oldest first.
	USG []USGVisit
	// Audit is the audit trail, oldest first.
	Audit []repo.AuditEvent
}

// Patient returns the record of one patient id.
func (s *Patients) Patient(ctx context.Context, id PatientID) (*PatientRecord, error) {
	if id == "" {
		return nil, errf(KindInvalid, "a patient ID is required")
	}
	details, found, err := s.patientDetails(ctx, id)
	if err != nil {
		return nil, err
	}
	hs, err := s.repos.History.ListPatient(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("patient history: %w", err)
	}
	logs, err := s.repos.USGLog.ListPatient(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("patient usg log: %w", err)
	}
	audit, err := s.AuditTrail(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &PatientRecord{PatientID: id, Details: details, HasDetails: found, Reference: ReferenceForPatient(details),
		Cardiac: make([]CardiacEntry, len(hs)), USG: []USGVisit{}, Audit: audit}
	type key struct {
		customer string
		seq      uint64
	}
	supersededBy := map[key]uint64{}
	for _, h := range hs {
		if h.Supersedes != 0 && h.Hidden == nil { // a removed correction replaces nothing
			supersededBy[key{h.Customer, h.Supersedes}] = h.Seq
		}
	}
	for i, h := range hs {
		rec.Cardiac[i] = CardiacEntry{PatientEntry: h, Kind: EntryKind(h.HistoryEntry), SupersededBy: supersededBy[key{h.Customer, h.Seq}]}
	}
	for _, l := range logs {
		var out usg.Result
		if err := json.Unmarshal(l.Outputs, &out); err != nil {
			return nil, fmt.Errorf("patient usg log %d: %w", l.Seq, err)
		}
		var in usgLogInputs
		if err := json.Unmarshal(l.Inputs, &in); err != nil {
			return nil, fmt.Errorf("patient usg log %d: %w", l.Seq, err)
		}
		rec.USG = append(rec.USG, USGVisit{
			Seq: l.Seq, Time: l.Time, Customer: l.Customer, ProbabilityImpaired: out.ProbabilityImpaired,
			RiskTier: out.RiskTier, RiskLabel: out.RiskLabel, Classification: out.Classification, ConformalSet: out.ConformalSet,
			ModelVersion: l.ModelVersion, Features: in.Features, Entered: in.Entered, Corrections: in.Warnings, Hidden: l.Hidden,
		})
	}
	return rec, nil
}

// IDs lists up to limit patient ids containing query
// (case-insensitive), from the records, the cardiac history and the USG
// log. FindPatients also matches names.
func (s *Patients) IDs(ctx context.Context, query string, limit int) ([]PatientID, error) {
	ids, err := s.repos.Patients.PatientIDs(ctx, strings.TrimSpace(query), limit)
	if err != nil {
		return nil, fmt.Errorf("find patients: %w", err)
	}
	return ids, nil
}

// DesktopSession is a capture session run from the desktop (live camera
// frames). Frame implements the live runner's frame sink.
type DesktopSession struct {
	svc       *Sessions
	id        string
	patientID PatientID
	// Config is the session's limits.
	Config SessionConfig

	final *Measurement
	// files is set when the frames come from image files (FromFiles);
	// asFile when the result is such a file measured as a file.
	files, asFile bool
}

// StartDesktopSession opens a PoP capture session for the desktop; a
// completed session is metered at the session rate for patientID.
func (s *Sessions) StartDesktopSession(ctx context.Context, patientID PatientID) (*DesktopSession, error) {
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	if err := s.accounts.ensureDesktop(ctx); err != nil {
		return nil, err
	}
	st, err := s.StartSession(ctx, DesktopCaller())
	if err != nil {
		return nil, err
	}
	return &DesktopSession{svc: s, id: st.SessionID, patientID: patientID, Config: st.SessionConfig}, nil
}

// ID is the session id.
func (d *DesktopSession) ID() string { return d.id }

// Frame feeds one JPEG frame. On StatusComplete the session's measurement
// (rectified image, final result, billing) is available from Result; it
// is not recorded in history until SaveMeasurement.
func (d *DesktopSession) Frame(ctx context.Context, jpeg []byte) (FrameOutcome, error) {
	if d.files {
		if plain, err := PlainFile(jpeg); err == nil && plain {
			return d.measureFile(ctx, jpeg)
		}
	}
	body, out, err := d.svc.sessionFrame(ctx, DesktopCaller(), d.id, jpeg, d.patientID.String(), sessionDesktop)
	if err != nil {
		return out, err
	}
	if out.Status == StatusComplete && out.Result != nil {
		img, release, err := d.svc.decodeReserved(ctx, out.Rectified, 0)
		if err != nil {
			return out, fmt.Errorf("session result image: %w", err)
		}
		release() // the review keeps img: it is reserved only while decoded
		m := &Measurement{Result: out.Result, Image: img, ModelVersion: d.svc.modelVersion(), PatientID: d.patientID, Captured: true}
		if body.Billing != nil {
			m.Billing = *body.Billing
		}
		d.final = m
	}
	return out, nil
}

// Result is the completed session's measurement, nil before completion.
func (d *DesktopSession) Result() *Measurement { return d.final }

// LandmarkNames are the landmarks' plain names, in the spec's class
// order, as the report's legend and the screens name them.
var LandmarkNames = [cardiac.NumLandmarks]string{
	cardiac.HeartTop:    "Carina",
	cardiac.HeartBottom: "Cardiac apex",
	cardiac.HeartRight:  "Cranial heart border",
	cardiac.HeartLeft:   "Caudal heart border",
	cardiac.VLASPoint:   "Left atrium (VLAS)",
	cardiac.VertebraA:   "Vertebra T4 (start)",
	cardiac.VertebraB:   "Vertebra T9 (end)",
}

// ReportImage draws the measurement for a report: the measured image with
// the landmarks in effect (the clinician's when given, edited or placed
// by hand, on any image), numbered 1-7 (LandmarkNames gives the legend),
// axes, ruler and values.
func ReportImage(m *Measurement, clinician *cardiac.Landmarks) (image.Image, Values) {
	return reportImage(m, clinician, false)
}

// reportImage is ReportImage, leaving the clinician's VLAS out with
// dropVLAS (its point is one the model doubted: CheckDoubt).
func reportImage(m *Measurement, clinician *cardiac.Landmarks, dropVLAS bool) (image.Image, Values) {
	r := *m.Result
	v := Values{VHS: r.VHS, VLAS: r.VLAS, AxesPerpendicular: r.AxesPerpendicular}
	if clinician != nil {
		v = EditedValues(*clinician)
		if dropVLAS {
			v.VLAS = nil
		}
		r.Landmarks = *clinician
		r.ModelLandmarks = []cardiac.Landmarks{*clinician} // drawn even where the model had none
		r.Rejected = false
		r.Geometry = cardiac.Measure(*clinician)
		r.VHS, r.VLAS = v.VHS, v.VLAS
	}
	var labels [cardiac.NumLandmarks]string
	for k := range labels {
		labels[k] = fmt.Sprint(k + 1)
	}
	return cardiac.RenderLabelled(m.Image, &r, labels), v
}

// ReportDetails is what a report says beyond the measurement: the
// patient's record and the clinic's letterhead.
type ReportDetails struct {
	Patient repo.Patient
	Clinic  report.Clinic
}

// DesktopReport is the one-page report of a reviewed measurement as req
// would save it (report.WritePDF writes it): the clinic, the animal and
// owner, the findings in plain words against the patient's species or
// breed range (named with its source), the kind of measurement (model,
// corrected or manual) with the model's values beside the clinician's,
// the model's confidence for model values only, the vertebral span check
// of the landmarks in effect (where the image let it count them), and the
// annotated image with numbered landmarks and their legend. There is no
// report for an image the model rejected, unless the clinician confirmed it is a
// radiograph and placed the landmarks, nor for a measurement without a
// VHS (KindInvalid). req is not otherwise checked: the report shows what
// is on screen, saved or not.
func DesktopReport(req SaveRequest, date time.Time, d ReportDetails) (report.Report, error) {
	m := req.Measurement
	if m == nil || m.Result == nil || m.Image == nil {
		return report.Report{}, errf(KindInvalid, "nothing measured to report")
	}
	kind, _ := req.kind() // not checked: an unknown kind is labelled so
	var lm *cardiac.Landmarks
	if kind.Clinician() {
		lm = req.Landmarks
	}
	r := m.Result
	if r.Rejected && (lm == nil || !req.ConfirmedRadiograph) {
		return report.Report{}, errf(KindInvalid, "the model rejected this image as not a radiograph: there is no report for it (confirm it is a radiograph and place the landmarks by hand to measure it)")
	}
	dropVLAS, err := req.checkDoubt(kind)
	if err != nil {
		return report.Report{}, err
	}
	img, v := reportImage(m, lm, dropVLAS)
	if v.VHS == nil {
		return report.Report{}, errf(KindInvalid, "no heart size was measured on this image: there is nothing to report")
	}
	p := d.Patient
	if p.ID == "" {
		p.ID = req.PatientID
	}
	if mm := StudyMismatch(m, p); mm != nil {
		return report.Report{}, errf(KindInvalid, "the file's patient tags contradict patient %s (%s): switch to the file's patient, or keep %s with the mismatch acknowledged",
			p.ID, strings.Join(mm.Differences, "; "), p.ID)
	}
	ref := ReferenceForPatient(p)
	rep := report.Report{
		Clinic: d.Clinic, PatientID: req.PatientID.String(), Date: date, Image: img, VHS: v.VHS, VLAS: v.VLAS,
		Kind:         kind.Label(),
		Result:       "Model result: " + r.Code.Description(),
		Findings:     []string{HeartSize(v.VHS, ref).Line, LeftAtrium(v.VLAS, ref).Line},
		Reading:      Reading(v.VHS, v.VLAS, ref),
		ModelVersion: m.ModelVersion,
		VHSRange:     ref.VHSLabel() + ", mean ± 2 SD",
		VLASRange:    ref.VLASLabel(),
		Animal:       animalFields(p, date),
	}
	if ref.Note != "" {
		rep.VHSRange += "; " + ref.Note
	}
	if ref.HasVLAS && ref.VLAS.Low <= 0 {
		rep.VLASRange = ref.VLASLabel() + ", cut-off for left atrial enlargement"
	}
	for k, name := range LandmarkNames {
		rep.Legend = append(rep.Legend, report.LegendItem{Number: k + 1, Name: name, Color: cardiac.LandmarkColor(k)})
	}
	if kind == MeasurementModel && !r.Rejected && r.Confidence != "" {
		rep.Confidence = string(r.Confidence)
	}
	if lm != nil {
		rep.Clinician, rep.ModelVHS, rep.ModelVLAS = true, r.VHS, r.VLAS
	}
	if s := m.SpanCheck(lm); s != nil {
		rep.Span = s.ReportLine()
	}
	return rep, nil
}

// animalFields are the record's details as the report lists them.
func animalFields(p repo.Patient, on time.Time) []report.Field {
	var out []report.Field
	add := func(label, v string) {
		if v != "" {
			out = append(out, report.Field{Label: label, Value: v})
		}
	}
	add("Name", p.Name)
	sp := p.Species
	if sp != "" && p.Breed != "" {
		sp += ", " + p.Breed
	} else if p.Breed != "" {
		sp = p.Breed
	}
	add("Species", sp)
	add("Sex", p.Sex)
	if months, ok := Age(p.BirthDate, on); ok {
		add("Age", fmt.Sprintf("%s (born %s)", AgeText(months), p.BirthDate))
	}
	add("Weight", weightText(p.WeightKg))
	add("Owner", p.Owner)
	return out
}
