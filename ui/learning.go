package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/learn"
)

// learningTab is the Learning panel (docs/learning.md): the pool by
// kind, a fine-tuning run in the background with its progress and
// Cancel, the last runs with their before/after tables, Promote, the
// versions with Use (rollback), the version in use, the learning curve
// of the last run (held-out VHS MAE against steps) and how many more
// cases a gain needs (learn.EstimateCases).
type learningTab struct {
	u       *UI
	svc     *learn.Service
	content fyne.CanvasObject

	inUse *widget.Label
	pool  *widget.Label
	// counts says what the clinic's saved measurements add to the pool,
	// why some cannot count, and, with an empty pool, how to build one.
	counts   *widget.Label
	start    *widget.Button
	cancel   *widget.Button
	bar      *widget.ProgressBar
	progress *widget.Label
	runs     *widget.List
	detail   *widget.Label
	promote  *widget.Button
	versions *widget.Select
	use      *widget.Button
	status   *widget.Label
	// curve is the held-out learning curve of the last run that has one
	// (or of the selected run), curveNote says whose and what it is.
	curve     *CurvePlot
	curveNote *widget.Label
	// gain is the gain asked for (v); estimate how many cases it needs.
	gain     *widget.Entry
	estimate *widget.Label

	runList  []learn.Run
	selected string // the run shown
	stop     context.CancelFunc
	// done, when set (tests), is called when a background run ends.
	done func()
}

