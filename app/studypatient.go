package app

import (
	"context"
	"fmt"
	"strings"

	"vetlens/app/repo"
)

// PatientMismatch is a measured file whose patient tags contradict the
// patient it would be filed under: the clinician must either switch to
// the file's patient or keep the patient with the mismatch acknowledged
// (Measurement.KeepPatient) before it is saved or reported.
type PatientMismatch struct {
	// PatientID is the patient the study would be filed under.
	PatientID PatientID
	// File is the file's patient as its tags give it (PatientFromTags);
	// File.ID is "" when the file carries no Patient ID.
	File repo.Patient
	// Differences say where the tags and the patient differ, in words
	// ("patient ID: loaded \"Bella\", file \"P-0042\"").
	Differences []string
}

// Question is the mismatch as the clinician is asked about it.
func (p *PatientMismatch) Question() string {
	who := "another patient"
	if p.File.ID != "" {
		who = "patient " + p.File.ID.String()
		if p.File.Name != "" {
			who += " (" + p.File.Name + ")"
		}
	} else if p.File.Name != "" {
		who = p.File.Name
	}
	return fmt.Sprintf("This file belongs to %s, not to the loaded patient %s (%s). File it under which patient?",
		who, p.PatientID, strings.Join(p.Differences, "; "))
}

// StudyMismatch compares a measurement's patient tags (a DICOM file's)
// with the patient it would be filed under, rec (the record as loaded;
// only rec.ID when there is no record). The tags contradict the patient
// when they carry another Patient ID, or, carrying none, another name or
// species than a record that has one. It returns nil when they agree,
// when the file carries no patient tags (JPEG, PNG, a capture), when no
// patient is given (the file's own patient is then used), and when the
// clinician kept this patient with the mismatch acknowledged
// (m.KeepPatient == rec.ID). One rule for every path that files a study:
// a file opened on Review, one taken from the watched import folder, and
// SaveMeasurement and DesktopReport themselves.
func StudyMismatch(m *Measurement, rec repo.Patient) *PatientMismatch {
	id := strings.TrimSpace(rec.ID.String())
	if m == nil || m.DICOM == nil || id == "" {
		return nil
	}
	file := PatientFromTags(m.DICOM.Tags.PatientTags())
	if m.KeepPatient != "" && m.KeepPatient.String() == id {
		return nil
	}
	var diff []string
	switch {
	case file.ID != "":
		if file.ID.String() != id {
			diff = append(diff, fmt.Sprintf("patient ID: loaded %q, file %q", id, file.ID))
		}
	default:
		if file.Name != "" && rec.Name != "" && !strings.EqualFold(strings.TrimSpace(rec.Name), file.Name) {
			diff = append(diff, fmt.Sprintf("name: loaded %q, file %q", rec.Name, file.Name))
		}
		if file.Species != "" && rec.Species != "" && rec.Species != file.Species {
			diff = append(diff, fmt.Sprintf("species: loaded %s, file %s", rec.Species, file.Species))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return &PatientMismatch{PatientID: rec.ID, File: file, Differences: diff}
}

// FileRoute is what opening a measured file does with the current
// patient (RouteFilePatient).
type FileRoute int

// The routes.
const (
	// RouteKeep: the file names no patient (JPEG, PNG) or agrees with the
	// current one without adding to its record; the current patient stays.
	RouteKeep FileRoute = iota
	// RouteFile: the file's patient becomes the current one, its record
	// created or completed from the tags (PrefillPatient): no patient was
	// loaded, or the loaded one is the file's.
	RouteFile
	// RouteAsk: the tags contradict the loaded patient; the clinician
	// chooses (switch to the file's patient, or keep the loaded one with
	// the mismatch acknowledged) before the study can be saved or
	// reported.
	RouteAsk
)

// RouteFilePatient is the one rule for whose study a measured file is
// when it is opened (Review's Open, a dropped file, a file from the
// watched import folder): with no patient loaded, or the loaded patient
// being the file's, the file's patient (RouteFile, when the file names
// one); with tags that contradict the loaded patient (StudyMismatch),
// ask (RouteAsk, with the mismatch); else keep the loaded patient.
func RouteFilePatient(loaded repo.Patient, m *Measurement) (FileRoute, *PatientMismatch) {
	if m == nil || m.DICOM == nil || strings.TrimSpace(m.DICOM.Tags.PatientID) == "" {
		if mm := StudyMismatch(m, loaded); mm != nil {
			return RouteAsk, mm
		}
		return RouteKeep, nil
	}
	id := strings.TrimSpace(loaded.ID.String())
	if id == "" || id == strings.TrimSpace(m.DICOM.Tags.PatientID) {
		return RouteFile, nil
	}
	if mm := StudyMismatch(m, loaded); mm != nil {
		return RouteAsk, mm
	}
	return RouteKeep, nil
}

// checkStudyPatient refuses to file or report m under patient id when its
// tags contradict the patient's record (StudyMismatch) and the clinician
// has not acknowledged it (KindInvalid, naming both patients).
func (s *Patients) checkStudyPatient(ctx context.Context, m *Measurement, id PatientID) error {
	if m == nil || m.DICOM == nil {
		return nil
	}
	rec, _, err := s.patientDetails(ctx, id)
	if err != nil {
		return fmt.Errorf("check the file's patient: %w", err)
	}
	rec.ID = id
	if mm := StudyMismatch(m, rec); mm != nil {
		return errf(KindInvalid, "the file's patient tags contradict patient %s (%s): switch to the file's patient, or keep %s with the mismatch acknowledged",
			id, strings.Join(mm.Differences, "; "), id)
	}
	return nil
}

// auditKeptPatient records in the audit trail that a study was filed
// under a patient its tags contradict, with the clinician's
// acknowledgement (Measurement.KeepPatient); nothing otherwise.
func (s *Patients) auditKeptPatient(ctx context.Context, m *Measurement, e repo.HistoryEntry) error {
	if m == nil || m.KeepPatient == "" || m.DICOM == nil {
		return nil
	}
	kept := m.KeepPatient
	plain := *m
	plain.KeepPatient = ""
	mm := StudyMismatch(&plain, repo.Patient{ID: kept})
	if mm == nil {
		return nil
	}
	ev := repo.AuditEvent{Time: e.Time, PatientID: kept, Action: "patient_mismatch_kept", Customer: DesktopCustomer, Entry: e.Seq,
		Detail: "filed under " + kept.String() + " with the mismatch acknowledged: " + strings.Join(mm.Differences, "; ")}
	if _, err := s.repos.Audit.Append(ctx, ev); err != nil {
		return fmt.Errorf("audit the kept patient: %w", err)
	}
	return nil
}
