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
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
)

// Canine reference ranges shown beside the values.
const (
	vhsLow, vhsHigh = 8.5, 10.5
	vlasHigh        = 2.5
)

// review is the Review tab: one radiograph (rectified when it was a
// screen photo), its measurement, editable landmarks, save and report.
type review struct {
	u       *UI
	content fyne.CanvasObject

	view                           *LandmarkView
	file, vhs, vlas, reading, conf *widget.Label
	status, edited, billing        *widget.Label
	open, save, export             *widget.Button
	side                           *fyne.Container

	// m is the model's measurement on screen; editedLm the clinician's
	// landmarks once any was moved (nil before).
	m        *app.Measurement
	editedLm *cardiac.Landmarks
	// savedAt is when this measurement was last saved (zero: not saved).
	savedAt time.Time
}

func newReview(u *UI) *review {
	r := &review{
		u: u, view: NewLandmarkView(),
		file: newValueLabel("No radiograph open. Open a file here, or run a capture session."), vhs: newValueLabel("VHS: -"), vlas: newValueLabel("VLAS: -"),
		reading: newValueLabel(""), conf: newValueLabel(""), status: newValueLabel(""), edited: newValueLabel(""), billing: newValueLabel(""),
	}
	r.view.OnChange = r.landmarksEdited
	r.open = widget.NewButton("Open radiograph...", r.chooseFile)
	r.save = widget.NewButton("Save to patient history", r.saveToHistory)
	r.export = widget.NewButton("Export PDF report...", r.chooseReportFile)
	r.save.Disable()
	r.export.Disable()
	side := container.NewVBox(
		r.open, r.file, widget.NewSeparator(),
		r.vhs, r.vlas, r.reading, r.conf, r.edited, r.status, r.billing,
		widget.NewLabel("Drag a landmark to correct it; VHS and VLAS follow."),
		widget.NewSeparator(), r.save, r.export,
	)
	r.side = side
	split := container.NewHSplit(r.view, container.NewVScroll(side))
	split.Offset = 0.7
	r.content = split
	return r
}

// chooseFile shows the file-open dialog (needs Options.Window).
func (r *review) chooseFile() {
	if r.u.opts.Window == nil {
		return
	}
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(err, r.u.opts.Window)
			return
		}
		if rc == nil {
			return
		}
		path := rc.URI().Path()
		rc.Close()
		if err := r.u.OpenFile(path); err != nil {
			dialog.ShowError(err, r.u.opts.Window)
		}
	}, r.u.opts.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".jpg", ".jpeg", ".png", ".JPG", ".JPEG", ".PNG"}))
	d.Show()
}

// OpenFile reads a radiograph (JPEG or PNG; a photograph of a screen is
// corrected first) and measures it in the background for the patient in
// the patient field; the Review tab shows the result when it is done.
// Errors reading the file or in the patient field are returned at once.
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
	r.m, r.editedLm, r.savedAt = m, nil, time.Time{}
	r.view.SetImage(m.Image, res.Landmarks, len(res.ModelLandmarks) > 0 && !res.Rejected)
	r.edited.SetText("")
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
	r.setValues(res.VHS, res.VLAS)
	r.export.Enable()
	if res.Code.HasVHS() {
		r.save.Enable()
	} else {
		r.save.Disable()
	}
}

// billingText says how the desktop measurement was metered.
func billingText(b app.Billing) string {
	switch b.Reason {
	case app.ReasonValid:
		return fmt.Sprintf("Metered: %s call, $%.2f (%s tier, %d this month).", b.CallType, deref(b.Rate), b.Tier, deref(b.MonthlyUsage))
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

// landmarksEdited recomputes VHS and VLAS from the dragged landmarks.
func (r *review) landmarksEdited(l cardiac.Landmarks) {
	lm := l
	r.editedLm = &lm
	v := app.EditedValues(l)
	r.edited.SetText("EDITED: landmarks moved by hand; values recomputed from the edited landmarks, model confidence no longer applies. Saving keeps the model's values beside these.")
	if !v.AxesPerpendicular {
		r.edited.SetText(r.edited.Text + " The heart axes are not perpendicular.")
	}
	r.setValues(v.VHS, v.VLAS)
	if v.VHS != nil {
		r.save.Enable()
	}
}

func (r *review) setValues(vhs, vlas *float64) {
	r.vhs.SetText(valueLine("VHS", vhs, fmt.Sprintf("normal %.1f-%.1f", app.VHSNormalLow, app.VHSNormalHigh)))
	r.vlas.SetText(valueLine("VLAS", vlas, fmt.Sprintf("normal < %.1f", app.VLASNormalMax)))
	r.reading.SetText(app.Reading(vhs, vlas))
	// Wrapped labels change height with their text: lay the panel out again.
	r.side.Refresh()
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

// SaveReview saves the Review tab's measurement (with any edits) to the
// history of the patient in the patient field.
func (u *UI) SaveReview() error {
	r := u.review
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	e, err := u.svc.SaveMeasurement(ctx, app.SaveRequest{PatientID: u.PatientID(), Measurement: r.m, Edited: r.editedLm})
	if err != nil {
		return err
	}
	r.savedAt = e.Time
	what := "model values"
	if e.Edited {
		what = "edited values (model values kept beside them)"
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
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			dialog.ShowError(err, r.u.opts.Window)
			return
		}
		if wc == nil {
			return
		}
		path := wc.URI().Path()
		wc.Close()
		if err := r.u.ExportReport(path); err != nil {
			dialog.ShowError(err, r.u.opts.Window)
		}
	}, r.u.opts.Window)
	name := "vhs-report"
	if id := r.u.PatientID(); id != "" {
		name += "-" + strings.Map(func(c rune) rune {
			if c == '/' || c == '\\' || c == ':' {
				return '_'
			}
			return c
		}, id)
	}
	d.SetFileName(name + "-" + time.Now().Format("2006-01-02") + ".pdf")
	d.Show()
}

// ExportReport writes the one-page PDF report of the Review tab's
// measurement (with any edits) to path, atomically (a temporary file
// renamed into place), so a failed export never leaves half a file.
func (u *UI) ExportReport(path string) error {
	r := u.review
	if r.m == nil {
		return fmt.Errorf("export report: nothing measured")
	}
	date := r.savedAt
	if date.IsZero() {
		date = time.Now()
	}
	rep := app.DesktopReport(r.m, r.editedLm, u.PatientID(), date)
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
