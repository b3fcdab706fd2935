package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/learn"
	"vetlens/app/learn/learntest"
	"vetlens/engine/cardiac"
)

// learningUI is the UI with a Learning tab on learntest's doubles;
// runEnded receives when a background run has ended.
func learningUI(t *testing.T, tr learntest.Trainer) (*UI, *learntest.Rig, chan struct{}) {
	t.Helper()
	r := learntest.NewRig(t, tr, learntest.Models{})
	u, _, _ := newTestUIWith(t, false, nil, Options{Learn: r.Svc})
	ended := make(chan struct{}, 2)
	u.learning.done = func() { ended <- struct{}{} }
	u.SelectTab("Learning")
	return u, r, ended
}

func waitRun(t *testing.T, ended chan struct{}) {
	t.Helper()
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the learning run did not end")
	}
}

// TestLearningPanel: the panel shows the pool by kind and the version in
// use; Start runs in the background to a promoted version with its
// before/after table; Use rolls back to the shipped models; a
// --no-promote-like candidate is promoted with Promote.
func TestLearningPanel(t *testing.T) {
	u, r, ended := learningUI(t, learntest.Trainer{})
	lt := u.learning
	if !strings.Contains(lt.pool.Text, "48 cases of 24 patients (24 edited, 24 placed by hand, 0 imported DogHeart)") {
		t.Errorf("pool %q", lt.pool.Text)
	}
	if !strings.Contains(lt.inUse.Text, "v3.1.0-synthetic-xraysim.1 (shipped)") {
		t.Errorf("in use %q", lt.inUse.Text)
	}
	test.Tap(lt.start)
	if lt.cancel.Disabled() || !lt.start.Disabled() {
		t.Error("Start not disabled while running")
	}
	waitRun(t, ended)
	if lt.bar.Value != 1 || !strings.Contains(lt.progress.Text, "promoted v3.1.0-clinic.1") {
		t.Errorf("progress %v %q", lt.bar.Value, lt.progress.Text)
	}
	if !strings.Contains(lt.inUse.Text, "v3.1.0-clinic.1 (promoted here)") || r.Live.ModelVersion() != "v3.1.0-clinic.1" {
		t.Errorf("in use %q, live %s", lt.inUse.Text, r.Live.ModelVersion())
	}
	if len(lt.runList) != 1 || !strings.Contains(lt.detail.Text, "VHS MAE (v)") || !strings.Contains(lt.detail.Text, "held-out clinic cases (12)") {
		t.Errorf("runs %d, detail:\n%s", len(lt.runList), lt.detail.Text)
	}
	if !lt.promote.Disabled() {
		t.Error("Promote enabled for a promoted run")
	}
	// Rollback.
	lt.versions.SetSelected("v3.1.0-synthetic-xraysim.1")
	test.Tap(lt.use)
	if !strings.Contains(lt.inUse.Text, "(shipped)") || r.Live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" {
		t.Errorf("after rollback: %q, live %s", lt.inUse.Text, r.Live.ModelVersion())
	}
	// A candidate kept without promotion is promoted from the panel.
	run, err := r.Svc.Learn(t.Context(), learn.Options{NoPromote: true}, nil)
	if err != nil || !run.Promotable {
		t.Fatalf("no-promote run: %v %+v", err, run.Rules)
	}
	lt.refresh()
	lt.runs.Select(0)
	if lt.promote.Disabled() {
		t.Fatalf("Promote disabled for %s", runRow(lt.runList[0]))
	}
	test.Tap(lt.promote)
	if r.Live.ModelVersion() != run.Candidate || !strings.Contains(lt.status.Text, "promoted") {
		t.Errorf("after Promote: live %s, status %q", r.Live.ModelVersion(), lt.status.Text)
	}
}

