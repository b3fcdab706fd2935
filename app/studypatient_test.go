package app

import (
	"context"
	"image"
	"strings"
	"testing"
	"time"

	"vetlens/app/repo"
)

// dicomMeasurement is a code-1 measurement of a DICOM file whose tags
// name tags.
func dicomMeasurement(tags DICOMTags) *Measurement {
	res, _ := landmarkResult()
	return &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1", DICOM: &DICOMImage{Tags: tags}}
}

func TestRouteFilePatient(t *testing.T) {
	rex := DICOMTags{PatientID: "P-0042", AnimalName: "Rex", SpeciesDescription: "Canine"}
	noID := DICOMTags{AnimalName: "Rex", SpeciesDescription: "Canine"}
	bella := repo.Patient{ID: "Bella-1", Name: "Bella", Species: "cat"}
	res, _ := landmarkResult()
	jpeg := &Measurement{Result: res}
	kept := dicomMeasurement(rex)
	kept.KeepPatient = "Bella-1"
	keptOther := dicomMeasurement(rex)
	keptOther.KeepPatient = "Milo-7"
	for _, tc := range []struct {
		name   string
		loaded repo.Patient
		m      *Measurement
		want   FileRoute
		diff   string
	}{
		{"no patient loaded: the file's", repo.Patient{}, dicomMeasurement(rex), RouteFile, ""},
		{"the file's patient loaded", repo.Patient{ID: "P-0042"}, dicomMeasurement(rex), RouteFile, ""},
		{"another patient loaded: ask", bella, dicomMeasurement(rex), RouteAsk, `patient ID: loaded "Bella-1", file "P-0042"`},
		{"another id, no record: ask", repo.Patient{ID: "Bella-1"}, dicomMeasurement(rex), RouteAsk, "patient ID"},
		{"kept with the mismatch acknowledged", bella, kept, RouteKeep, ""},
		{"acknowledged for another patient: ask again", bella, keptOther, RouteAsk, "patient ID"},
		{"no id in the file, name and species differ: ask", bella, dicomMeasurement(noID), RouteAsk, `name: loaded "Bella", file "Rex"; species: loaded cat, file dog`},
		{"no id in the file, same animal", repo.Patient{ID: "R-1", Name: "rex", Species: "dog"}, dicomMeasurement(noID), RouteKeep, ""},
		{"no id in the file, record without details", repo.Patient{ID: "R-1"}, dicomMeasurement(noID), RouteKeep, ""},
		{"a JPEG", bella, jpeg, RouteKeep, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, mm := RouteFilePatient(tc.loaded, tc.m)
			if got != tc.want {
				t.Fatalf("route %d, want %d (%+v)", got, tc.want, mm)
			}
			if (mm != nil) != (tc.want == RouteAsk) {
				t.Fatalf("mismatch %+v with route %d", mm, got)
			}
			if mm != nil && !strings.Contains(strings.Join(mm.Differences, "; "), tc.diff) {
				t.Errorf("differences %q, want %q", mm.Differences, tc.diff)
			}
			if mm != nil && !strings.Contains(mm.Question(), tc.loaded.ID.String()) {
				t.Errorf("question %q does not name the loaded patient", mm.Question())
			}
		})
	}
}

// TestSaveRefusesAContradictedPatient: a DICOM naming P-0042 is not
// saved, nor reported, under Bella-1 until the clinician keeps Bella-1
// with the mismatch acknowledged; the save is then audited as such. Under
// its own patient it saves at once.
func TestSaveRefusesAContradictedPatient(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	if _, err := s.Patients.SavePatient(ctx, repo.Patient{ID: "Bella-1", Name: "Bella", Species: "cat"}); err != nil {
		t.Fatal(err)
	}
	m := dicomMeasurement(DICOMTags{PatientID: "P-0042", AnimalName: "Rex", SpeciesDescription: "Canine"})
	_, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella-1", Measurement: m})
	if KindOf(err) != KindInvalid || !strings.Contains(err.Error(), "P-0042") {
		t.Fatalf("saved under the wrong patient: %v", err)
	}
	if rec, err := s.Patients.Patient(ctx, "Bella-1"); err != nil || len(rec.Cardiac) != 0 {
		t.Fatalf("history %+v, %v", rec, err)
	}
	if _, err := DesktopReport(SaveRequest{PatientID: "Bella-1", Measurement: m}, time.Now(), ReportDetails{Patient: repo.Patient{ID: "Bella-1"}}); KindOf(err) != KindInvalid {
		t.Fatalf("report under the wrong patient: %v", err)
	}
	m.KeepPatient = "Milo-7" // acknowledged for someone else
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella-1", Measurement: m}); KindOf(err) != KindInvalid {
		t.Fatalf("an acknowledgement for another patient was taken: %v", err)
	}
	m.KeepPatient = "Bella-1"
	saved, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella-1", Measurement: m})
	if err != nil {
		t.Fatal(err)
	}
	trail, err := s.Patients.AuditTrail(ctx, "Bella-1")
	if err != nil {
		t.Fatal(err)
	}
	last := trail[len(trail)-1]
	if last.Action != "patient_mismatch_kept" || last.Entry != saved.Entry.Seq || !strings.Contains(last.Detail, "P-0042") {
		t.Errorf("audit %+v", last)
	}
	own := dicomMeasurement(DICOMTags{PatientID: "P-0042"})
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "P-0042", Measurement: own}); err != nil {
		t.Errorf("own patient: %v", err)
	}
}
