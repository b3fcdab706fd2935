package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
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

func fmtValue(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}
