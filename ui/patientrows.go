package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// cardiacRow is one measurement: date, values, kind and source, its
// version state (corrected, a correction, removed), and Open (reopen on
// Review to correct it) and Remove buttons where they apply.
func (p *patientsTab) cardiacRow(id app.PatientID, e app.CardiacEntry) fyne.CanvasObject {
	line := fmt.Sprintf("%s   VHS %s   VLAS %s   %s   from %s", e.Time.Local().Format("2006-01-02 15:04"), fmtValue(e.VHS), fmtValue(e.VLAS), kindNote(e), sourceName(e.Customer))
	switch {
	case e.Hidden != nil:
		line = fmt.Sprintf("REMOVED %s (%s): %s", e.Hidden.Time.Local().Format("2006-01-02"), e.Hidden.Reason, line)
	case e.SupersededBy != 0:
		line = "EARLIER VERSION (corrected since): " + line
	}
	if e.Supersedes != 0 {
		line += "   (correction of an earlier version)"
	}
	label := newValueLabel(line)
	var buttons []fyne.CanvasObject
	if e.Hidden == nil && e.HasImage {
		customer, seq := e.Customer, e.Seq
		buttons = append(buttons, widget.NewButton("Open", func() {
			if err := p.u.ReopenMeasurement(id, customer, seq); err != nil {
				p.status.SetText(err.Error())
			}
		}))
	}
	if e.Hidden == nil {
		customer, seq := e.Customer, e.Seq
		what := fmt.Sprintf("the measurement of %s (VHS %s, VLAS %s, %s)", e.Time.Local().Format("2006-01-02 15:04"), fmtValue(e.VHS), fmtValue(e.VLAS), e.Kind)
		buttons = append(buttons, widget.NewButton("Remove...", func() { p.askRemove(id, customer, seq, what) }))
	}
	return container.NewBorder(nil, nil, nil, container.NewHBox(buttons...), label)
}

// askRemove asks for the reason and removes (hides) the entry, what
// naming it.
func (p *patientsTab) askRemove(id app.PatientID, customer string, seq uint64, what string) {
	p.askReason(id, what, func(reason string) error { return p.u.RemoveMeasurement(id, customer, seq, reason) })
}

// askReason asks why patient id's entry what is to be removed, in a
// reason field of a few lines, then calls remove with the reason.
func (p *patientsTab) askReason(id app.PatientID, what string, remove func(reason string) error) {
	w := p.u.opts.Window
	if w == nil {
		return
	}
	reason := widget.NewMultiLineEntry()
	reason.Wrapping = fyne.TextWrapWord
	reason.SetMinRowsVisible(3)
	reason.SetPlaceHolder("why, e.g. wrong patient, duplicate, unusable image")
	d := dialog.NewForm("Remove from "+id.String()+"'s history?", "Remove", "Cancel",
		[]*widget.FormItem{
			widget.NewFormItem("", newValueLabel("Remove "+what+"? It stays in the store, marked removed with the reason, and leaves the trend.")),
			widget.NewFormItem("Reason", reason),
		}, func(ok bool) {
			if !ok {
				return
			}
			if err := remove(reason.Text); err != nil {
				dialog.ShowError(err, w)
			}
		}, w)
	d.Resize(fyne.NewSize(560, 300))
	d.Show()
}

// usgRow is one screening with Remove... (hide it with a reason).
func (p *patientsTab) usgRow(id app.PatientID, v app.USGVisit) fyne.CanvasObject {
	label := newValueLabel(usgLine(v))
	if v.Hidden != nil {
		return label
	}
	seq := v.Seq
	what := fmt.Sprintf("the bloodwork screening of %s (%.0f%% chance of impaired concentration)", v.Time.Local().Format("2006-01-02 15:04"), 100*v.ProbabilityImpaired)
	return container.NewBorder(nil, nil, nil, widget.NewButton("Remove...", func() {
		p.askReason(id, what, func(reason string) error { return p.u.RemoveScreening(id, seq, reason) })
	}), label)
}