// TestLearningCancel: Cancel stops a running fine-tune; the version in
// use stays and the run shows as cancelled.
func TestLearningCancel(t *testing.T) {
	started := make(chan struct{})
	u, r, ended := learningUI(t, learntest.Trainer{Block: true, Started: started})
	lt := u.learning
	test.Tap(lt.start)
	<-started
	test.Tap(lt.cancel)
	waitRun(t, ended)
	if !strings.Contains(lt.progress.Text, "cancelled") || lt.start.Disabled() {
		t.Errorf("progress %q", lt.progress.Text)
	}
	if r.Live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" || !strings.Contains(lt.inUse.Text, "(shipped)") {
		t.Errorf("in use %q", lt.inUse.Text)
	}
	if len(lt.runList) != 1 || lt.runList[0].Status != learn.StatusCancelled {
		t.Errorf("runs %+v", lt.runList)
	}
}

// TestLearningSmallPool: with fewer cases than a run needs, Start is
// disabled and the pool line says how many are needed; without a
// learning service the tab says learning is not available.
func TestLearningSmallPool(t *testing.T) {
	r := learntest.NewRig(t, learntest.Trainer{}, learntest.Models{})
	os.RemoveAll(r.Layout.Pool())
	learntest.WritePool(t, r.Layout.Pool(), learn.MinCases-1, 3, learntest.Truth{})
	u, _, _ := newTestUIWith(t, false, nil, Options{Learn: r.Svc})
	u.SelectTab("Learning")
	if lt := u.learning; !lt.start.Disabled() || !strings.Contains(lt.pool.Text, fmt.Sprintf("%d cases", learn.MinCases-1)) {
		t.Errorf("start disabled %v, pool %q", lt.start.Disabled(), lt.pool.Text)
	}
	// Without a learning service the tab says learning is unavailable.
	u2, _, _ := newTestUIWith(t, false, nil, Options{})
	if lbl, ok := u2.learning.content.(*widget.Label); !ok || !strings.Contains(lbl.Text, "not available") {
		t.Errorf("tab without a learning service: %T", u2.learning.content)
	}
}

// TestSavedCorrectionsCountInThePool: a correction saved on Review
// counts in the Learning tab's pool at once (no export and import),
// once; a saved model measurement is said not to count, and why; an
// empty pool says how a clinic builds one.
func TestSavedCorrectionsCountInThePool(t *testing.T) {
	u, r, _ := learningUI(t, learntest.Trainer{})
	lt := u.learning
	u.SetPatientID("Rex-1")
	u.SelectTab("Review")
	truth := showPhantomResult(t, u)
	if err := u.SaveReview(); err != nil { // the model's values
		t.Fatal(err)
	}
	dragTo(u.review.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 8})
	if err := u.SaveReview(); err != nil { // corrected
		t.Fatal(err)
	}
	for i := range 2 {
		u.SelectTab("Learning")
		if !strings.Contains(lt.pool.Text, "49 cases of 25 patients (25 edited, 24 placed by hand") {
			t.Fatalf("visit %d: pool %q; %q", i, lt.pool.Text, lt.counts.Text)
		}
		if added := strings.Contains(lt.counts.Text, "Added now from the saved measurements: 1 (1 edited"); added != (i == 0) {
			t.Errorf("visit %d: %q", i, lt.counts.Text)
		}
		if !strings.Contains(lt.counts.Text, "1 saved model measurements do not count") {
			t.Errorf("visit %d: no reason for the model measurement: %q", i, lt.counts.Text)
		}
		u.SelectTab("Review")
	}
	if err := os.RemoveAll(r.Layout.Pool()); err != nil {
		t.Fatal(err)
	}
	rec, err := u.svc.Patients.Patient(t.Context(), "Rex-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Cardiac {
		if e.Kind == app.MeasurementEdited {
			if _, err := u.svc.Patients.HideEntry(t.Context(), "Rex-1", app.DesktopCustomer, e.Seq, "test: an empty pool"); err != nil {
				t.Fatal(err)
			}
		}
	}
	u.SelectTab("Learning")
	if !strings.Contains(lt.counts.Text, "The pool is empty") || !strings.Contains(lt.counts.Text, "save") {
		t.Fatalf("empty pool: %q (%q)", lt.counts.Text, lt.pool.Text)
	}
}

