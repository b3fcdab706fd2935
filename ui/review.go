package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
)

// review is the Review tab: one radiograph (rectified when it was a
// screen photo), its measurement, editable landmarks, hand placement,
// undo, save and report.
type review struct {
	u       *UI
	content fyne.CanvasObject

	view                           *LandmarkView
	file, vhs, vlas, reading, conf *widget.Label
	status, kindText, billing      *widget.Label
	dicom                          *widget.Label // a DICOM file's patient and study
	guide                          *widget.Label
	confirm                        *widget.Check
	open, save, export             *widget.Button
	hand, undo, reset              *widget.Button
	side                           *fyne.Container

	// m is the model's measurement on screen (for a hand placement, the
	// image and the model's result for it, whatever its code).
	m *app.Measurement
	// kind is how the values on screen were obtained: model, edited (the
	// model's landmarks moved) or manual (placed by hand).
	kind app.MeasurementKind
	// history holds the undo steps, oldest first.
	history []reviewStep
	// savedAt is when this measurement was last saved (zero: not saved).
	savedAt time.Time
}

// reviewStep is one undo step: the view's landmarks and the kind.
type reviewStep struct {
	state EditState
	kind  app.MeasurementKind
}

func newReview(u *UI) *review {
	r := &review{
		u: u, view: NewLandmarkView(), kind: app.MeasurementModel,
		file: newValueLabel("No radiograph open. Open a file here, or run a capture session."), vhs: newValueLabel("VHS: -"), vlas: newValueLabel("VLAS: -"),
		reading: newValueLabel(""), conf: newValueLabel(""), status: newValueLabel(""), kindText: newValueLabel(""), billing: newValueLabel(""),
		guide: newValueLabel(""), dicom: newValueLabel(""),
	}
	r.view.OnEdit = r.pushUndo
	r.view.OnChange = r.landmarksChanged
	r.view.OnUndo = r.undoStep
	r.open = widget.NewButton("Open radiograph...", r.chooseFile)
	r.save = widget.NewButton("Save to patient history", r.saveToHistory)
	r.export = widget.NewButton("Export PDF report...", r.chooseReportFile)
	r.confirm = widget.NewCheck("I confirm this image is a radiograph", func(bool) { r.update() })
	r.hand = widget.NewButton("Place landmarks by hand", r.startPlacement)
	r.undo = widget.NewButton("Undo", r.undoStep)
	r.reset = widget.NewButton("Reset to the model's points", r.resetToModel)
	r.confirm.Hide()
	for _, b := range []*widget.Button{r.save, r.export, r.hand, r.undo, r.reset} {
		b.Disable()
	}
	side := container.NewVBox(
		r.open, r.file, r.dicom, widget.NewSeparator(),
		r.vhs, r.vlas, r.reading, r.conf, r.kindText, r.status, r.billing,
		widget.NewSeparator(), r.guide, r.confirm, r.hand, r.undo, r.reset,
		widget.NewSeparator(), r.save, r.export,
	)
	r.side = side
	split := container.NewHSplit(r.view, container.NewVScroll(side))
	split.Offset = 0.7
	r.content = split
	if w := u.opts.Window; w != nil {
		// Ctrl+Z on the Review tab when no widget with its own undo has
		// the focus (the landmark view handles it itself when focused).
		w.Canvas().AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) {
			if u.tabs != nil && u.tabs.Selected() != nil && u.tabs.Selected().Text == "Review" {
				r.undoStep()
			}
		})
	}
	return r
}

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
// background for the patient in the patient field (for a DICOM file with
// the field empty, the file's Patient ID, which then fills the field); the
// Review tab shows the result when it is done. Errors reading the file or
// in the patient field are returned at once.
func (u *UI) OpenFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("open radiograph: %w", err)
	}
	if u.svc.Cardiac() == nil {
		return fmt.Errorf("open radiograph: %w", app.ErrCardiacUnavailable)
	}
	patient := u.PatientID()
	if err := app.CheckPatientID(patient); err != nil {
		return fmt.Errorf("open radiograph: %w", err)
	}
	r := u.review
	r.file.SetText(filepath.Base(path))
	r.status.SetText("Measuring...")
	r.open.Disable()
	var m *app.Measurement
	u.background(func(ctx context.Context) {
		m, err = u.svc.MeasureDesktop(ctx, patient, b)
	}, func() {
		r.open.Enable()
		if err != nil {
			r.status.SetText("Measurement failed: " + err.Error())
			return
		}
		if m.DICOM != nil && u.PatientID() == "" && m.PatientID != "" {
			u.SetPatientID(m.PatientID)
		}
		r.show(m)
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

// show displays a fresh model measurement.
func (r *review) show(m *app.Measurement) {
	res := m.Result
	r.m, r.kind, r.history, r.savedAt = m, app.MeasurementModel, nil, time.Time{}
	r.view.SetImage(m.Image, res.Landmarks, m.HasModelLandmarks())
	text := fmt.Sprintf("Result %d: %s", res.Code, res.Code.Description())
	if res.Guard != cardiac.GuardNone {
		text += ": " + res.Guard.Description()
	}
	if res.PopDetected && res.Code != cardiac.CodePoPFailed {
		text += " (photograph of a screen: perspective corrected before measuring)"
	}
	r.status.SetText(text)
	if res.Rejected {
		r.conf.SetText("")
	} else {
		r.conf.SetText(fmt.Sprintf("Model confidence: %s (ensemble spread %.4f)", res.Confidence, res.Spread))
	}
	r.billing.SetText(billingText(m.Billing))
	r.dicom.SetText(dicomText(m.DICOM))
	r.confirm.SetChecked(false)
	if res.Rejected {
		r.confirm.Show()
	} else {
		r.confirm.Hide()
	}
	r.update()
}

// placementStep is the instruction for placing landmark i by hand: its
// number in the click order, its name and where it belongs.
func placementStep(i int) string {
	where := [cardiac.NumLandmarks]string{
		cardiac.HeartTop:    "Carina (heart_top): where the trachea ends above the heart base; the top of the long axis.",
		cardiac.HeartBottom: "Apex (heart_bottom): the tip of the heart, the far end of the long axis from the carina.",
		cardiac.HeartRight:  "Cranial end of the short axis (heart_right): the cranial heart border on the widest short axis, perpendicular to the long axis.",
		cardiac.HeartLeft:   "Caudal end of the short axis (heart_left): the caudal heart border on that same line, perpendicular to the long axis.",
		cardiac.VLASPoint:   "VLAS: the caudal border of the left atrium where it meets the caudal vena cava.",
		cardiac.VertebraA:   "Vertebra A: midpoint of T4's cranial endplate.",
		cardiac.VertebraB:   "Vertebra B: midpoint of T9's caudal endplate (six vertebrae on from A).",
	}
	return fmt.Sprintf("%d/%d %s", i+1, cardiac.NumLandmarks, where[i])
}

// editKeys is the short help on moving landmarks.
const editKeys = "Drag a landmark, or tap it and use the arrow keys (1 pixel; Shift or Ctrl: 10). Undo: Ctrl+Z."

// update shows the values, the kind, the guide and the buttons for the
// current state: the model's values, or those computed from the
// clinician's landmarks once all 7 are set.
func (r *review) update() {
	if r.m == nil {
		return
	}
	res := r.m.Result
	v := app.Values{VHS: res.VHS, VLAS: res.VLAS, AxesPerpendicular: res.AxesPerpendicular}
	complete := r.view.Complete()
	switch {
	case r.kind == app.MeasurementModel:
		r.kindText.SetText("")
	case !complete:
		v = app.Values{}
		r.kindText.SetText(fmt.Sprintf("PLACING BY HAND: %d of %d landmarks placed; the values follow when all are placed.", r.view.Placed(), cardiac.NumLandmarks))
	default:
		v = app.EditedValues(r.view.Landmarks())
		text := "EDITED: landmarks moved by hand; values recomputed from the edited landmarks, model confidence no longer applies. Saving keeps the model's values beside these."
		if r.kind == app.MeasurementManual {
			text = "PLACED BY HAND: values computed from the clinician's landmarks; model confidence does not apply. Saved as a manual measurement (not metered)."
		}
		if !v.AxesPerpendicular {
			text += " The heart axes are not perpendicular."
		}
		r.kindText.SetText(text)
	}
	r.setValues(v.VHS, v.VLAS)

	rejectedOK := !res.Rejected || r.confirm.Checked
	switch {
	case r.view.Placing():
		r.guide.SetText(placementStep(r.view.NextLandmark()) + " Tap the image to place it.")
	case r.kind == app.MeasurementManual:
		r.guide.SetText("All 7 landmarks placed. " + editKeys)
	case res.Rejected && !r.confirm.Checked:
		r.guide.SetText("The model rejected this image as not a radiograph. If it is one, confirm below to measure it by hand.")
	case !r.m.HasModelLandmarks():
		r.guide.SetText("The model found no landmarks on this image. Place them by hand to measure it.")
	default:
		r.guide.SetText(editKeys + " Or place all 7 by hand.")
	}
	enable(r.hand, rejectedOK)
	enable(r.undo, len(r.history) > 0)
	enable(r.reset, r.m.HasModelLandmarks() && r.kind != app.MeasurementModel)
	if r.kind == app.MeasurementModel {
		enable(r.save, res.Code.HasVHS())
	} else {
		enable(r.save, complete && v.VHS != nil && rejectedOK)
	}
	enable(r.export, r.kind == app.MeasurementModel || complete)
	// Wrapped labels change height with their text: lay the panel out again.
	r.side.Refresh()
}

func enable(b *widget.Button, on bool) {
	if on {
		b.Enable()
	} else {
		b.Disable()
	}
}

// pushUndo keeps the current state as an undo step (before a change).
func (r *review) pushUndo() {
	r.history = append(r.history, reviewStep{state: r.view.State(), kind: r.kind})
}

// landmarksChanged follows a placement, drag or nudge: moving the model's
// landmarks makes the measurement edited.
func (r *review) landmarksChanged() {
	if r.kind == app.MeasurementModel {
		r.kind = app.MeasurementEdited
	}
	r.update()
}

// startPlacement starts placing all 7 landmarks by hand (one undo step).
func (r *review) startPlacement() {
	if err := r.u.StartHandPlacement(); err != nil {
		r.status.SetText(err.Error())
	}
}

// StartHandPlacement clears the landmarks on the Review tab and starts
// placing all 7 by hand, in the guided order; the step's instruction is
// shown beside the image. A rejected image (result 6) must first be
// confirmed as a radiograph. Undo brings the previous landmarks back.
func (u *UI) StartHandPlacement() error {
	r := u.review
	if r.m == nil {
		return fmt.Errorf("place landmarks: nothing open on Review")
	}
	if r.m.Result.Rejected && !r.confirm.Checked {
		return fmt.Errorf("place landmarks: the model rejected this image; confirm it is a radiograph first")
	}
	r.pushUndo()
	r.kind = app.MeasurementManual
	r.view.StartPlacement()
	r.view.requestFocus()
	r.update()
	return nil
}

// undoStep undoes the last placement, move, nudge, start of hand
// placement or reset, and gives the landmark view the keyboard focus.
func (r *review) undoStep() {
	if len(r.history) == 0 {
		return
	}
	s := r.history[len(r.history)-1]
	r.history = r.history[:len(r.history)-1]
	r.view.Restore(s.state)
	r.kind = s.kind
	r.view.requestFocus() // the arrow keys keep working after the button
	r.update()
}

// resetToModel puts the model's landmarks back (one undo step) and gives
// the landmark view the keyboard focus.
func (r *review) resetToModel() {
	if !r.m.HasModelLandmarks() || r.kind == app.MeasurementModel {
		return
	}
	r.pushUndo()
	r.view.Restore(EditState{Landmarks: r.m.Result.Landmarks, Placed: cardiac.NumLandmarks})
	r.kind = app.MeasurementModel
	r.view.requestFocus()
	r.update()
}

// clinicianLandmarks are the landmarks in effect when they are the
// clinician's and complete; nil for the model's.
func (r *review) clinicianLandmarks() *cardiac.Landmarks {
	if !r.kind.Clinician() || !r.view.Complete() {
		return nil
	}
	lm := r.view.Landmarks()
	return &lm
}

// billingText says how the desktop measurement was metered.
func billingText(b app.Billing) string {
	switch b.Reason {
	case app.ReasonValid:
		return fmt.Sprintf("Metered: %s call, %s (%s tier, %d this month).", b.CallType, deref(b.Rate), b.Tier, deref(b.MonthlyUsage))
	case app.ReasonRecheck:
		return "Not metered: recheck of the same patient within 24 hours."
	case app.ReasonNoValid:
		return "Not metered: no valid VHS."
	case app.ReasonError:
		return "Metering could not be written; the measurement is free of charge."
	}
	return ""
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

func (r *review) setValues(vhs, vlas *float64) {
	r.vhs.SetText(valueLine("VHS", vhs, fmt.Sprintf("normal %.1f-%.1f", app.VHSNormalLow, app.VHSNormalHigh)))
	r.vlas.SetText(valueLine("VLAS", vlas, fmt.Sprintf("normal < %.1f", app.VLASNormalMax)))
	r.reading.SetText(app.Reading(vhs, vlas))
}

func valueLine(name string, v *float64, ref string) string {
	if v == nil {
		return name + ": not measured (" + ref + ")"
	}
	return fmt.Sprintf("%s: %.2f (%s)", name, *v, ref)
}

// saveToHistory records the measurement on screen for the patient field's
// patient (SaveMeasurement).
func (r *review) saveToHistory() {
	if err := r.u.SaveReview(); err != nil {
		r.status.SetText("Not saved: " + err.Error())
	}
}

// saveRequest is what the Review tab would save for the patient field's
// patient.
func (u *UI) saveRequest() app.SaveRequest {
	r := u.review
	return app.SaveRequest{PatientID: u.PatientID(), Measurement: r.m, Landmarks: r.clinicianLandmarks(), Kind: r.kind, ConfirmedRadiograph: r.confirm.Checked}
}

// SaveReview saves the Review tab's measurement (model, edited or placed
// by hand) to the history of the patient in the patient field.
func (u *UI) SaveReview() error {
	r := u.review
	if r.kind.Clinician() && !r.view.Complete() {
		return fmt.Errorf("save to patient history: place all %d landmarks first (%d placed)", cardiac.NumLandmarks, r.view.Placed())
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	e, err := u.svc.SaveMeasurement(ctx, u.saveRequest())
	if err != nil {
		return fmt.Errorf("save to patient history: %w", err)
	}
	r.savedAt = e.Time
	what := "model values"
	switch app.EntryKind(e) {
	case app.MeasurementEdited:
		what = "edited values (model values kept beside them)"
	case app.MeasurementManual:
		what = "landmarks placed by hand (manual)"
	}
	r.status.SetText(fmt.Sprintf("Saved to the history of %s: VHS %s, %s.", u.PatientID(), fmtValue(e.VHS), what))
	return nil
}

func fmtValue(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
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

// ExportReport writes the one-page PDF report of the Review tab's
// measurement (with any edits) to path, atomically (a temporary file
// renamed into place), so a failed export never leaves half a file.
func (u *UI) ExportReport(path string) error {
	r := u.review
	if r.m == nil {
		return fmt.Errorf("export report: nothing measured")
	}
	if r.kind.Clinician() && !r.view.Complete() {
		return fmt.Errorf("export report: place all %d landmarks first (%d placed)", cardiac.NumLandmarks, r.view.Placed())
	}
	date := r.savedAt
	if date.IsZero() {
		date = time.Now()
	}
	rep := app.DesktopReport(u.saveRequest(), date)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vetlens-report-*")
	if err != nil {
		return fmt.Errorf("export report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := report.WritePDF(tmp, rep); err != nil {
		tmp.Close()
		return fmt.Errorf("export report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("export report: %w", err)
	}
	r.status.SetText("Report written to " + path)
	return nil
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

// ReviewStatus is the Review tab's status line and the DICOM patient and
// study text under the file name (for the Xvfb run).
func (u *UI) ReviewStatus() (status, dicom string) { return u.review.status.Text, u.review.dicom.Text }
