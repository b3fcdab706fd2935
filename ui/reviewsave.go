package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2/dialog"

	"vetlens/app"
)

// saveToHistory records the measurement on screen for the patient field's
// patient (SaveMeasurement).
func (r *review) saveToHistory() {
	if err := r.u.SaveReview(); err != nil {
		r.status.SetText("Not saved: " + err.Error())
	}
}

// saveRequest is what the Review tab would save for the patient field's
// patient; the error is the field's (u.patientID).
func (u *UI) saveRequest() (app.SaveRequest, error) {
	r := u.review
	id, err := u.patientID()
	return app.SaveRequest{PatientID: id, Measurement: r.m, Landmarks: r.clinicianLandmarks(), Kind: r.kind, ConfirmedRadiograph: r.confirm.Checked,
		Confirmed: r.confirmed}, err
}

// SaveReview saves the Review tab's measurement (model, edited or placed
// by hand) to the history of the patient in the patient field, once: a
// second press without a change saves nothing. A measurement reopened
// from the history is saved as a correction that supersedes it.
func (u *UI) SaveReview() error {
	r := u.review
	if r.kind.Clinician() && !r.view.Complete() {
		return fmt.Errorf("save to patient history: place all %d landmarks first (%d placed)", app.NumLandmarks, r.view.Placed())
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	req, err := u.saveRequest()
	if err != nil {
		return fmt.Errorf("save to patient history: %w", err)
	}
	saved, err := u.svc.Patients.SaveMeasurement(ctx, req)
	if err != nil {
		return fmt.Errorf("save to patient history: %w", err)
	}
	e := saved.Entry
	r.savedAt, r.savedAs = e.Time, r.saveKey()
	u.setPref(PrefLastPatient, u.PatientID())
	if saved.Repeat {
		r.status.SetText(fmt.Sprintf("Already in the history of %s (saved %s): nothing new to save.", u.PatientID(), e.Time.Local().Format("2006-01-02 15:04")))
		r.update()
		return nil
	}
	what := "model values"
	switch app.EntryKind(e) {
	case app.MeasurementEdited:
		what = "edited values (model values kept beside them)"
	case app.MeasurementManual:
		what = "landmarks placed by hand (manual)"
	}
	text := fmt.Sprintf("Saved to the history of %s: VHS %s, %s.", u.PatientID(), fmtValue(e.VHS), what)
	if base := saved.CorrectionBase(req.PatientID); base != nil {
		text += " The earlier version is kept, marked as corrected."
		// A further correction corrects this version: the chain stays linked.
		r.m.Base = base
	}
	r.status.SetText(text)
	r.update()
	u.recordsChanged()
	u.reportToPACS()
	return nil
}

// chooseReportFile asks where to write the PDF report.
func (r *review) chooseReportFile() {
	if r.u.opts.Window == nil {
		return
	}
	name := "vhs-report"
	if id := r.u.PatientID(); id != "" {
		name += "-" + strings.Map(func(c rune) rune {
			if c == '/' || c == '\\' || c == ':' {
				return '_'
			}
			return c
		}, id)
	}
	name += "-" + time.Now().Format("2006-01-02") + ".pdf"
	r.u.newFilePicker("Export the PDF report", pickSave, []string{".pdf"}, name, func(path string) {
		if err := r.u.ExportReport(path); err != nil {
			dialog.ShowError(err, r.u.opts.Window)
		}
	}).Show()
}
