package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"strings"
	"time"

	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/internal/ident"
)

// encodeImage is the image as kept beside a history entry (PNG) and the
// hex SHA-256 of that encoding; nothing for a nil image.
func encodeImage(img image.Image) ([]byte, string, error) {
	if img == nil {
		return nil, "", nil
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return nil, "", fmt.Errorf("encode image: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	return b.Bytes(), hex.EncodeToString(sum[:]), nil
}

// latestVisible is the newest entry not hidden.
func latestVisible(es []repo.HistoryEntry) (repo.HistoryEntry, bool) {
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Hidden == nil {
			return es[i], true
		}
	}
	return repo.HistoryEntry{}, false
}

// sameMeasurement reports whether two entries hold the same measurement:
// the same image, kind and landmarks (to a hundredth of a pixel).
func sameMeasurement(a, b repo.HistoryEntry) bool {
	if a.ImageSHA256 == "" || a.ImageSHA256 != b.ImageSHA256 || EntryKind(a) != EntryKind(b) || len(a.Landmarks) != len(b.Landmarks) {
		return false
	}
	for i := range a.Landmarks {
		for j := 0; j < 2; j++ {
			if math.Abs(a.Landmarks[i][j]-b.Landmarks[i][j]) > 0.005 {
				return false
			}
		}
	}
	return true
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

// findEntry returns the pair's entry with seq (KindNotFound when none).
func (s *Patients) findEntry(ctx context.Context, customer string, patientID PatientID, seq uint64) (repo.HistoryEntry, error) {
	es, err := s.repos.History.List(ctx, customer, patientID.String())
	if err != nil {
		return repo.HistoryEntry{}, fmt.Errorf("history of %s: %w", patientID, err)
	}
	for _, e := range es {
		if e.Seq == seq {
			return e, nil
		}
	}
	return repo.HistoryEntry{}, errf(KindNotFound, "patient %s has no measurement %d", patientID, seq)
}

// ReopenMeasurement puts an earlier desktop measurement back on screen:
// its kept image with the landmarks in effect when it was saved, and the
// model's values, result code and confidence as stored. Saving it again
// after a correction stores a new entry that supersedes this one (both
// are kept). Entries from API clients and entries saved before images
// were kept cannot be reopened (KindNotFound, saying why).
func (s *Patients) ReopenMeasurement(ctx context.Context, id PatientID, customer string, seq uint64) (*Measurement, error) {
	e, err := s.findEntry(ctx, customer, id, seq)
	if err != nil {
		return nil, err
	}
	if !e.HasImage {
		return nil, errf(KindNotFound, "measurement %d of %s has no image kept (saved by an API client or by an older version): it can be viewed, not reopened", seq, id)
	}
	if len(e.Landmarks) != cardiac.NumLandmarks {
		return nil, errf(KindNotFound, "measurement %d of %s has no landmarks kept", seq, id)
	}
	b, err := s.repos.History.Image(ctx, customer, id.String(), seq)
	if err != nil {
		if errors.Is(err, repo.ErrNotFound) {
			return nil, errf(KindNotFound, "the image of measurement %d of %s is missing", seq, id)
		}
		return nil, fmt.Errorf("reopen measurement: %w", err)
	}
	img, err := decodeImage(b)
	if err != nil {
		return nil, fmt.Errorf("reopen measurement %d: %w", seq, err)
	}
	var lm cardiac.Landmarks
	for i, p := range e.Landmarks {
		lm[i] = cardiac.Point{X: p[0], Y: p[1]}
	}
	kind := EntryKind(e)
	g := cardiac.Measure(lm)
	bounds := img.Bounds()
	r := &cardiac.Result{
		Width: bounds.Dx(), Height: bounds.Dy(), Code: cardiac.Code(e.Code), Confidence: cardiac.Confidence(e.Confidence),
		Landmarks: lm, ModelLandmarks: []cardiac.Landmarks{lm}, Geometry: g, LandmarksDetected: true,
		AxesPerpendicular: g.AxesPerpendicular(), VHS: e.VHS, VLAS: e.VLAS, Spread: math.NaN(),
	}
	if kind.Clinician() {
		r.VHS, r.VLAS = e.ModelVHS, e.ModelVLAS
	}
	m := &Measurement{
		Result: r, Image: img, ModelVersion: e.ModelVersion, PatientID: id,
		Base: &EntryRef{PatientID: id, Customer: customer, Seq: seq, Kind: kind, Time: e.Time},
	}
	if st := e.Study; st != nil {
		m.DICOM = &DICOMImage{Tags: DICOMTags{StudyInstanceUID: st.InstanceUID, PatientID: st.PatientID, PatientNameDICOM: st.PatientName, AccessionNumber: st.Accession}}
		m.DICOM.Tags.StudyDate, _ = time.Parse("20060102", st.Date)
		if st.PatientID != "" && st.PatientID != id.String() {
			m.KeepPatient = id // filed here with the mismatch acknowledged when saved
		}
	}
	return m, nil
}

// MinHideReasonLen is the shortest reason HideEntry accepts.
const MinHideReasonLen = 3

// HideEntry removes a cardiac measurement from the patient's history view
// and trends by hiding it with the clinician's reason; the entry itself
// and an audit event (who, when, why) are kept. An entry already hidden
// is KindConflict.
func (s *Patients) HideEntry(ctx context.Context, id PatientID, customer string, seq uint64, reason string) (repo.HistoryEntry, error) {
	reason = strings.Join(strings.Fields(reason), " ")
	if len([]rune(reason)) < MinHideReasonLen {
		return repo.HistoryEntry{}, errf(KindInvalid, "give a reason for removing the measurement (at least %d characters)", MinHideReasonLen)
	}
	if err := ident.Check(reason); err != nil {
		return repo.HistoryEntry{}, &Error{Kind: KindInvalid, Msg: "reason", Err: err}
	}
	e, err := s.findEntry(ctx, customer, id, seq)
	if err != nil {
		return e, err
	}
	if e.Hidden != nil {
		return e, errf(KindConflict, "measurement %d of %s was already removed on %s (%s)", seq, id, e.Hidden.Time.Format("2006-01-02"), e.Hidden.Reason)
	}
	now := s.clock.Now().UTC()
	ev := repo.AuditEvent{Time: now, PatientID: id, Action: "hidden", Customer: customer, Entry: seq, Reason: reason,
		Detail: fmt.Sprintf("measurement of %s (VHS %s, %s) removed from view", e.Time.Format("2006-01-02 15:04"), fmtPtr(e.VHS), EntryKind(e))}
	h, err := s.repos.History.Hide(ctx, customer, id.String(), seq, repo.Hidden{Time: now, Reason: reason}, ev)
	if err != nil {
		return h, fmt.Errorf("remove measurement: %w", err)
	}
	return h, nil
}

// HideScreening removes a bloodwork screening from the patient's view by
// hiding it with the clinician's reason; the log entry (and its billing)
// and an audit event are kept. Already hidden is KindConflict.
func (s *Patients) HideScreening(ctx context.Context, id PatientID, seq uint64, reason string) (repo.USGLogEntry, error) {
	reason = strings.Join(strings.Fields(reason), " ")
	if len([]rune(reason)) < MinHideReasonLen {
		return repo.USGLogEntry{}, errf(KindInvalid, "give a reason for removing the screening (at least %d characters)", MinHideReasonLen)
	}
	if err := ident.Check(reason); err != nil {
		return repo.USGLogEntry{}, &Error{Kind: KindInvalid, Msg: "reason", Err: err}
	}
	logs, err := s.repos.USGLog.ListPatient(ctx, id)
	if err != nil {
		return repo.USGLogEntry{}, fmt.Errorf("usg log: %w", err)
	}
	var found *repo.USGLogEntry
	for i := range logs {
		if logs[i].Seq == seq {
			found = &logs[i]
		}
	}
	switch {
	case found == nil:
		return repo.USGLogEntry{}, errf(KindNotFound, "patient %s has no screening %d", id, seq)
	case found.Hidden != nil:
		return *found, errf(KindConflict, "screening %d of %s was already removed on %s (%s)", seq, id, found.Hidden.Time.Format("2006-01-02"), found.Hidden.Reason)
	}
	now := s.clock.Now().UTC()
	ev := repo.AuditEvent{Time: now, PatientID: id, Action: "hidden", Customer: found.Customer, Reason: reason,
		Detail: fmt.Sprintf("bloodwork screening %d of %s removed from view", seq, found.Time.Format("2006-01-02 15:04"))}
	e, err := s.repos.USGLog.Hide(ctx, seq, repo.Hidden{Time: now, Reason: reason}, ev)
	if err != nil {
		return e, fmt.Errorf("remove screening: %w", err)
	}
	return e, nil
}
