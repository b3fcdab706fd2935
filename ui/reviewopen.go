package ui

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2/dialog"

	"vetlens/app"
)

// radiographExts are the files the Open dialog lists as radiographs:
// JPEG, PNG and DICOM by extension, and files without one ("", as X-ray
// consoles and DICOM receivers often name DICOM files; the file is told
// by its content).
var radiographExts = []string{".jpg", ".jpeg", ".png", ".dcm", ".dicom", ""}

// chooseFile shows the file-open dialog (needs Options.Window).
func (r *review) chooseFile() {
	if r.u.opts.Window == nil {
		return
	}
	r.u.newFilePicker("Open a radiograph", pickOpen, radiographExts, "", func(path string) {
		if err := r.u.OpenFile(path); err != nil {
			dialog.ShowError(err, r.u.opts.Window)
		}
	}).Show()
}

// OpenFile reads a radiograph (JPEG, PNG or DICOM, told by content; a
// photograph of a screen is corrected first) and measures it in the
// background for the patient in the patient field; the Review tab shows
// the result when it is done. Whose study a DICOM file is follows
// app.RouteFilePatient (routeFilePatient): with the field empty or
// naming the file's patient, the file's patient, whose record its tags
// create or complete; where its tags contradict the loaded patient,
// Review asks. Errors reading the file or in the patient field are
// returned at once.
func (u *UI) OpenFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("open radiograph: %w", err)
	}
	if u.svc.Cardiac.Engine() == nil {
		return fmt.Errorf("open radiograph: %w", app.ErrCardiacUnavailable)
	}
	patient, err := u.patientID()
	if err != nil {
		return fmt.Errorf("open radiograph: %w", err)
	}
	r := u.review
	r.file.SetText(filepath.Base(path))
	r.status.SetText("Measuring...")
	r.open.Disable()
	var m *app.Measurement
	u.background(func(ctx context.Context) {
		m, err = u.svc.Cardiac.MeasureDesktop(ctx, patient, b)
	}, func() {
		r.open.Enable()
		if err != nil {
			r.status.SetText("Measurement failed: " + err.Error())
			return
		}
		r.show(m)
		u.routeFilePatient(m)
	})
	return nil
}

// ShowMeasurement puts a measurement (from a file or a completed capture
// session) on the Review tab and selects it.
func (u *UI) ShowMeasurement(m *app.Measurement, source string) {
	u.review.file.SetText(source)
	u.review.show(m)
	u.SelectTab("Review")
}

// show displays a measurement: a fresh model measurement, or one
// reopened from the history (m.Base), with the landmarks and kind it was
// saved with.
func (r *review) show(m *app.Measurement) {
	res := m.Result
	r.m, r.kind, r.history, r.savedAt, r.savedAs, r.moved, r.confirmed = m, app.MeasurementModel, nil, time.Time{}, "", false, app.Settled{}
	if m.Base != nil {
		r.kind = m.Base.Kind
	}
	r.baseKind = r.kind
	r.view.SetImage(m.Image, res.Landmarks, m.HasModelLandmarks())
	text := res.Code.Description() + "."
	if res.Guard != app.GuardNone {
		text = strings.TrimSuffix(text, ".") + ": " + res.Guard.Description() + "."
		if res.GuardDetail != "" {
			text = strings.TrimSuffix(text, ".") + " (" + res.GuardDetail + ")."
		}
	}
	if res.PopDetected && res.Code != app.CodePoPFailed {
		text += " A photograph of a screen: the perspective was corrected before measuring."
	}
	if res.LevelledDeg != 0 {
		text += fmt.Sprintf(" The spine was tilted about %.0f degrees: the landmarks were placed on the image turned level.", math.Abs(res.LevelledDeg))
	}
	if b := m.Base; b != nil {
		text = fmt.Sprintf("Reopened the measurement of %s (%s). Correct the landmarks and save: the earlier version is kept, linked to the correction.",
			b.Time.Local().Format("2006-01-02 15:04"), b.Kind)
		r.savedAs = r.saveKey() // nothing to save until it is corrected
		r.savedAt = b.Time
	}
	r.modelText = text
	r.status.SetText("")
	r.dicom.SetText(dicomText(m.DICOM))
	r.confirm.SetChecked(false)
	if res.Rejected {
		r.confirm.Show()
	} else {
		r.confirm.Hide()
	}
	r.update()
}

// dicomText is the patient and study a DICOM file names, one line each
// (empty for JPEG and PNG).
func dicomText(d *app.DICOMImage) string {
	if d == nil {
		return ""
	}
	t := d.Tags
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, ", ")
	}
	sex := map[string]string{"M": "male", "F": "female", "O": "sex unknown"}[t.Sex]
	if sex != "" && t.Neutered == "ALTERED" {
		sex += " (neutered)"
	}
	born, weight := "", ""
	if !t.BirthDate.IsZero() {
		born = "born " + t.BirthDate.Format("2006-01-02")
	}
	if t.WeightKg > 0 {
		weight = fmt.Sprintf("%.1f kg", t.WeightKg)
	}
	owner := ""
	if t.Owner != "" || t.OwnerOrganization != "" {
		owner = "owner " + join(t.Owner, t.OwnerOrganization)
	}
	lines := []string{"DICOM patient: " + join(t.Name, "ID "+t.PatientID, t.SpeciesDescription, t.Breed, sex, born, weight, owner)}
	study := join(t.Modality, t.StudyDescription, t.BodyPart)
	if !t.StudyDate.IsZero() {
		study = join(study, t.StudyDate.Format("2006-01-02"))
	}
	if d.PixelSpacingMM[0] > 0 {
		study = join(study, fmt.Sprintf("pixel %.3g x %.3g mm", d.PixelSpacingMM[0], d.PixelSpacingMM[1]))
	}
	if d.Frames > 1 {
		study = join(study, fmt.Sprintf("frame 1 of %d", d.Frames))
	}
	if study != "" {
		lines = append(lines, "Study: "+study)
	}
	return strings.Join(lines, "\n")
}
