package ui

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// review is the Review tab: one radiograph (rectified when it was a
// screen photo), its measurement, editable landmarks, hand placement,
// undo, save and report.
type review struct {
	u       *UI
	content fyne.CanvasObject

	view                           *LandmarkView
	file, vhs, vlas, reading, conf *widget.Label
	status, kindText, rangeText    *widget.Label
	// caution is resultCaution, shown under the values while a
	// measurement is open.
	caution *widget.Label
	// state is the panel's one current state: whose values are shown
	// (the model's result, or the clinician's points, or why there is no
	// verdict yet) and who placed the points.
	state *widget.Label
	// confirmBox holds one button per point a withheld result doubts that
	// the clinician has not yet moved or confirmed (app.CheckDoubt).
	confirmBox                      *fyne.Container
	guide, details                  *widget.Label
	dicom                           *widget.Label // a DICOM file's patient and study
	detailsBox                      *widget.Accordion
	confirm                         *widget.Check
	open, save, export, print, clin *widget.Button
	hand, undo, reset               *widget.Button
	side                            *fyne.Container
	// actions holds Save, Export and Print, fixed under the scrolled
	// panel; printWhy says why Print is off.
	actions  *fyne.Container
	printWhy *widget.Label

	// mismatch asks whose study a file is when its patient tags
	// contradict the loaded patient (app.StudyMismatch): switch to the
	// file's patient, or keep the loaded one with the mismatch
	// acknowledged. Save and the report wait for the answer.
	mismatch                   *fyne.Container
	mismatchText               *widget.Label
	switchPatient, keepPatient *widget.Button

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
	// savedAs is what was last saved (or reopened) for which patient
	// (saveKey); Save stays off until the screen differs from it.
	savedAs string
	// baseKind is the kind the measurement opened with: model for a new
	// one, the stored kind for one reopened from the history; moved is
	// set once its landmarks were changed since.
	baseKind app.MeasurementKind
	moved    bool
	// confirmed marks the model's points the clinician confirmed as they
	// are (app.SaveRequest.Confirmed).
	confirmed app.Settled
	// modelText is the model's result in words (or, for a measurement
	// reopened from the history, what was reopened).
	modelText string
}

// reviewStep is one undo step: the view's landmarks, the kind and
// whether the landmarks had been moved.
type reviewStep struct {
	state     EditState
	kind      app.MeasurementKind
	moved     bool
	confirmed app.Settled
}

