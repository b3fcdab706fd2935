package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/importq"
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
	// The record was created from the tags.
	p := u.Patient()
	if p.ID != dicomtest.PatientID || p.Name != "Rex" || p.Species != "dog" || p.Breed == "" || p.Sex != app.SexMaleNeutered ||
		p.BirthDate != "2019-04-01" || p.WeightKg == nil || *p.WeightKg != 9.5 || p.Owner != "Anna Smith" {
		t.Errorf("record from the tags: %+v", p)
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
	if !u.review.mismatch.Visible() {
		t.Fatal("a DICOM of another patient opened without asking")
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

// TestOpenDialogListsDICOM: the Open dialog accepts DICOM names (any
// case) and files without an extension, not other kinds.
func TestOpenDialogListsDICOM(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	p := u.newFilePicker("Open a radiograph", pickOpen, radiographExts, "", func(string) {})
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"chest.dcm", true}, {"CHEST.DCM", true}, {"study.dicom", true}, {"IM000123", true}, {"x.JPG", true}, {"y.png", true},
		{"exam.avi", false}, {"notes.txt", false},
	} {
		if got := p.accepts(tc.name); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestImportFolder watches a folder from the Import tab: a DICOM dropped
// into it is measured and listed, the folder is saved as the setting, a
// tap on the row opens it on Review with its patient, and a folder that
// does not exist is refused.
func TestImportFolder(t *testing.T) {
	set := dicomtest.Build(t)
	u, _, _ := newTestUI(t, true)
	t.Cleanup(u.StopImport)
	if err := u.WatchImportFolder(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing folder was accepted")
	}
	dir := t.TempDir()
	if err := u.WatchImportFolder(dir); err != nil {
		t.Fatal(err)
	}
	if got := u.pref(PrefImportDir, ""); got != dir {
		t.Errorf("setting %q, want %q", got, dir)
	}
	b, err := os.ReadFile(set.Get(t, "mono1-16bit").Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CR0001"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var items []importq.Item
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fyne.DoAndWait(func() { items = u.ImportItems() })
		if len(items) == 1 && items[0].State == importq.Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("import list %+v, status %q", items, u.imports.status.Text)
		}
	}
	row := importRow(items[0])
	if !strings.Contains(row, "CR0001: measured") || !strings.Contains(row, "patient "+dicomtest.PatientID) || !strings.Contains(row, "VHS ") {
		t.Errorf("row %q", row)
	}
	if !strings.Contains(u.imports.status.Text, "Watching "+dir) {
		t.Errorf("status %q", u.imports.status.Text)
	}
	// Tapped while another patient is loaded: the same rule as Open asks
	// whose study it is, and switching takes the file's patient.
	u.SetPatientID("Bella")
	u.imports.list.Select(0)
	if u.tabs.Selected().Text != "Review" || u.review.m != items[0].Measurement || u.PatientID() != "Bella" {
		t.Fatalf("tap: tab %q, patient %q", u.tabs.Selected().Text, u.PatientID())
	}
	if !u.review.mismatch.Visible() || !u.review.save.Disabled() {
		t.Fatalf("imported file for another patient: question shown %v, save off %v", u.review.mismatch.Visible(), u.review.save.Disabled())
	}
	test.Tap(u.review.switchPatient)
	if u.PatientID() != dicomtest.PatientID || u.review.mismatch.Visible() {
		t.Fatalf("switch: patient %q, question shown %v", u.PatientID(), u.review.mismatch.Visible())
	}
	if !strings.Contains(u.review.dicom.Text, "Rex Smith") {
		t.Errorf("Review DICOM text %q", u.review.dicom.Text)
	}
	if err := u.WatchImportFolder(""); err != nil || u.pref(PrefImportDir, "x") != "" || !strings.Contains(u.imports.status.Text, "Not watching") {
		t.Errorf("stop: %v, setting %q, status %q", err, u.pref(PrefImportDir, "x"), u.imports.status.Text)
	}
}

// TestMismatchedDICOMAsks: a DICOM whose Patient ID is not the loaded
// patient's is measured, but Review asks whose study it is before
// anything is saved or reported; saving meanwhile is refused and files
// nothing. Keeping the loaded patient files it there with the
// acknowledgement in the audit trail (and a change of patient asks
// again); switching finds or creates the file's patient and files it
// there.
func TestMismatchedDICOMAsks(t *testing.T) {
	set := dicomtest.Build(t)
	file := set.Get(t, "mono1-16bit").Path
	for _, tc := range []struct {
		name   string
		answer func(u *UI) *widget.Button
		filed  string // patient whose history gets the study
		other  string // patient whose history stays empty
		audit  string // last audit action of filed
	}{
		{"keep the loaded patient", func(u *UI) *widget.Button { return u.review.keepPatient }, "Bella", dicomtest.PatientID, "patient_mismatch_kept"},
		{"switch to the file's patient", func(u *UI) *widget.Button { return u.review.switchPatient }, dicomtest.PatientID, "Bella", "patient_created"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _, done := newTestUI(t, true)
			u.SetPatientID("Bella")
			if err := u.SavePatient(); err != nil {
				t.Fatal(err)
			}
			u.SelectTab("Review")
			if err := u.OpenFile(file); err != nil {
				t.Fatal(err)
			}
			wait(t, done)
			r := u.review
			if r.m == nil || r.m.Result.VHS == nil {
				t.Fatalf("not measured: %q", r.status.Text)
			}
			if u.PatientID() != "Bella" || !r.mismatch.Visible() || !strings.Contains(r.mismatchText.Text, dicomtest.PatientID) ||
				!strings.Contains(r.mismatchText.Text, "Bella") {
				t.Fatalf("patient %q, question shown %v: %q", u.PatientID(), r.mismatch.Visible(), r.mismatchText.Text)
			}
			if !r.save.Disabled() || !r.export.Disabled() {
				t.Fatal("Save or Export on while the question is open")
			}
			if strings.Contains(r.vhs.Text, "Heart size") || !strings.Contains(r.vhs.Text, "no verdict") || r.reading.Text != "" {
				t.Fatalf("a verdict against the loaded patient's range while asking: %q, %q", r.vhs.Text, r.reading.Text)
			}
			if err := u.SaveReview(); err == nil {
				t.Fatal("saved under a patient the file contradicts")
			}
			test.Tap(tc.answer(u))
			if r.mismatch.Visible() || r.save.Disabled() || u.PatientID() != tc.filed || !strings.HasPrefix(r.vhs.Text, "Heart size: ") {
				t.Fatalf("answered: question shown %v, save off %v, patient %q, %q", r.mismatch.Visible(), r.save.Disabled(), u.PatientID(), r.vhs.Text)
			}
			if tc.filed == "Bella" {
				// Another patient chosen afterwards is asked about again.
				u.SetPatientID("Milo")
				if !r.mismatch.Visible() || !r.save.Disabled() {
					t.Fatal("a change of patient after keeping Bella did not ask again")
				}
				u.SetPatientID("Bella")
			}
			test.Tap(r.save)
			ctx := context.Background()
			rec, err := u.svc.Patients.Patient(ctx, app.PatientID(tc.filed))
			if err != nil || len(rec.Cardiac) != 1 {
				t.Fatalf("%s: %v entries, %v; status %q", tc.filed, rec, err, r.status.Text)
			}
			if got := rec.Audit[len(rec.Audit)-1].Action; got != tc.audit {
				t.Errorf("last audit of %s: %q, want %q", tc.filed, got, tc.audit)
			}
			if other, err := u.svc.Patients.Patient(ctx, app.PatientID(tc.other)); err != nil || len(other.Cardiac) != 0 {
				t.Errorf("%s got the study: %+v, %v", tc.other, other, err)
			}
		})
	}
}

