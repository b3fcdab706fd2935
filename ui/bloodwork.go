package ui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// shapBarWidth is the width of the largest SHAP bar.
const shapBarWidth = 220

var (
	towardImpaired = color.NRGBA{R: 0xe5, G: 0x39, B: 0x35, A: 0xff}
	towardAdequate = color.NRGBA{R: 0x1e, G: 0x88, B: 0xe5, A: 0xff}
)

// bloodwork is the Bloodwork tab: the five USG inputs with selectable
// units, the result in plain words, and the statistics behind it in a
// Details expander.
type bloodwork struct {
	u       *UI
	content fyne.CanvasObject

	entries                [app.NumBloodworkValues]*widget.Entry
	creatUnit, lymphUnit   *widget.Select
	predict                *widget.Button
	errLabel, result, tier *widget.Label
	caution                *widget.Label // resultCaution, under a result
	details                *widget.Label
	corrections            *fyne.Container
	shap                   *fyne.Container
	detailsBox             *widget.Accordion
	// keep marks values whose automatic correction was undone, keepText
	// the text they were undone for (editing the value re-arms it).
	keep        [app.NumBloodworkValues]bool
	keepText    [app.NumBloodworkValues]string
	lastShown   string // the form's key when its result was shown
	previewText string
	// entered holds, per value, the text as typed before the form showed
	// its automatic correction in the field ("" none); rewriting is set
	// while the form rewrites a field itself.
	entered   [app.NumBloodworkValues]string
	rewriting bool
	// autoAge is the age the form filled in from the patient's birth
	// date ("" none); a value typed over it is kept.
	autoAge string
}

func newBloodwork(u *UI) *bloodwork {
	b := &bloodwork{
		u: u, errLabel: newValueLabel(""), result: newValueLabel(""), tier: newValueLabel(""), details: newValueLabel(""),
		corrections: container.NewVBox(), shap: container.NewVBox(),
	}
	b.result.TextStyle = fyne.TextStyle{Bold: true}
	b.caution = newValueLabel(resultCaution)
	b.caution.TextStyle = fyne.TextStyle{Italic: true}
	b.caution.Hide()
	b.creatUnit = widget.NewSelect([]string{app.UnitMgDL, app.UnitUmolL}, func(string) { b.formChanged() })
	b.creatUnit.SetSelected(app.UnitMgDL)
	b.lymphUnit = widget.NewSelect([]string{app.UnitPerUL, app.UnitThousandPerU}, func(string) { b.formChanged() })
	b.lymphUnit.SetSelected(app.UnitPerUL)
	form := widget.NewForm()
	names := app.BloodworkNames()
	fixed := app.BloodworkUnits("", "")
	for i := range b.entries {
		e := widget.NewEntry()
		e.SetPlaceHolder("number")
		e.Validator = validateNumber
		e.OnChanged = func(string) { b.formChanged() }
		e.OnSubmitted = func(string) { b.submit() } // Enter screens
		b.entries[i] = e
		var unit fyne.CanvasObject = widget.NewLabel(fixed[i])
		switch i {
		case 1:
			unit = b.creatUnit
		case 3:
			unit = b.lymphUnit
		}
		form.Append(names[i], container.NewBorder(nil, nil, nil, container.NewGridWrap(fyne.NewSize(120, 36), unit), e))
	}
	b.predict = widget.NewButton("Screen", b.submit)
	b.predict.Importance = widget.HighImportance
	b.detailsBox = widget.NewAccordion(widget.NewAccordionItem("Details", container.NewVBox(
		b.details,
		newValueLabel("What pushed the result (SHAP values, in log-odds: how much each value moved the model's score; red toward impaired, blue toward adequate):"),
		b.shap)))
	b.content = container.NewVScroll(container.NewVBox(
		widget.NewLabelWithStyle("Feline urine concentration screening from bloodwork (cats only)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		form, b.predict, b.errLabel, b.corrections, widget.NewSeparator(),
		b.result, b.tier, b.caution, b.detailsBox,
	))
	return b
}

// followPatient fills Age (months) from the patient's birth date
// (app.Age, today) when the field is empty or holds the age it filled in
// before; an age typed by hand is kept, and a patient without a birth
// date empties an age it filled in.
func (b *bloodwork) followPatient() {
	age := b.entries[app.BloodworkAge]
	if age.Text != "" && age.Text != b.autoAge {
		return
	}
	text := ""
	if months, ok := app.Age(b.u.Patient().BirthDate, time.Now()); ok {
		text = strconv.Itoa(months)
	}
	b.autoAge = text
	if age.Text != text {
		age.SetText(text)
	}
}

// validateNumber is the entries' inline validator.
func validateNumber(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("required")
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("not a number")
	}
	return nil
}

