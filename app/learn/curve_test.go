package learn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"vetlens/app/learn"
	. "vetlens/app/learn/learntest"
)

// TestLearnCurve: a run hands the trainer its held-out cases (exactly
// those it does not train on) for the learning curve, keeps the curve the trainer wrote in
// its report and in the version's train.json, and LastCurve returns the
// newest run that has one; a trainer that writes none leaves none.
func TestLearnCurve(t *testing.T) {
	var specs []learn.TrainSpec
	want := Falling(5, 2.0, 0.7)
	r := NewRig(t, Trainer{Specs: &specs, Curve: want}, Models{})
	ctx := t.Context()
	if _, ok, err := r.Svc.LastCurve(ctx); ok || err != nil {
		t.Fatalf("a curve before any run: %v %v", ok, err)
	}
	run, err := r.Svc.Learn(ctx, learn.Options{Steps: 10}, nil)
	if err != nil || !run.Promoted {
		t.Fatalf("run: %v %s", err, run.Refusal())
	}
	// The held-out file is the pool less the training cases.
	read := func(path string) []string {
		var s []string
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return s
	}
	if len(specs) != 1 {
		t.Fatalf("specs %+v", specs)
	}
	train, held := read(specs[0].CasesFile), read(specs[0].EvalCasesFile)
	cases, err := learn.LoadPool(r.Layout.Pool())
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != run.HeldOut || len(train) != run.Train || len(held)+len(train) != len(cases) {
		t.Fatalf("held %d, train %d of %d cases; the run held out %d", len(held), len(train), len(cases), run.HeldOut)
	}
	for _, s := range held {
		if slices.Contains(train, s) {
			t.Errorf("%s is trained on and held out", s)
		}
	}
	if run.Curve == nil || !reflect.DeepEqual(run.Curve.Points, want) || run.Curve.Cases != run.HeldOut {
		t.Fatalf("run curve %+v, held out %d", run.Curve, run.HeldOut)
	}
	// Kept with the run's report and with the version.
	runs, err := r.Svc.Runs(ctx)
	if err != nil || len(runs) != 1 || !reflect.DeepEqual(runs[0].Curve, run.Curve) {
		t.Fatalf("report: %+v %v", runs, err)
	}
	b, err := os.ReadFile(filepath.Join(r.Layout.Versions(), run.Candidate, "train.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Curve learn.Curve `json:"heldout_curve"`
	}
	if err := json.Unmarshal(b, &tj); err != nil || !reflect.DeepEqual(tj.Curve.Points, want) {
		t.Fatalf("version's train.json %s: %v", b, err)
	}
	// A later run without a curve: LastCurve is still the first run's.
	run2, err := r.With(t, Trainer{NoCurve: true}).Learn(ctx, learn.Options{Steps: 10}, nil)
	if err != nil || run2.Curve != nil {
		t.Fatalf("run without a curve: %v %+v", err, run2.Curve)
	}
	last, ok, err := r.Svc.LastCurve(ctx)
	if err != nil || !ok || last.ID != run.ID {
		t.Fatalf("last curve of %s (%v %v), want %s", last.ID, ok, err, run.ID)
	}
}