// fakePACS records the files sent, or refuses them with err.
type fakePACS struct {
	err   error
	files []string
}

func (f *fakePACS) Send(_ context.Context, _ app.PACSNode, path string) error {
	if f.err != nil {
		return f.err
	}
	f.files = append(f.files, path)
	return nil
}

// TestReportGoesBackToThePACS: saving a DICOM study writes its report
// into the PACS outbox and sends it to the node of the settings; a node
// that refuses leaves the report in the outbox and says so.
func TestReportGoesBackToThePACS(t *testing.T) {
	set := dicomtest.Build(t)
	for _, tc := range []struct {
		name     string
		err      error
		sent     int
		left     int
		inStatus string
	}{
		{"sent", nil, 2, 0, "Sent 2 file(s) to PACS@127.0.0.1:11112"}, // the report and its image
		{"refused", errors.New("association rejected"), 0, 2, "stay in the outbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sender := &fakePACS{err: tc.err}
			u, _, done := newTestUIWith(t, true, nil, Options{PACS: sender})
			outbox := filepath.Join(t.TempDir(), "outbox")
			for k, v := range map[string]string{PrefPACSOutbox: outbox, PrefPACSAE: "PACS", PrefPACSHost: "127.0.0.1", PrefPACSPort: "11112"} {
				u.setPref(k, v)
			}
			u.SelectTab("Review")
			if err := u.OpenFile(set.Get(t, "mono1-16bit").Path); err != nil {
				t.Fatal(err)
			}
			wait(t, done)
			if err := u.SaveReview(); err != nil {
				t.Fatal(err)
			}
			wait(t, done) // the send runs in the background
			left, _ := filepath.Glob(filepath.Join(outbox, "*.dcm"))
			sent, _ := filepath.Glob(filepath.Join(outbox, app.OutboxSent, "*.dcm"))
			if len(sender.files) != tc.sent || len(sent) != tc.sent || len(left) != tc.left {
				t.Fatalf("sent %v, in sent/ %v, left %v", sender.files, sent, left)
			}
			if !strings.Contains(u.review.status.Text, "Report written to the PACS outbox") || !strings.Contains(u.review.status.Text, tc.inStatus) {
				t.Fatalf("status %q", u.review.status.Text)
			}
		})
	}
}

// TestPatientReportsToThePACS: from the Patients tab, the reports of the
// patient's DICOM studies go into the outbox and are sent.
func TestPatientReportsToThePACS(t *testing.T) {
	set := dicomtest.Build(t)
	sender := &fakePACS{}
	u, _, done := newTestUIWith(t, true, nil, Options{PACS: sender})
	u.SelectTab("Review")
	if err := u.OpenFile(set.Get(t, "mono1-16bit").Path); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	if err := u.SaveReview(); err != nil { // no outbox yet: nothing written
		t.Fatal(err)
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	for k, v := range map[string]string{PrefPACSOutbox: outbox, PrefPACSAE: "PACS", PrefPACSHost: "127.0.0.1", PrefPACSPort: "11112"} {
		u.setPref(k, v)
	}
	u.OpenPatient(dicomtest.PatientID)
	test.Tap(u.patients.toPACS)
	wait(t, done)
	if len(sender.files) != 2 || !strings.Contains(u.patients.status.Text, "2 file(s) written to the PACS outbox") {
		t.Fatalf("sent %v, status %q", sender.files, u.patients.status.Text)
	}
}
