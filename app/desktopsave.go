package app

import (
	"context"
	"fmt"
	"math"

	"vetlens/app/repo"
	"vetlens/engine/cardiac"
)

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
