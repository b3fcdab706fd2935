package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/engine/usg"
)

// shapBarWidth is the width of the largest SHAP bar.
const shapBarWidth = 220

var (
	towardImpaired = color.NRGBA{R: 0xe5, G: 0x39, B: 0x35, A: 0xff}
	towardAdequate = color.NRGBA{R: 0x1e, G: 0x88, B: 0xe5, A: 0xff}
)

// bloodwork is the Bloodwork tab: the five USG inputs, the prediction and
// its SHAP explanation.
type bloodwork struct {
	u       *UI
	content fyne.CanvasObject

	entries                         [usg.NumFeatures]*widget.Entry
	predict                         *widget.Button
	errLabel, corrections, prob     *widget.Label
	tier, conformal, classification *widget.Label
	shap                            *fyne.Container
}

func newBloodwork(u *UI) *bloodwork {
	b := &bloodwork{
		u: u, errLabel: newValueLabel(""), corrections: newValueLabel(""), prob: newValueLabel(""),
		tier: newValueLabel(""), conformal: newValueLabel(""), classification: newValueLabel(""),
		shap: container.NewVBox(),
	}
	form := widget.NewForm()
	for i := range b.entries {
		e := widget.NewEntry()
		e.SetPlaceHolder("number")
		e.Validator = validateNumber
		e.OnChanged = func(string) { b.previewCorrections() }
		b.entries[i] = e
		form.Append(usg.Label(i), e)
	}
	b.predict = widget.NewButton("Screen", b.submit)
	b.content = container.NewVScroll(container.NewVBox(
		widget.NewLabelWithStyle("Feline USG screening from bloodwork", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		form, b.predict, b.errLabel, b.corrections, widget.NewSeparator(),
		b.classification, b.prob, b.tier, b.conformal,
		widget.NewLabel("What pushed the result (SHAP, log-odds; red toward impaired, blue toward adequate):"), b.shap,
	))
	return b
}

// validateNumber is the entries' inline validator.
func validateNumber(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("required")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("not a number")
	}
	return nil
}

// request validates the entries with the service's own rules
// (usg.ParseRequest: numbers, auto-corrections, plausible ranges).
func (b *bloodwork) request() (*usg.Request, error) {
	obj := map[string]any{}
	for i, e := range b.entries {
		if err := validateNumber(e.Text); err != nil {
			return nil, fmt.Errorf("%s: %w", usg.Label(i), err)
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(e.Text), 64)
		obj[usg.Features()[i]] = v
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("bloodwork: %w", err)
	}
	return usg.ParseRequest(body)
}

// submit validates and starts the prediction in the background.
func (b *bloodwork) submit() {
	req, err := b.request()
	if err != nil {
		b.errLabel.SetText("Check the values: " + err.Error())
		return
	}
	if b.u.svc.USG() == nil {
		b.errLabel.SetText(app.ErrUSGUnavailable.Error())
		return
	}
	req.UUID = b.u.PatientID()
	if err := app.CheckPatientID(req.UUID); err != nil {
		b.errLabel.SetText("Check the patient ID: " + err.Error())
		return
	}
	b.errLabel.SetText("")
	if len(req.Warnings) > 0 {
		b.corrections.SetText("Auto-corrected: " + strings.Join(req.Warnings, "; "))
	} else {
		b.corrections.SetText("")
	}
	b.predict.Disable()
	var resp *usg.Response
	b.u.background(func(ctx context.Context) {
		resp, err = b.u.svc.PredictUSGDesktop(ctx, req)
	}, func() {
		b.predict.Enable()
		if err != nil {
			b.errLabel.SetText("Screening failed: " + err.Error())
			return
		}
		b.show(&resp.Result)
	})
}

// show displays a USG result.
func (b *bloodwork) show(r *usg.Result) {
	b.classification.SetText("Classification: " + r.Classification)
	b.prob.SetText(fmt.Sprintf("Probability of impaired urine concentration: %.1f%% (ensemble std %.3f)", 100*r.ProbabilityImpaired, r.EnsembleStd))
	b.tier.SetText(fmt.Sprintf("Risk tier: %s (%s)", r.RiskLabel, r.RiskTier))
	b.conformal.SetText(fmt.Sprintf("Conformal set at %.0f%% coverage: {%s} (%s)", 100*(1-r.ConformalAlpha), strings.Join(r.ConformalSet, ", "), r.ConformalClassification))
	b.shap.Objects = shapBars(r.Explanation.Features)
	b.shap.Refresh()
}

// shapBars is one row per feature: label, a bar proportional to |SHAP|
// (coloured by direction) and the value.
func shapBars(fs []usg.FeatureShap) []fyne.CanvasObject {
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
// units) and submits it, as a clinician would.
func (u *UI) SubmitBloodwork(values [usg.NumFeatures]string) {
	for i, e := range u.blood.entries {
		e.SetText(values[i])
	}
	u.blood.submit()
}

// previewCorrections shows, as the clinician types, the auto-corrections
// the service will apply (a value in the wrong unit, say), once every
// field holds a number; it predicts nothing.
func (b *bloodwork) previewCorrections() {
	for _, e := range b.entries {
		if validateNumber(e.Text) != nil {
			b.corrections.SetText("")
			return
		}
	}
	req, err := b.request()
	switch {
	case err != nil:
		b.corrections.SetText("")
	case len(req.Warnings) > 0:
		b.corrections.SetText("Will be auto-corrected: " + strings.Join(req.Warnings, "; "))
	default:
		b.corrections.SetText("")
	}
}
