package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"

	"vetlens/internal/dicomtest"
)

// TestOpenDICOM opens a MONOCHROME1 16-bit DICOM with the patient field
// empty: it is measured as its source JPEG, the field takes the file's
// Patient ID and the Review tab shows the file's patient and study. A
// DICOM dropped under a name without extension opens too.
func TestOpenDICOM(t *testing.T) {
	set := dicomtest.Build(t)
	u, _, done := newTestUI(t, true)
	u.SelectTab("Review")
	if err := u.OpenFile(set.SourceJPEG); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	src := u.review.m.Result
	if src.VHS == nil {
		t.Fatalf("source not measured: %q", u.review.status.Text)
	}
	if err := u.OpenFile(set.Get(t, "mono1-16bit").Path); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	r := u.review
	if r.m.DICOM == nil || r.m.Result.VHS == nil || *r.m.Result.VHS != *src.VHS {
		t.Fatalf("DICOM %+v, VHS %v, source %v", r.m.DICOM, r.m.Result.VHS, *src.VHS)
	}
	if u.PatientID() != dicomtest.PatientID {
		t.Errorf("patient field %q, want the file's %q", u.PatientID(), dicomtest.PatientID)
	}
	for _, want := range []string{"Rex Smith", "ID " + dicomtest.PatientID, "Canine", dicomtest.Breed, "male (neutered)", "born 2019-04-01", "9.5 kg", "owner Anna Smith", "DX", "2026-11-20", "pixel 0.1 x 0.12 mm"} {
		if !strings.Contains(r.dicom.Text, want) {
			t.Errorf("DICOM text %q lacks %q", r.dicom.Text, want)
		}
	}

	// Dropped under a console's extensionless name, for another patient.
	u.SetPatientID("Bella")
	b, err := os.ReadFile(set.Get(t, "jpeg-baseline").Path)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "IM000123")
	if err := os.WriteFile(named, b, 0o644); err != nil {
		t.Fatal(err)
	}
	u.SelectTab("Capture")
	u.Dropped([]fyne.URI{storage.NewFileURI(named)})
	wait(t, done)
	if u.tabs.Selected().Text != "Review" || u.review.m.DICOM == nil || u.review.m.PatientID != "Bella" || u.PatientID() != "Bella" {
		t.Fatalf("dropped DICOM: tab %q, DICOM %v, patient %q", u.tabs.Selected().Text, u.review.m.DICOM != nil, u.review.m.PatientID)
	}
	// An unsupported transfer syntax says which.
	rle := set.Get(t, "rle")
	if err := u.OpenFile(rle.Path); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	if !strings.Contains(u.review.status.Text, rle.ErrName) {
		t.Errorf("RLE status %q does not name %s", u.review.status.Text, rle.ErrName)
	}
}

func TestRadiographFilter(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"chest.dcm", true}, {"CHEST.DCM", true}, {"study.dicom", true}, {"IM000123", true}, {"x.JPG", true}, {"y.png", true},
		{"exam.avi", false}, {"notes.txt", false},
	} {
		if got := (radiographFilter{}).Matches(storage.NewFileURI("/data/" + tc.name)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