// TestLearningCurveAndEstimate: the tab draws the last run's held-out
// curve as the trainer recorded it (falling MAE: dots to the right and
// down), and says how many more cases a gain needs by the app's rule:
// not enough runs after one, an estimate once the recorded runs allow
// one, for the gain entered.
func TestLearningCurveAndEstimate(t *testing.T) {
	want := learntest.Falling(5, 1.5, 0.5)
	u, r, ended := learningUI(t, learntest.Trainer{Curve: want})
	lt := u.learning
	if len(lt.curve.Points()) != 0 || !strings.Contains(lt.curveNote.Text, "No run has recorded") {
		t.Fatalf("before any run: %d points, %q", len(lt.curve.Points()), lt.curveNote.Text)
	}
	test.Tap(lt.start)
	waitRun(t, ended)
	if got := lt.curve.Points(); !reflect.DeepEqual(got, want) {
		t.Fatalf("curve %+v, the trainer wrote %+v", got, want)
	}
	if !strings.Contains(lt.curveNote.Text, "v3.1.0-clinic.1") || !strings.Contains(lt.curveNote.Text, "1.50 v at step 0") {
		t.Errorf("curve note %q", lt.curveNote.Text)
	}
	test.WidgetRenderer(lt.curve).Layout(fyne.NewSize(400, 200))
	dots := lt.curve.Dots()
	if len(dots) != len(want) {
		t.Fatalf("%d dots for %d points", len(dots), len(want))
	}
	for i := 1; i < len(dots); i++ {
		if !(dots[i].X > dots[i-1].X && dots[i].Y > dots[i-1].Y) {
			t.Errorf("dot %d at %v after %v: a falling curve goes right and down", i, dots[i], dots[i-1])
		}
	}
	if !strings.Contains(lt.estimate.Text, "Not enough runs yet") {
		t.Errorf("estimate after one run: %q", lt.estimate.Text)
	}
	// Three earlier runs of the same base on 30, 60 and 120 cases whose
	// held-out MAE falls as 3 n^-0.5.
	for i, n := range []int{30, 60, 120} {
		run := learn.Run{ID: fmt.Sprintf("2026110%dT090000000Z", i+1), Status: learn.StatusDone, Base: "v3.1.0-synthetic-xraysim.1",
			Candidate: fmt.Sprintf("v3.1.0-clinic.%d", 10+i), Started: time.Date(2026, 11, 1+i, 9, 0, 0, 0, time.UTC), Train: n,
			After: &learn.Eval{Cases: 10, VHSMAE: 3 / math.Sqrt(float64(n))}}
		b, _ := json.Marshal(run)
		if err := os.WriteFile(filepath.Join(r.Layout.Runs(), run.ID+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u.SelectTab("Review")
	u.SelectTab("Learning")
	lt.gain.SetText("0.05")
	runs, err := r.Svc.Runs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if e := learn.EstimateCases(runs, 0.05); !e.OK || lt.estimate.Text != e.String() || !strings.Contains(lt.estimate.Text, "needs about") {
		t.Errorf("estimate %q, the rule says %q", lt.estimate.Text, e)
	}
	lt.gain.SetText("a lot")
	if !strings.Contains(lt.estimate.Text, "Enter the gain") {
		t.Errorf("a gain that is not a number: %q", lt.estimate.Text)
	}
}

// TestPoolSyncText: the tab says what a sync added, what a later
// correction updated and why some saved measurements cannot count.
func TestPoolSyncText(t *testing.T) {
	got := strings.Join(poolSyncText(app.DatasetSummary{Written: 3, Edited: 2, Manual: 1, Updated: 2, Skipped: 1, Uncorrected: 4}), " ")
	for _, want := range []string{"Added now from the saved measurements: 3 (2 edited, 1 placed by hand)",
		"now with the later landmarks: 2", "1 saved corrections cannot count", "4 saved model measurements do not count"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := poolSyncText(app.DatasetSummary{}); len(got) != 0 {
		t.Errorf("nothing to say, said %q", got)
	}
}
