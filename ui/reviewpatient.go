package ui

import (
	"fmt"
	"strings"

	"vetlens/app"
)

// PatientQuestion is the question Review asks while a file's patient
// tags contradict the loaded patient (showMismatch), "" while it asks
// none (for the Xvfb run).
func (u *UI) PatientQuestion() string {
	if !u.review.mismatch.Visible() {
		return ""
	}
	return u.review.mismatchText.Text
}

// StartHere is the first-start note above the tabs, "" while it is
// hidden (for the Xvfb run).
func (u *UI) StartHere() string {
	if !u.start.Visible() {
		return ""
	}
	return u.start.Text
}

// ReviewStatus is the Review tab's status line and the DICOM patient and
// study text under the file name (for the Xvfb run).
func (u *UI) ReviewStatus() (status, dicom string) { return u.review.status.Text, u.review.dicom.Text }

// routeFilePatient follows app.RouteFilePatient for a measured file
// (opened, dropped, or taken from the watched import folder): the file's
// patient becomes the current one (its record created or completed from
// the tags) when none is loaded or the loaded one is the file's; where
// the tags contradict the loaded patient, Review asks (showMismatch).
func (u *UI) routeFilePatient(m *app.Measurement) {
	route, _ := app.RouteFilePatient(u.Patient(), m)
	if route == app.RouteFile {
		if _, err := u.PrefillPatient(m.DICOM.Tags.PatientTags()); err != nil {
			u.review.status.SetText(u.review.status.Text + " " + err.Error())
		}
	}
	u.review.update()
}

// showMismatch shows or hides the question whose study the file on
// Review is (app.StudyMismatch against the patient bar's record) and
// reports whether it is asked.
func (r *review) showMismatch() bool {
	mm := app.StudyMismatch(r.m, r.u.Patient())
	if mm == nil {
		r.mismatch.Hide()
		return false
	}
	r.mismatchText.SetText(mm.Question())
	if mm.File.ID != "" {
		r.switchPatient.SetText("Switch to the file's patient " + mm.File.ID.String())
		r.switchPatient.Enable()
	} else {
		r.switchPatient.SetText("Switch to the file's patient (the file has no patient ID: type it above)")
		r.switchPatient.Disable()
	}
	r.keepPatient.SetText("Keep " + mm.PatientID.String() + " (I checked: this study is " + mm.PatientID.String() + "'s)")
	r.mismatch.Show()
	return true
}

// SwitchToFilePatient answers the mismatch question with the file's
// patient: its record is found or created from the file's tags
// (PrefillPatient) and becomes the current patient.
func (u *UI) SwitchToFilePatient() error {
	r := u.review
	if r.m == nil || r.m.DICOM == nil || r.m.DICOM.Tags.PatientID == "" {
		return fmt.Errorf("switch patient: the file names no patient ID")
	}
	r.m.KeepPatient = ""
	u.bar.carry = true // the work on Review is the file's patient's
	_, err := u.PrefillPatient(r.m.DICOM.Tags.PatientTags())
	u.bar.carry = false
	if err != nil {
		return fmt.Errorf("switch patient: %w", err)
	}
	r.status.SetText("Switched to the file's patient " + u.PatientID() + ".")
	r.update()
	return nil
}

// KeepLoadedPatient answers the mismatch question with the loaded
// patient: the study is filed under it with the mismatch acknowledged
// (app.Measurement.KeepPatient; the save is audited as such). Choosing
// another patient afterwards asks again.
func (u *UI) KeepLoadedPatient() error {
	r := u.review
	mm := app.StudyMismatch(r.m, u.Patient())
	if mm == nil {
		return fmt.Errorf("keep patient: nothing to acknowledge")
	}
	r.m.KeepPatient = mm.PatientID
	r.status.SetText("Kept patient " + mm.PatientID.String() + " although the file says otherwise (" + strings.Join(mm.Differences, "; ") + "); saving records the acknowledgement in the audit trail.")
	r.update()
	return nil
}