// form reads the entries and units (the numbers are checked here; the
// service checks the rest).
func (b *bloodwork) form() (app.BloodworkForm, error) {
	f := app.BloodworkForm{CreatinineUnit: b.creatUnit.Selected, LymphocyteUnit: b.lymphUnit.Selected, KeepAsEntered: b.keep}
	names := app.BloodworkNames()
	for i, e := range b.entries {
		if err := validateNumber(e.Text); err != nil {
			return f, fmt.Errorf("%s: %w", names[i], err)
		}
		f.Values[i], _ = strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(e.Text), ",", "."), 64)
	}
	return f, nil
}

// formKey identifies the form's content (values, units, kept values).
func (b *bloodwork) formKey() string {
	var parts []string
	for _, e := range b.entries {
		parts = append(parts, strings.TrimSpace(e.Text))
	}
	return fmt.Sprintf("%s|%v|%s|%s|%v", b.u.PatientID(), parts, b.creatUnit.Selected, b.lymphUnit.Selected, b.keep)
}

// formChanged follows an edit: a value changed since its correction was
// undone is corrected again, and the corrections the service will apply
// are previewed.
func (b *bloodwork) formChanged() {
	if b.predict == nil || b.rewriting { // still being built, or showing a correction
		return
	}
	for i, e := range b.entries {
		if b.keep[i] && e.Text != b.keepText[i] {
			b.keep[i] = false
		}
	}
	b.previewCorrections()
}

// clearResult removes the result from the screen (after an error or a
// change of the inputs, so an old result is never read as the new one's).
func (b *bloodwork) clearResult() {
	b.result.SetText("")
	b.tier.SetText("")
	b.caution.Hide()
	b.details.SetText("")
	b.shap.Objects = nil
	b.shap.Refresh()
	b.lastShown = ""
	b.entered = [app.NumBloodworkValues]string{}
}

// fail shows an error and clears the result.
func (b *bloodwork) fail(text string) {
	b.errLabel.SetText(text)
	b.clearResult()
}

// submit validates and starts the screening in the background. The same
// values again, with their result on screen, screen nothing.
func (b *bloodwork) submit() {
	f, err := b.form()
	if err != nil {
		b.fail("Check the values: " + err.Error())
		return
	}
	if b.u.svc.USG.Engine() == nil {
		b.fail(app.ErrUSGUnavailable.Error())
		return
	}
	if f.PatientID, err = b.u.patientID(); err != nil {
		b.fail("Check the patient ID: " + err.Error())
		return
	}
	if _, _, err := app.PrepareBloodwork(f); err != nil { // at once, before the model runs
		b.fail("Check the values: " + err.Error())
		b.showCorrections(nil)
		return
	}
	if p := b.u.Patient(); app.ParseSpecies(p.Species) == app.SpeciesDog {
		b.fail("Bloodwork screening predicts urine concentration in cats only: this patient is recorded as a dog.")
		return
	}
	key := b.formKey()
	if key == b.lastShown {
		b.errLabel.SetText("These values were just screened: the result below is theirs.")
		return
	}
	b.errLabel.SetText("")
	b.predict.Disable()
	var res app.BloodworkResult
	b.u.background(func(ctx context.Context) {
		res, err = b.u.svc.USG.ScreenBloodwork(ctx, f)
	}, func() {
		b.predict.Enable()
		if err != nil {
			b.fail("Not screened: " + err.Error())
			b.showCorrections(nil)
			return
		}
		b.showCorrections(res.Corrections)
		b.showCorrected(res.Corrections)
		b.show(&res.Response.Result)
		b.lastShown = b.formKey()
		b.u.recordsChanged()
		if res.Repeat {
			b.errLabel.SetText("Same values as this patient's last screening: its result is shown, nothing new was logged.")
		}
	})
}

// showCorrections lists the automatic corrections applied, each with an
// Undo that takes the value as entered instead.
func (b *bloodwork) showCorrections(cs []app.Correction) {
	var rows []fyne.CanvasObject
	for _, c := range cs {
		feat := c.Feature
		undo := widget.NewButton("Undo", func() { b.UndoCorrection(feat) })
		rows = append(rows, container.NewBorder(nil, nil, nil, undo, newValueLabel("Auto-corrected: "+c.Text+".")))
	}
	b.corrections.Objects = rows
	b.corrections.Refresh()
	b.content.Refresh() // lay the tab out again: the rows never cover the result
}

// showCorrected puts each corrected value into its field as it was used
// (app.Correction.Field), keeping the text typed for Undo, so the form
// shows what was screened; the result stays the form's.
func (b *bloodwork) showCorrected(cs []app.Correction) {
	b.rewriting = true
	for _, c := range cs {
		e := b.entries[c.Feature]
		b.entered[c.Feature] = e.Text
		e.SetText(c.Field)
	}
	b.rewriting = false
}

