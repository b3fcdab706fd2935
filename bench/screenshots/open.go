package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"vetlens/ui"
)

// screenshotOpen is the screenshot run's last step with --open: the file
// (a DICOM in make test-gui) is opened with the patient field empty and
// measured; the run prints the result, the patient the field took and the
// DICOM patient line and the record its tags created, and shoots the
// Review tab as NN-open.png. A measurement that fails, or a DICOM whose
// patient does not reach the field and its record, fails the run.
func screenshotOpen(ctx context.Context, u *ui.UI, w fyne.Window, path, dir string, n int, stdout io.Writer) error {
	var err error
	before := u.ReviewMeasurement()
	fyne.DoAndWait(func() {
		u.SetPatientID("")
		u.SelectTab("Review")
		err = u.OpenFile(path)
	})
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var status string
		m := before
		fyne.DoAndWait(func() { m = u.ReviewMeasurement(); status, _ = u.ReviewStatus() })
		if strings.HasPrefix(status, "Measurement failed") {
			return fmt.Errorf("open %s: %s", path, status)
		}
		if m != before && m != nil {
			var patient, dicom string
			fyne.DoAndWait(func() { patient = u.PatientID(); _, dicom = u.ReviewStatus() })
			fmt.Fprintf(stdout, "open: %s: result %d VHS %s, patient field %q\n", filepath.Base(path), m.Result.Code, fmtPtr(m.Result.VHS), patient)
			if m.DICOM != nil {
				fmt.Fprintf(stdout, "open: %s\n", strings.ReplaceAll(dicom, "\n", "; "))
				if patient == "" || patient != m.DICOM.Tags.PatientID {
					return fmt.Errorf("open %s: the DICOM's patient %q did not reach the patient field (%q)", path, m.DICOM.Tags.PatientID, patient)
				}
				// Its record was created from the tags.
				var rec struct{ name, species, breed, owner string }
				fyne.DoAndWait(func() {
					p := u.Patient()
					rec.name, rec.species, rec.breed, rec.owner = p.Name, p.Species, p.Breed, p.Owner
				})
				fmt.Fprintf(stdout, "open: record %s: %s, %s, %s, owner %s\n", patient, rec.name, rec.species, rec.breed, rec.owner)
				if rec.name != m.DICOM.Tags.AnimalName || rec.owner != m.DICOM.Tags.Owner {
					return fmt.Errorf("open %s: the record (%+v) was not prefilled from the tags", path, rec)
				}
			}
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("open %s: not measured in time", path)
		}
		pause(ctx, 200*time.Millisecond)
	}
	pause(ctx, 700*time.Millisecond)
	return shoot(w, filepath.Join(dir, fmt.Sprintf("%02d-open.png", n)))
}

// screenshotMismatch opens path (the DICOM of screenshotOpen) again while
// the demo dog is the current patient: Review must ask whose study it is
// (the file's patient tags contradict the loaded patient) and the run
// shoots the question as NN-mismatch.png. No question fails the run.
func screenshotMismatch(ctx context.Context, u *ui.UI, w fyne.Window, path, dir string, n int, stdout io.Writer) error {
	var err error
	before := u.ReviewMeasurement()
	fyne.DoAndWait(func() {
		u.SetPatientID(screenshotDogID)
		u.SelectTab("Review")
		err = u.OpenFile(path)
	})
	if err != nil {
		return fmt.Errorf("open %s for %s: %w", path, screenshotDog.PatientID, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var q string
		m := before
		fyne.DoAndWait(func() { m, q = u.ReviewMeasurement(), u.PatientQuestion() })
		if m != before && m != nil {
			if q == "" {
				return fmt.Errorf("open %s for %s: measured without asking whose study it is", path, screenshotDog.PatientID)
			}
			fmt.Fprintf(stdout, "mismatch: %s\n", q)
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("open %s for %s: not measured in time", path, screenshotDog.PatientID)
		}
		pause(ctx, 200*time.Millisecond)
	}
	pause(ctx, 700*time.Millisecond)
	return shoot(w, filepath.Join(dir, fmt.Sprintf("%02d-mismatch.png", n)))
}

// screenshotOutbox keeps the mismatched study under the demo dog (Keep),
// saves it, sets a PACS outbox and sends the dog's reports from the
// Patients tab: the outbox must then hold a DICOM report, and the run
// shoots the Server tab's PACS settings as NN-outbox.png.
func screenshotOutbox(ctx context.Context, u *ui.UI, w fyne.Window, dir string, n int, stdout io.Writer) error {
	outbox, err := os.MkdirTemp("", "vetlens-outbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(outbox)
	var status string
	fyne.DoAndWait(func() {
		if err = u.KeepLoadedPatient(); err != nil {
			return
		}
		if err = u.SaveReview(); err != nil {
			return
		}
		fyne.CurrentApp().Preferences().SetString(ui.PrefPACSOutbox, outbox)
		u.OpenPatient(screenshotDogID)
		u.SendPatientReports(screenshotDogID)
		status = u.ShowPACSSettings()
	})
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.dcm"))
	if len(files) == 0 {
		return fmt.Errorf("outbox: no DICOM report written (%s)", status)
	}
	fmt.Fprintf(stdout, "outbox: %s (%d file(s))\n", status, len(files))
	pause(ctx, 700*time.Millisecond)
	return shoot(w, filepath.Join(dir, fmt.Sprintf("%02d-outbox.png", n)))
}