func newReview(u *UI) *review {
	r := &review{
		u: u, view: NewLandmarkView(), kind: app.MeasurementModel,
		file: newValueLabel("No radiograph open. Open a file here, or run a capture session."), vhs: newValueLabel("VHS: -"), vlas: newValueLabel("VLAS: -"),
		reading: newValueLabel(""), conf: newValueLabel(""), status: newValueLabel(""), kindText: newValueLabel(""), rangeText: newValueLabel(""),
		guide: newValueLabel(""), details: newValueLabel(""), dicom: newValueLabel(""), state: newValueLabel(""), caution: newValueLabel(resultCaution),
		confirmBox: container.NewVBox(),
	}
	r.view.OnEdit = r.pushUndo
	r.view.OnChange = r.landmarksChanged
	r.view.OnUndo = r.undoStep
	r.open = widget.NewButton("Open radiograph...", r.chooseFile)
	r.save = widget.NewButton("Save to patient history", r.saveToHistory)
	r.export = widget.NewButton("Export PDF report...", r.chooseReportFile)
	r.print = widget.NewButton("Print report", func() {
		if err := u.PrintReport(); err != nil {
			r.status.SetText(err.Error())
		}
	})
	r.clin = widget.NewButton("Clinic details for reports...", r.clinicDialog)
	r.confirm = widget.NewCheck("I confirm this image is a radiograph", func(bool) { r.update() })
	r.hand = widget.NewButton("Place landmarks by hand", r.startPlacement)
	r.undo = widget.NewButton("Undo", r.undoStep)
	r.reset = widget.NewButton("Reset to the model's points", r.resetToModel)
	r.confirm.Hide()
	r.mismatchText = newValueLabel("")
	r.mismatchText.TextStyle = fyne.TextStyle{Bold: true}
	r.switchPatient = widget.NewButton("Switch to the file's patient", func() {
		if err := u.SwitchToFilePatient(); err != nil {
			r.status.SetText(err.Error())
		}
	})
	r.keepPatient = widget.NewButton("Keep the loaded patient", func() {
		if err := u.KeepLoadedPatient(); err != nil {
			r.status.SetText(err.Error())
		}
	})
	r.mismatch = container.NewVBox(widget.NewSeparator(), r.mismatchText, r.switchPatient, r.keepPatient, widget.NewSeparator())
	r.mismatch.Hide()
	for _, b := range []*widget.Button{r.save, r.export, r.print, r.hand, r.undo, r.reset} {
		b.Disable()
	}
	r.conf.TextStyle = fyne.TextStyle{Italic: true}
	r.caution.TextStyle = fyne.TextStyle{Italic: true}
	r.caution.Hide()
	r.detailsBox = widget.NewAccordion(widget.NewAccordionItem("Details", r.details))
	side := container.NewVBox(
		r.open, r.file, r.dicom, r.mismatch, widget.NewSeparator(),
		r.vhs, r.vlas, r.reading, r.caution, r.rangeText, r.conf, r.kindText, r.state, r.status, r.detailsBox,
		widget.NewSeparator(), r.guide, r.confirmBox, r.confirm, r.hand, r.undo, r.reset,
		widget.NewSeparator(), r.clin,
	)
	r.side = side
	// Save, Export and Print stay in view below the scrolled panel, at
	// any window height and however long the notes above them grow.
	r.printWhy = newValueLabel("")
	r.printWhy.Hide()
	r.actions = container.NewVBox(widget.NewSeparator(), r.save, r.export, r.print, r.printWhy)
	split := container.NewHSplit(r.view, container.NewBorder(nil, r.actions, nil, nil, container.NewVScroll(side)))
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

// placementStep is the instruction for placing landmark i by hand: its
// number in the click order, its name and where it belongs.
func placementStep(i int) string {
	where := [app.NumLandmarks]string{
		app.HeartTop:    "Carina (heart_top): where the trachea ends above the heart base; the top of the long axis.",
		app.HeartBottom: "Apex (heart_bottom): the tip of the heart, the far end of the long axis from the carina.",
		app.HeartRight:  "Cranial end of the short axis (heart_right): the cranial heart border on the widest short axis, perpendicular to the long axis.",
		app.HeartLeft:   "Caudal end of the short axis (heart_left): the caudal heart border on that same line, perpendicular to the long axis.",
		app.VLASPoint:   "VLAS: the caudal border of the left atrium where it meets the caudal vena cava.",
		app.VertebraA:   "Vertebra A: midpoint of T4's cranial endplate.",
		app.VertebraB:   "Vertebra B: midpoint of T9's caudal endplate (six vertebrae on from A).",
	}
	return fmt.Sprintf("%d/%d %s", i+1, app.NumLandmarks, where[i])
}

// editKeys is the short help on moving landmarks.
const editKeys = "Drag a landmark, or tap it and use the arrow keys (1 pixel; Shift or Ctrl: 10). Undo: Ctrl+Z."

// update shows the values, the kind, the guide and the buttons for the
// current state: the model's values, or those computed from the
// clinician's landmarks once all 7 are set, stated against the patient's
// species or breed range.
func (r *review) update() {
	if r.m == nil {
		return
	}
	res := r.m.Result
	r.caution.Show()
	r.u.showStartHere()
	v := app.Values{VHS: res.VHS, VLAS: res.VLAS, AxesPerpendicular: res.AxesPerpendicular}
	complete := r.view.Complete()
	span := r.spanCheck()
	doubt := app.CheckDoubt(r.m, r.kind, r.clinicianLandmarks(), r.confirmed)
	switch {
	case r.kind == app.MeasurementModel:
		r.kindText.SetText("")
	case !complete:
		v = app.Values{}
		r.kindText.SetText(fmt.Sprintf("PLACING BY HAND: %d of %d landmarks placed; the values follow when all are placed.", r.view.Placed(), app.NumLandmarks))
	case doubt != nil && !doubt.VLASOnly:
		v = app.Values{} // no verdict from doubted points
		r.kindText.SetText(doubt.Text())
	default:
		v = app.EditedValues(r.view.Landmarks())
		text := "EDITED: landmarks moved by hand; values recomputed from the edited landmarks, model confidence no longer applies. Saving keeps the model's values beside these."
		if r.kind == app.MeasurementManual {
			text = "PLACED BY HAND: values computed from the clinician's landmarks; model confidence does not apply. Saved as a manual measurement."
		}
		if !v.AxesPerpendicular {
			text += " The heart axes are not perpendicular."
		}
		if span != nil && span.OffSix() {
			text += " " + span.Warning()
		}
		if doubt != nil { // VLAS only: no VLAS from its doubted point
			v.VLAS = nil
			text += " " + doubt.Text()
		}
		r.kindText.SetText(text)
	}
	asking := r.showMismatch()
	r.setValues(v.VHS, v.VLAS)
	if asking {
		// No verdict against the ranges of a patient the file may not be.
		r.vhs.SetText("VHS " + fmtValue(v.VHS) + ": no verdict until you choose whose study this is (above).")
		r.vlas.SetText("VLAS " + fmtValue(v.VLAS) + ".")
		r.reading.SetText("")
	}
	r.setDetails(v, span)
	r.setState(v, doubt)

	rejectedOK := !res.Rejected || r.confirm.Checked
	switch {
	case r.view.Placing():
		r.guide.SetText(placementStep(r.view.NextLandmark()) + " Tap the image to place it.")
	case doubt != nil && len(doubt.Unsettled) > 0:
		r.guide.SetText("Move each doubted point to where it belongs, or confirm it where it is. " + editKeys + " Or place all 7 by hand.")
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
	enable(r.reset, r.m.HasModelLandmarks() && (r.kind != r.baseKind || r.moved))
	savable := false
	if r.kind == app.MeasurementModel {
		savable = res.Code.HasVHS() || (r.m.Base != nil && res.VHS != nil)
	} else {
		savable = complete && v.VHS != nil && rejectedOK
	}
	// One save per change: Save stays off while the screen holds what was
	// last saved for this patient.
	enable(r.save, savable && !asking && r.saveKey() != r.savedAs)
	reportable := !asking && v.VHS != nil && (r.kind == app.MeasurementModel && !res.Rejected || complete && r.kind.Clinician() && rejectedOK)
	enable(r.export, reportable)
	printOK, why := r.u.printerReady()
	enable(r.print, reportable && printOK)
	// Why Print is off goes under the buttons, wrapped: in the button it
	// would widen the panel (and the window) to its length.
	if printOK {
		r.printWhy.SetText("")
		r.printWhy.Hide()
	} else {
		r.printWhy.SetText("Print is off: " + why + ".")
		r.printWhy.Show()
	}
	// Empty notes take no room; wrapped labels change height with their
	// text: lay the panel out again.
	for _, l := range []*widget.Label{r.conf, r.kindText} {
		if l.Text == "" {
			l.Hide()
		} else {
			l.Show()
		}
	}
	r.side.Refresh()
}

// saveKey identifies what Save would store: the patient, the kind and
// the landmarks in effect (screenKey).
func (r *review) saveKey() string { return r.u.PatientID() + "|" + r.screenKey() }

// screenKey identifies the work on screen: the kind, the landmarks and
// the confirmed points.
func (r *review) screenKey() string {
	return fmt.Sprintf("%s|%v|%d|%v", r.kind, r.view.Landmarks(), r.view.Placed(), r.confirmed)
}

// UnsavedWork says what Review holds that leaving it would lose
// (app.UnsavedWork: changed landmarks, an unsaved capture), "" for
// nothing.
func (u *UI) UnsavedWork() string {
	r := u.review
	if r.m == nil {
		return ""
	}
	saved := r.savedAs != "" && strings.HasSuffix(r.savedAs, "|"+r.screenKey())
	return app.UnsavedWork(r.m, r.kind, r.kind != r.baseKind || r.moved, saved)
}

// clear empties Review (unsaved work discarded).
func (r *review) clear() {
	r.m, r.history, r.savedAs, r.moved, r.confirmed, r.modelText = nil, nil, "", false, app.Settled{}, ""
	r.kind, r.baseKind = app.MeasurementModel, app.MeasurementModel
	r.view.SetImage(nil, app.Landmarks{}, false)
	r.file.SetText("No radiograph open. Open a file here, or run a capture session.")
	for _, l := range []*widget.Label{r.dicom, r.reading, r.conf, r.kindText, r.state, r.status, r.guide, r.details, r.rangeText} {
		l.SetText("")
	}
	r.vhs.SetText("VHS: -")
	r.vlas.SetText("VLAS: -")
	r.confirmBox.RemoveAll()
	r.mismatch.Hide()
	r.confirm.Hide()
	r.caution.Hide()
	r.u.showStartHere()
	for _, b := range []*widget.Button{r.save, r.export, r.print, r.hand, r.undo, r.reset} {
		b.Disable()
	}
	r.side.Refresh()
}

// spanCheck is the vertebral span check of the landmarks in effect
// (app.Measurement.SpanCheck): the clinician's once all 7 are placed,
// the model's while the model's are shown; nil while a placement is
// unfinished or where there are none.
func (r *review) spanCheck() *app.SpanCheck {
	if r.kind.Clinician() && !r.view.Complete() {
		return nil
	}
	return r.m.SpanCheck(r.clinicianLandmarks())
}

// setDetails fills the Details expander: the statistics behind the
// result, each with a one-line explanation, and the vertebral span check
// of the landmarks in effect (span, nil for none); a model measurement
// whose span is not six vertebrae also gets the check's warning under the
// values.
func (r *review) setDetails(v app.Values, span *app.SpanCheck) {
	res := r.m.Result
	var lines []string
	lines = append(lines, fmt.Sprintf("Exact values: VHS %s, VLAS %s (vertebrae, two decimals).", fmtValue(v.VHS), fmtValue(v.VLAS)))
	switch {
	case r.kind.Clinician():
		lines = append(lines, "Model confidence: does not apply; the values come from the clinician's landmarks.")
		if res.VHS != nil {
			lines = append(lines, fmt.Sprintf("The model's own values: VHS %s, VLAS %s.", fmtValue(res.VHS), fmtValue(res.VLAS)))
		}
	case res.Rejected:
	default:
		lines = append(lines, fmt.Sprintf("Model confidence: %s. How closely the five landmark models agree (optimal, good, or review: check the landmarks).", res.Confidence))
		if !math.IsNaN(res.Spread) {
			lines = append(lines, fmt.Sprintf("Ensemble spread: %.4f. How far apart the five models put the landmarks, as a fraction of the image size; the confidence is read from it.", res.Spread))
		}
	}
	if span != nil {
		lines = append(lines, span.Summary())
	}
	if r.kind.Clinician() && r.modelText != "" {
		lines = append(lines, "The model's own result: "+r.modelText)
	}
	lines = append(lines, fmt.Sprintf("Result code %d: %s. The number API clients receive for this outcome.", res.Code, res.Code.Description()))
	ref := r.u.Reference()
	lines = append(lines, "VHS range: "+ref.VHSLabel()+", mean ± 2 SD of healthy animals.", "VLAS: "+ref.VLASLabel()+".")
	if r.m.ModelVersion != "" {
		lines = append(lines, "Model version: "+r.m.ModelVersion+".")
	}
	r.details.SetText(strings.Join(lines, "\n"))
	switch {
	case r.kind.Clinician() || res.Rejected:
		r.conf.SetText("")
	case res.Confidence == app.ConfidenceReview:
		text := "The model is unsure of these landmarks: check them before relying on the values."
		if span != nil && span.OffSix() {
			text += " " + span.Warning()
		}
		r.conf.SetText(text)
	case span != nil && span.OffSix():
		r.conf.SetText(span.Warning())
	default:
		r.conf.SetText("")
	}
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
	r.history = append(r.history, reviewStep{state: r.view.State(), kind: r.kind, moved: r.moved, confirmed: r.confirmed})
}

// setState shows the panel's one current state (the values v in effect,
// doubt why there are none from the clinician's points) and who placed
// the points, and offers a confirmation per doubted point not yet
// settled.
func (r *review) setState(v app.Values, doubt *app.Doubt) {
	var text string
	switch {
	case !r.kind.Clinician():
		text = r.modelText
	case r.view.Placing():
		text = "Placing the landmarks by hand."
	case doubt != nil && !doubt.VLASOnly:
		text = "No verdict yet: the values wait for the doubted points."
	case v.VHS != nil:
		text = "Values from the clinician's points: VHS " + fmtValue(v.VHS) + ", VLAS " + fmtValue(v.VLAS) + "."
	default:
		text = "The clinician's points give no VHS."
	}
	if by := app.PointsBy(r.m, r.kind, r.clinicianLandmarks(), r.confirmed); by != "" {
		text = strings.TrimSpace(text + " " + by)
	}
	r.state.SetText(text)
	r.confirmBox.RemoveAll()
	if doubt == nil || r.view.Placing() || r.kind == app.MeasurementManual {
		return
	}
	for _, k := range doubt.Unsettled {
		k := k
		r.confirmBox.Add(widget.NewButton("Confirm "+app.LandmarkNames[k]+" where it is", func() { r.confirmPoint(k) }))
	}
}

// confirmPoint confirms landmark k of a withheld result where the model
// put it (one undo step): it counts as the clinician's, like a move.
func (r *review) confirmPoint(k int) {
	if r.m == nil || r.confirmed[k] {
		return
	}
	r.pushUndo()
	r.confirmed[k] = true
	if r.kind == app.MeasurementModel {
		r.kind = app.MeasurementEdited
	}
	r.moved = true
	r.update()
}

// landmarksChanged follows a placement, drag or nudge: moving the model's
// landmarks makes the measurement edited.
func (r *review) landmarksChanged() {
	if r.kind == app.MeasurementModel {
		r.kind = app.MeasurementEdited
	}
	r.moved = true
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
	r.kind, r.moved, r.confirmed = s.kind, s.moved, s.confirmed
	r.view.requestFocus() // the arrow keys keep working after the button
	r.update()
}

// resetToModel puts the model's landmarks back (for a measurement
// reopened from the history, the landmarks it was saved with; one undo
// step) and gives the landmark view the keyboard focus.
func (r *review) resetToModel() {
	if !r.m.HasModelLandmarks() || r.kind == r.baseKind && !r.moved {
		return
	}
	r.pushUndo()
	r.view.Restore(EditState{Landmarks: r.m.Result.Landmarks, Placed: app.NumLandmarks})
	r.kind, r.moved, r.confirmed = r.baseKind, false, app.Settled{}
	r.view.requestFocus()
	r.update()
}

// clinicianLandmarks are the landmarks in effect when they are the
// clinician's and complete; nil for the model's.
func (r *review) clinicianLandmarks() *app.Landmarks {
	if !r.kind.Clinician() || !r.view.Complete() {
		return nil
	}
	lm := r.view.Landmarks()
	return &lm
}

// setValues states the values as a clinician says them, against the
// patient's species or breed range, and names the range used.
func (r *review) setValues(vhs, vlas *float64) {
	ref := r.u.Reference()
	r.vhs.SetText(app.HeartSize(vhs, ref).Line)
	r.vlas.SetText(app.LeftAtrium(vlas, ref).Line)
	r.reading.SetText(app.Reading(vhs, vlas, ref))
	who := ref.VHS.Breed
	if who == "" {
		who = string(ref.VHS.Species)
	}
	text := fmt.Sprintf("Range used: %s %s for %s (%s).", ref.VHS.Scope(), ref.VHS.Describe(), who, ref.VHS.Source)
	if ref.Note != "" {
		text += " " + strings.ToUpper(ref.Note[:1]) + ref.Note[1:] + "."
	}
	if ref.VHS.Species == app.SpeciesCat {
		text += " The cardiac model was trained on canine radiographs: check the landmarks on a cat."
	}
	r.rangeText.SetText(text)
}

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