// UndoCorrection takes value i as entered (no automatic unit correction)
// and screens again: an implausible value is then refused with its
// range.
func (b *bloodwork) UndoCorrection(i int) {
	if b.entered[i] != "" {
		b.rewriting = true
		b.entries[i].SetText(b.entered[i])
		b.rewriting = false
		b.entered[i] = ""
	}
	b.keep[i], b.keepText[i] = true, b.entries[i].Text
	b.submit()
}

// show displays a USG result: plain words first, the statistics in
// Details.
func (b *bloodwork) show(r *app.USGResult) {
	word := "adequate"
	if r.ProbabilityImpaired >= 0.5 {
		word = "likely impaired"
	}
	b.result.SetText(fmt.Sprintf("Urine concentrating ability: %s (%.0f%% chance that the urine specific gravity is below 1.035).", word, 100*r.ProbabilityImpaired))
	b.tier.SetText("Risk: " + r.RiskLabel + ".")
	b.caution.Show()
	lines := []string{
		fmt.Sprintf("Model decision: %s. The model's own call at its threshold.", r.Classification),
		fmt.Sprintf("Ensemble spread: %.3f. How much the models of the ensemble disagree on the probability; larger means less certain.", r.EnsembleStd),
		fmt.Sprintf("Conformal set at %.0f%% coverage: {%s}. The outcomes the result cannot rule out at that coverage; two outcomes mean it is uncertain.", 100*(1-r.ConformalAlpha), strings.Join(r.ConformalSet, ", ")),
		fmt.Sprintf("Risk tier code: %s. The tier's name for API clients.", r.RiskTier),
		"Model version: " + r.ModelVersion + ".",
	}
	b.details.SetText(strings.Join(lines, "\n"))
	b.shap.Objects = shapBars(r.Explanation.Features)
	b.shap.Refresh()
}

// shapBars is one row per feature: label, a bar proportional to |SHAP|
// (coloured by direction) and the value.
func shapBars(fs []app.FeatureShap) []fyne.CanvasObject {
	maxAbs := 0.0
	for _, f := range fs {
		maxAbs = math.Max(maxAbs, math.Abs(f.Shap))
	}
	rows := make([]fyne.CanvasObject, 0, len(fs))
	for _, f := range fs {
		c := towardAdequate
		if f.Shap > 0 {
			c = towardImpaired
		}
		bar := canvas.NewRectangle(c)
		w := float32(1)
		if maxAbs > 0 {
			w = max(1, float32(math.Abs(f.Shap)/maxAbs*shapBarWidth))
		}
		bar.SetMinSize(fyne.NewSize(w, 14))
		name := widget.NewLabel(fmt.Sprintf("%s = %g", f.Label, f.Value))
		rows = append(rows, container.NewBorder(nil, nil,
			container.NewGridWrap(fyne.NewSize(240, 30), name),
			widget.NewLabel(fmt.Sprintf("%+.3f", f.Shap)),
			container.NewHBox(container.NewCenter(bar))))
	}
	return rows
}

// SubmitBloodwork fills the form with values (in the form's order and
// selected units) and submits it, as a clinician would.
func (u *UI) SubmitBloodwork(values [app.NumBloodworkValues]string) {
	u.FillBloodwork(values)
	u.blood.submit()
}

// FillBloodwork fills the form with values (in the form's order and
// selected units) without submitting.
func (u *UI) FillBloodwork(values [app.NumBloodworkValues]string) {
	for i, e := range u.blood.entries {
		e.SetText(values[i])
	}
}

// SetBloodworkUnits selects the creatinine and lymphocyte units.
func (u *UI) SetBloodworkUnits(creatinine, lymphocytes string) {
	u.blood.creatUnit.SetSelected(creatinine)
	u.blood.lymphUnit.SetSelected(lymphocytes)
}

// previewCorrections shows, as the clinician types, the corrections the
// service will apply (a value in the wrong unit, say), once every field
// holds a number; it screens nothing. A change of the inputs clears the
// shown result, and a changed value is corrected again where needed.
func (b *bloodwork) previewCorrections() {
	if b.lastShown != "" && b.formKey() != b.lastShown {
		b.clearResult()
		b.corrections.Objects = nil
		b.corrections.Refresh()
	}
	f, err := b.form()
	if err != nil {
		b.previewText = ""
		return
	}
	f.KeepAsEntered = [app.NumBloodworkValues]bool{}
	_, cs, err := app.PrepareBloodwork(f)
	var lines []string
	if err == nil {
		for _, c := range cs {
			if b.keep[c.Feature] {
				continue
			}
			lines = append(lines, "Will be auto-corrected: "+c.Text+".")
		}
	}
	b.previewText = strings.Join(lines, " ")
	if b.lastShown == "" {
		b.errLabel.SetText(b.previewText)
	}
}
