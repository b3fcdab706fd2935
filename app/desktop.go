package app

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"time"

	"vetlens/app/patient"
	"vetlens/app/repo"
	"vetlens/engine/cardiac"
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
	} else if s.popMeasure != nil {
		if res, img, err = s.measureScreenAware(ctx, b, cardiac.PredictOptions{}); err != nil {
			return nil, err
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
		out, err := decodeUSGLogResult(l)
		if err != nil {
			return nil, fmt.Errorf("patient %w", err)
		}
		in, err := decodeUSGLogInputs(l)
		if err != nil {
			return nil, fmt.Errorf("patient %w", err)
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