func newLearningTab(u *UI, svc *learn.Service) *learningTab {
	t := &learningTab{u: u, svc: svc, inUse: newValueLabel(""), pool: newValueLabel(""), counts: newValueLabel(""), bar: widget.NewProgressBar(),
		progress: newValueLabel(""), detail: newValueLabel(""), status: newValueLabel("")}
	t.detail.TextStyle = fyne.TextStyle{Monospace: true}
	t.curve, t.curveNote, t.estimate = NewCurvePlot(), newValueLabel(""), newValueLabel("")
	t.gain = widget.NewEntry()
	t.gain.SetText(fmt.Sprintf("%.2f", defaultGain))
	t.gain.OnChanged = func(string) { t.showEstimate() }
	t.start = widget.NewButton("Start learning", t.startRun)
	t.cancel = widget.NewButton("Cancel", func() {
		if t.stop != nil {
			t.stop()
		}
	})
	t.cancel.Disable()
	t.promote = widget.NewButton("Promote", t.promoteSelected)
	t.promote.Disable()
	t.versions = widget.NewSelect(nil, nil)
	t.use = widget.NewButton("Use this version", t.useSelected)
	t.runs = widget.NewList(func() int { return len(t.runList) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(runRow(t.runList[i])) })
	t.runs.OnSelected = func(i widget.ListItemID) {
		if i < len(t.runList) {
			t.show(t.runList[i])
		}
	}
	if svc == nil {
		t.content = widget.NewLabel("Learning is not available: the model versions could not be opened (see the log).")
		return t
	}
	head := container.NewVBox(
		widget.NewLabelWithStyle("Learning from the clinic's corrections", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.inUse, t.pool, t.counts,
		container.NewBorder(nil, nil, nil, container.NewHBox(t.start, t.cancel), t.bar),
		t.progress,
		container.NewBorder(nil, nil, widget.NewLabel("Versions"), t.use, t.versions),
		t.status,
		widget.NewSeparator(),
		widget.NewLabel("Runs (newest first): select one for its before/after table"),
	)
	learning := container.NewVBox(
		widget.NewLabelWithStyle("Learning curve", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.curveNote, t.curve,
		container.NewBorder(nil, nil, widget.NewLabel("Cases for a gain of (v)"), nil, t.gain),
		t.estimate)
	left := container.NewVSplit(t.runs, container.NewVScroll(learning))
	left.Offset = 0.25
	split := container.NewHSplit(left, container.NewBorder(nil, t.promote, nil, nil, container.NewVScroll(t.detail)))
	split.Offset = 0.4
	t.content = container.NewBorder(head, nil, nil, nil, split)
	t.refresh()
	return t
}

// runRow is one line of the run list.
func runRow(r learn.Run) string {
	row := fmt.Sprintf("%s  %s  %s", r.Started.Local().Format("2006-01-02 15:04"), r.Candidate, r.Status)
	switch {
	case r.Promoted:
		row += ", promoted"
	case r.Status == learn.StatusDone && r.Promotable:
		row += ", promotable"
	case r.Status == learn.StatusDone:
		row += ", refused"
	}
	return row
}

// emptyPoolText is how a clinic builds a pool, said while it is empty.
const emptyPoolText = "The pool is empty. It fills as the clinic works: correct the model's landmarks on Review (drag them, " +
	"or place all 7 by hand) and save; every saved correction counts here with its image. A DogHeart folder can be added with vetlens dataset import."

// poolSyncText says what app.SyncPool added to the pool and why saved
// measurements that are not in it cannot count.
func poolSyncText(s app.DatasetSummary) []string {
	var out []string
	if s.Written > 0 {
		out = append(out, fmt.Sprintf("Added now from the saved measurements: %d (%d edited, %d placed by hand).", s.Written, s.Edited, s.Manual))
	}
	if s.Updated > 0 {
		out = append(out, fmt.Sprintf("Corrected again since they joined, now with the later landmarks: %d.", s.Updated))
	}
	if s.Skipped > 0 {
		out = append(out, fmt.Sprintf("%d saved corrections cannot count: no image was kept with them (measurements from API clients, or saved before images were kept).", s.Skipped))
	}
	if s.Uncorrected > 0 {
		out = append(out, fmt.Sprintf("%d saved model measurements do not count: only landmarks a clinician moved or placed by hand teach the models.", s.Uncorrected))
	}
	return out
}

// refresh reloads the version in use, the pool, the versions and the
// runs.
func (t *learningTab) refresh() {
	if t.svc == nil {
		return
	}
	ctx := context.Background()
	if a, err := t.svc.Active(ctx); err != nil {
		t.inUse.SetText("Version in use: " + err.Error())
	} else {
		what := "promoted here"
		if a.Shipped {
			what = "shipped"
		}
		t.inUse.SetText(fmt.Sprintf("Version in use: %s (%s)", a.Name, what))
	}
	var counts []string
	if t.stop == nil { // not while a run reads the pool
		sum, err := t.u.svc.Learning.SyncPool(ctx, t.svc.Layout().Pool(), t.svc.Layout().Salt())
		if err != nil {
			counts = append(counts, "The saved corrections could not be added to the pool: "+err.Error())
		} else {
			counts = append(counts, poolSyncText(sum)...)
		}
	}
	enough := false
	if p, err := t.svc.Pool(ctx); err != nil {
		t.pool.SetText("Pool: " + err.Error())
	} else {
		enough = p.Cases >= learn.MinCases
		t.pool.SetText(fmt.Sprintf("Pool: %d cases of %d patients (%d edited, %d placed by hand, %d imported DogHeart); a run needs at least %d",
			p.Cases, p.Patients, p.ByKind["edited"], p.ByKind["manual"], p.ByKind["dogheart"], learn.MinCases))
		if p.Cases == 0 {
			counts = append(counts, emptyPoolText)
		}
	}
	t.counts.SetText(strings.Join(counts, " "))
	if t.stop == nil { // not while a run is going
		if enough {
			t.start.Enable()
		} else {
			t.start.Disable()
		}
	}
	if vs, err := t.svc.Versions(ctx); err == nil {
		var names []string
		sel := ""
		for _, v := range vs {
			names = append(names, v.Name)
			if v.Active {
				sel = v.Name
			}
		}
		t.versions.Options = names
		t.versions.SetSelected(sel)
	}
	runs, err := t.svc.Runs(ctx)
	if err != nil {
		t.status.SetText(err.Error())
	}
	t.runList = runs
	t.runs.Refresh()
	if r, ok, err := t.svc.LastCurve(ctx); err != nil {
		t.curveNote.SetText(err.Error())
	} else if ok {
		t.showCurve(r)
	} else {
		t.showCurve(learn.Run{})
	}
	for _, r := range runs {
		if r.ID == t.selected {
			t.show(r)
		}
	}
	t.showEstimate()
}

// defaultGain is the gain (v) the estimate is first asked for.
const defaultGain = 0.1

// showCurve draws r's held-out learning curve (none: say so).
func (t *learningTab) showCurve(r learn.Run) {
	if r.Curve == nil || len(r.Curve.Points) == 0 {
		t.curve.SetPoints(nil)
		t.curveNote.SetText("No run has recorded a learning curve yet.")
		return
	}
	c := r.Curve
	first, last := c.Points[0], c.Points[len(c.Points)-1]
	t.curve.SetPoints(c.Points)
	t.curveNote.SetText(fmt.Sprintf("Run %s (%s): held-out VHS MAE %.2f v at step %.0f, %.2f v at step %.0f, on %d held-out cases "+
		"(the trainer's measure: the models' raw landmarks, without the product's guards).",
		r.Started.Local().Format("2006-01-02 15:04"), r.Candidate, first.VHSMAE, first.Step, last.VHSMAE, last.Step, c.Cases))
}

// showEstimate says how many more cases the gain entered needs.
func (t *learningTab) showEstimate() {
	gain, err := strconv.ParseFloat(strings.TrimSpace(t.gain.Text), 64)
	if err != nil {
		t.estimate.SetText("Enter the gain in held-out VHS MAE, in vertebrae (e.g. 0.1).")
		return
	}
	e, err := t.svc.CasesForGain(context.Background(), gain)
	if err != nil {
		t.estimate.SetText(err.Error())
		return
	}
	t.estimate.SetText(e.String())
}

// show puts a run's table, rules and outcome on the right.
func (t *learningTab) show(r learn.Run) {
	t.selected = r.ID
	if r.Curve != nil && len(r.Curve.Points) > 0 {
		t.showCurve(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s: %s -> %s (%s)\n", r.ID, r.Base, r.Candidate, r.Status)
	if r.Error != "" {
		fmt.Fprintf(&b, "%s\n", r.Error)
	}
	fmt.Fprintf(&b, "Trained on %d cases, %d held out (grouped by patient), %.0f s of training\n\n", r.Train, r.HeldOut, r.TrainSeconds)
	if rows := r.Table(); len(rows) > 0 {
		fmt.Fprintf(&b, "%-34s %-28s %s\n", "", "before", "after")
		for _, row := range rows {
			fmt.Fprintf(&b, "%-34s %-28s %s\n", row.Metric, row.Before, row.After)
		}
	}
	for _, x := range r.Rules {
		mark := "ok  "
		if !x.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "\n%s %s: %s", mark, x.Name, x.Detail)
	}
	if r.Status == learn.StatusDone {
		fmt.Fprintf(&b, "\n\n%s", r.Decision())
	}
	t.detail.SetText(b.String())
	if r.Promotable && !r.Promoted && t.stop == nil {
		t.promote.Enable()
	} else {
		t.promote.Disable()
	}
}

// startRun runs Learn in the background with progress on the bar.
func (t *learningTab) startRun() {
	ctx, cancel := context.WithCancel(context.Background())
	t.stop = cancel
	t.start.Disable()
	t.promote.Disable()
	t.cancel.Enable()
	t.bar.SetValue(0)
	t.progress.SetText("Starting...")
	go func() {
		run, err := t.svc.Learn(ctx, learn.Options{}, func(p learn.Progress) {
			fyne.Do(func() {
				t.bar.SetValue(p.Fraction)
				line := p.Stage
				if p.Member > 0 {
					line += fmt.Sprintf(": model %d, step %d of %d", p.Member, p.Step, p.Steps)
				}
				if p.Message != "" {
					line += ": " + p.Message
				}
				t.progress.SetText(line)
			})
		})
		cancel()
		fyne.Do(func() {
			t.stop = nil
			t.start.Enable()
			t.cancel.Disable()
			switch {
			case err != nil:
				t.progress.SetText(err.Error())
			default:
				t.bar.SetValue(1)
				t.progress.SetText(run.Decision())
			}
			if run.ID != "" {
				t.selected = run.ID
			}
			t.refresh()
			if t.done != nil {
				t.done()
			}
		})
	}()
}

// promoteSelected promotes the shown run's candidate.
func (t *learningTab) promoteSelected() {
	v, err := t.svc.Promote(context.Background(), t.selected)
	if err != nil {
		t.status.SetText(err.Error())
	} else {
		t.status.SetText(v.Name + " promoted: it is in use now.")
	}
	t.refresh()
}

// useSelected makes the chosen version the one in use (rollback).
func (t *learningTab) useSelected() {
	name := t.versions.Selected
	if name == "" {
		return
	}
	v, err := t.svc.Use(context.Background(), name)
	if err != nil {
		t.status.SetText(err.Error())
	} else {
		t.status.SetText(v.Name + " is in use now.")
	}
	t.refresh()
}