// usgLine is one screening with the values as entered.
func usgLine(v app.USGVisit) string {
	line := fmt.Sprintf("%s   %.0f%% chance of impaired concentration, %s   from %s", v.Time.Local().Format("2006-01-02 15:04"), 100*v.ProbabilityImpaired, v.RiskLabel, sourceName(v.Customer))
	if v.Hidden != nil {
		line = fmt.Sprintf("REMOVED %s (%s): %s", v.Hidden.Time.Local().Format("2006-01-02"), v.Hidden.Reason, line)
	}
	var vals []string
	if len(v.Entered) > 0 {
		for _, e := range v.Entered {
			vals = append(vals, fmt.Sprintf("%s %s %s", e.Name, strconv.FormatFloat(e.Value, 'f', -1, 64), e.Unit))
		}
	} else {
		names, units := app.BloodworkNames(), app.BloodworkUnits(app.UnitMgDL, app.UnitPerUL)
		for i, k := range app.BloodworkKeys() {
			if x, ok := v.Features[k]; ok {
				vals = append(vals, fmt.Sprintf("%s %s %s", names[i], strconv.FormatFloat(x, 'f', -1, 64), units[i]))
			}
		}
	}
	if len(vals) > 0 {
		line += "\n    values: " + strings.Join(vals, ", ")
	}
	if len(v.Corrections) > 0 {
		// API entries hold the spec's warnings, whose arrow the bundled
		// font lacks.
		line += "\n    corrected: " + strings.ReplaceAll(strings.Join(v.Corrections, "; "), "→", "to")
	}
	return line
}

// RemoveMeasurement hides a cardiac measurement with a reason (kept in
// the audit trail) and shows the patient again.
func (u *UI) RemoveMeasurement(id app.PatientID, customer string, seq uint64, reason string) error {
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	if _, err := u.svc.Patients.HideEntry(ctx, id, customer, seq, reason); err != nil {
		return fmt.Errorf("remove measurement: %w", err)
	}
	u.patients.Open(id)
	return nil
}

// RemoveScreening hides a bloodwork screening with a reason (kept in the
// audit trail) and shows the patient again.
func (u *UI) RemoveScreening(id app.PatientID, seq uint64, reason string) error {
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	if _, err := u.svc.Patients.HideScreening(ctx, id, seq, reason); err != nil {
		return fmt.Errorf("remove screening: %w", err)
	}
	u.patients.Open(id)
	return nil
}

// ReopenMeasurement opens an earlier measurement on the Review tab with
// its image and landmarks, for the patient it belongs to, to correct it.
// While Review holds unsaved work it asks first (confirmDiscard); an
// error after the question is shown in a dialog.
func (u *UI) ReopenMeasurement(id app.PatientID, customer string, seq uint64) error {
	if u.UnsavedWork() != "" && u.opts.Window != nil {
		u.confirmDiscard("open another measurement", func() {
			if err := u.reopenMeasurement(id, customer, seq); err != nil {
				u.showError(err)
			}
		}, nil)
		return nil
	}
	return u.reopenMeasurement(id, customer, seq)
}

// reopenMeasurement is ReopenMeasurement once nothing unsaved is left.
func (u *UI) reopenMeasurement(id app.PatientID, customer string, seq uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	m, err := u.svc.Patients.ReopenMeasurement(ctx, id, customer, seq)
	if err != nil {
		return fmt.Errorf("open measurement: %w", err)
	}
	if u.PatientID() != id.String() {
		u.SetPatientID(id)
	}
	u.ShowMeasurement(m, fmt.Sprintf("Measurement of %s, %s", id, m.Base.Time.Local().Format("2006-01-02 15:04")))
	return nil
}

// kindNote is a history line's kind: model, or * edited / * manual
// with the model's values beside.
func kindNote(e app.CardiacEntry) string {
	if !e.Kind.Clinician() {
		return string(e.Kind)
	}
	if e.ModelVHS == nil && e.ModelVLAS == nil {
		return fmt.Sprintf("* %s (model gave no values)", e.Kind)
	}
	return fmt.Sprintf("* %s (model VHS %s, VLAS %s)", e.Kind, fmtValue(e.ModelVHS), fmtValue(e.ModelVLAS))
}

func sourceName(customer string) string {
	if customer == app.DesktopCustomer {
		return "this desktop"
	}
	return "API client " + customer
}
