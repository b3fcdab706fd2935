package learn

import (
	"fmt"
	"math"
)

// Row is one line of a before/after table.
type Row struct {
	Metric, Before, After string
}

// Table is a run's before/after figures as rows (held-out clinic cases,
// then the phantom set), for the command line and the Learning panel.
func (r Run) Table() []Row {
	if r.Before == nil || r.After == nil {
		return nil
	}
	var rows []Row
	add := func(m string, f func(*Eval) string, a, z *Eval) { rows = append(rows, Row{m, f(a), f(z)}) }
	mae := func(e *Eval) string { return fmt.Sprintf("%.3f", e.VHSMAE) }
	within := func(e *Eval) string { return fmt.Sprintf("%.0f %%", 100*e.Within05) }
	codes := func(e *Eval) string {
		return fmt.Sprintf("%.0f %% / %.0f %%", 100*e.NoLandmarks, 100*e.Rejected)
	}
	rows = append(rows, Row{fmt.Sprintf("held-out clinic cases (%d)", r.After.Cases), r.Before.Version, r.After.Version})
	add("  VHS MAE (v)", mae, r.Before, r.After)
	add("  within 0.5 v", within, r.Before, r.After)
	add("  code 5 / code 6", codes, r.Before, r.After)
	add("  VHS returned: share, MAE, worst (v)", func(e *Eval) string {
		return fmt.Sprintf("%.0f %%, %.2f, %.2f", 100*e.Answered, e.AnsweredMAE, e.AnsweredMaxErr)
	}, r.Before, r.After)
	add("  spread bound", func(e *Eval) string { return fmt.Sprintf("%.4g", e.SpreadBound) }, r.Before, r.After)
	if c := r.Column; c != nil {
		rows = append(rows, c.row())
	}
	for i, l := range r.After.Landmarks {
		if l.N == 0 {
			continue
		}
		b := r.Before.Landmarks[i]
		rows = append(rows, Row{"  " + l.Name + " px (% diag)", fmt.Sprintf("%.1f (%.2f)", b.Px, b.PctDiag), fmt.Sprintf("%.1f (%.2f)", l.Px, l.PctDiag)})
	}
	if r.PhantomBefore != nil && r.PhantomAfter != nil {
		rows = append(rows, Row{fmt.Sprintf("phantom regression set (%d)", r.PhantomAfter.Cases), "", ""})
		add("  VHS MAE (v)", mae, r.PhantomBefore, r.PhantomAfter)
		add("  within 0.5 v", within, r.PhantomBefore, r.PhantomAfter)
	}
	return rows
}

// Margin is the held-out clinic cases' VHS MAE gain, before - after
// (positive: the candidate is better); NaN before evaluation.
func (r Run) Margin() float64 {
	if r.Before == nil || r.After == nil {
		return math.NaN()
	}
	return r.Before.VHSMAE - r.After.VHSMAE
}
