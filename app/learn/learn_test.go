package learn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"vetlens/app/learn"
	. "vetlens/app/learn/learntest"
	"vetlens/engine/cardiac"
)

// TestSplit: patients never straddle the split, about a quarter is held
// out, the seed fixes it, and pools too small or with too few patients
// are refused with the reason.
func TestSplit(t *testing.T) {
	mk := func(n, perPatient int) []learn.Case {
		var cs []learn.Case
		for i := range n {
			p := ""
			if perPatient > 0 {
				p = string(rune('A'+i/perPatient%26)) + string(rune('a'+i/perPatient/26))
			}
			cs = append(cs, learn.Case{Stem: string(rune('a'+i%26)) + string(rune('a'+i/26)), Patient: p})
		}
		return cs
	}
	tests := []struct {
		name    string
		cases   []learn.Case
		wantErr string
	}{
		{"150 cases, 3 per patient", mk(150, 3), ""},
		{"60 cases without patients", mk(60, 0), ""},
		{"too few cases", mk(learn.MinCases-1, 1), "at least"},
		{"two patients only", mk(60, 30), "too few distinct patients"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, held, err := learn.Split(tc.cases, learn.HoldOut, 7)
			if tc.wantErr != "" {
				if !errors.Is(err, learn.ErrPoolTooSmall) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(train)+len(held) != len(tc.cases) {
				t.Fatalf("%d + %d cases of %d", len(train), len(held), len(tc.cases))
			}
			share := float64(len(held)) / float64(len(tc.cases))
			if share < 0.2 || share > 0.3 {
				t.Errorf("held out %.2f of the cases", share)
			}
			side := map[string]bool{}
			for _, c := range train {
				side[c.Patient] = true
			}
			for _, c := range held {
				if c.Patient != "" && side[c.Patient] {
					t.Errorf("patient %s on both sides", c.Patient)
				}
			}
			_, held2, _ := learn.Split(tc.cases, learn.HoldOut, 7)
			_, held3, _ := learn.Split(tc.cases, learn.HoldOut, 8)
			if stems(held) != stems(held2) {
				t.Error("same seed, different split")
			}
			if stems(held) == stems(held3) {
				t.Error("another seed gave the same split")
			}
		})
	}
}

func stems(cs []learn.Case) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Stem + ",")
	}
	return b.String()
}

// TestPairedBootstrap: the interval brackets the mean difference, lies
// below zero only for a consistent improvement, and is reproducible.
func TestPairedBootstrap(t *testing.T) {
	const n = 40
	before, better, same, noisy := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		before[i] = 0.5 + 0.01*float64(i%9)
		better[i] = before[i] - 0.1 - 0.02*float64(i%3)
		same[i] = before[i]
		noisy[i] = before[i] + 0.3*math.Sin(float64(i)) // mean change near 0
	}
	tests := []struct {
		name      string
		after     []float64
		wantBelow bool
	}{
		{"consistently better", better, true},
		{"identical", same, false},
		{"noise around zero", noisy, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv := learn.PairedBootstrap(before, tc.after, learn.Resamples, 3)
			if !(iv.Lo <= iv.Mean && iv.Mean <= iv.Hi) {
				t.Fatalf("interval %+v does not hold its mean", iv)
			}
			if (iv.Hi < 0) != tc.wantBelow {
				t.Errorf("interval [%.3f, %.3f]: below zero %v, want %v", iv.Lo, iv.Hi, iv.Hi < 0, tc.wantBelow)
			}
			if again := learn.PairedBootstrap(before, tc.after, learn.Resamples, 3); again != iv {
				t.Errorf("same seed, %+v then %+v", iv, again)
			}
		})
	}
	if iv := learn.PairedBootstrap(nil, nil, learn.Resamples, 1); !math.IsNaN(iv.Hi) {
		t.Errorf("no cases gave %+v", iv)
	}
}

// TestLearnPromotesAndRollsBack: a candidate that measures the held-out
// cases better is promoted as v3.1.0-clinic.1 with its card, the live
// engine serves it, rollback to the shipped models and forward again
// work, and a second run that does not improve is refused.
func TestLearnPromotesAndRollsBack(t *testing.T) {
	var specs []learn.TrainSpec
	r := NewRig(t, Trainer{Specs: &specs}, Models{})
	svc := r.Svc
	ctx := t.Context()
	var fracs []float64
	run, err := svc.Learn(ctx, learn.Options{Steps: 10}, func(p learn.Progress) { fracs = append(fracs, p.Fraction) })
	if err != nil {
		t.Fatal(err)
	}
	if !run.Promoted || run.Candidate != "v3.1.0-clinic.1" || run.Status != learn.StatusDone {
		t.Fatalf("run %s promoted %v status %s: %s", run.Candidate, run.Promoted, run.Status, run.Refusal())
	}
	if run.Train+run.HeldOut != 48 || run.HeldOut != 12 {
		t.Errorf("split %d + %d", run.Train, run.HeldOut)
	}
	if !(run.After.VHSMAE < run.Before.VHSMAE) || run.After.VHSMAE != 0 || run.Bootstrap.Hi >= 0 || !(run.Margin() > 0) {
		t.Errorf("MAE %.3f -> %.3f, interval %+v", run.Before.VHSMAE, run.After.VHSMAE, run.Bootstrap)
	}
	if run.Before.Landmarks[cardiac.HeartBottom].Px != 15 || run.After.Landmarks[cardiac.HeartTop].Px != 0 {
		t.Errorf("landmark errors before %+v after %+v", run.Before.Landmarks, run.After.Landmarks)
	}
	if run.PhantomAfter.Cases != 5 {
		t.Errorf("phantom set of %d", run.PhantomAfter.Cases)
	}
	if rows := run.Table(); len(rows) < 8 || rows[1].Metric != "  VHS MAE (v)" || rows[1].After != "0.000" {
		t.Errorf("table %+v", rows)
	}
	for i := 1; i < len(fracs); i++ {
		if fracs[i] < fracs[i-1] {
			t.Fatalf("progress went back: %v", fracs)
		}
	}
	if fracs[len(fracs)-1] != 1 {
		t.Errorf("progress ended at %v", fracs[len(fracs)-1])
	}
	// The trainer got the models in use, the new version and a cases
	// file listing the training side only.
	if len(specs) != 1 || specs[0].Base != r.Shipped || specs[0].Version != "v3.1.0-clinic.1" {
		t.Fatalf("specs %+v", specs)
	}
	if got := r.Live.ModelVersion(); got != "v3.1.0-clinic.1" {
		t.Errorf("live engine serves %s", got)
	}
	card, _ := os.ReadFile(filepath.Join(r.Layout.Versions(), "v3.1.0-clinic.1", CardFile))
	if !strings.Contains(string(card), "## Clinic version v3.1.0-clinic.1") || !strings.Contains(string(card), "36 of the clinic's 48") {
		t.Errorf("card:\n%s", card)
	}
	vs, err := svc.Versions(ctx)
	if err != nil || len(vs) != 2 || !vs[1].Active || vs[0].Active || !vs[0].Shipped {
		t.Fatalf("versions %+v %v", vs, err)
	}

	// Rollback to the shipped models, and forward again.
	for _, want := range []string{learn.ShippedAlias, "v3.1.0-clinic.1", "v3.1.0-synthetic-xraysim.1"} {
		v, err := svc.Use(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := svc.Active(ctx)
		if a.Name != v.Name || r.Live.ModelVersion() != v.Name {
			t.Errorf("use %s: active %s, live %s", want, a.Name, r.Live.ModelVersion())
		}
	}
	if _, err := svc.Use(ctx, "v3.1.0-clinic.9"); !errors.Is(err, learn.ErrUnknownVersion) {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := svc.Use(ctx, "../../etc"); !errors.Is(err, learn.ErrUnknownVersion) {
		t.Errorf("path as version: %v", err)
	}
	svc.Use(ctx, "v3.1.0-clinic.1")

	// From clinic.1, clinic.2 measures the same: refused, not promoted,
	// the active version stays.
	run2, err := svc.Learn(ctx, learn.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run2.Candidate != "v3.1.0-clinic.2" || run2.Base != "v3.1.0-clinic.1" || run2.Promoted || run2.Promotable {
		t.Fatalf("second run %+v", run2)
	}
	if !strings.Contains(run2.Refusal(), "clinic held-out cases") {
		t.Errorf("refusal %q", run2.Refusal())
	}
	if a, _ := svc.Active(ctx); a.Name != "v3.1.0-clinic.1" {
		t.Errorf("active %s after a refused run", a.Name)
	}
	if _, err := svc.Promote(ctx, run2.ID); err == nil || !strings.Contains(err.Error(), "did not hold") {
		t.Errorf("promote a refused run: %v", err)
	}
	runs, _ := svc.Runs(ctx)
	if len(runs) != 2 || runs[0].ID != run2.ID {
		t.Errorf("runs %d, newest %s", len(runs), runs[0].ID)
	}
}

// TestFollow: a version made active by another process (another
// Service on the same data directory) is served after one poll.
func TestFollow(t *testing.T) {
	r := NewRig(t, Trainer{}, Models{})
	if _, err := r.Svc.Learn(t.Context(), learn.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	other := NewRig(t, Trainer{}, Models{}) // another server's live engine...
	follower := other.Live
	fsvc, err := learn.New(learn.Config{Layout: r.Layout, Shipped: r.Shipped, Models: r.Models,
		Registry: learn.FileRegistry{Path: r.Layout.ActiveFile(), Versions: r.Layout.Versions()}}) // ...on r's data
	if err != nil {
		t.Fatal(err)
	}
	fsvc.Attach(follower, Loader)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go fsvc.Follow(ctx, 10*time.Millisecond, nil)
	for _, want := range []string{"v3.1.0-clinic.1", "v3.1.0-synthetic-xraysim.1"} {
		if want != "v3.1.0-clinic.1" {
			r.Svc.Use(t.Context(), want)
		}
		deadline := time.Now().Add(5 * time.Second)
		for follower.ModelVersion() != want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := follower.ModelVersion(); got != want {
			t.Errorf("follower serves %s, want %s", got, want)
		}
	}
}

// TestLearnRefusals: each failing rule refuses promotion and says so;
// --no-promote keeps a promotable candidate for Promote.
func TestLearnRefusals(t *testing.T) {
	tests := []struct {
		name      string
		models    Models
		opts      learn.Options
		wantRule  string // "" : promotable
		promoteOK bool
	}{
		{"phantom regression", Models{PhantomWorse: true}, learn.Options{}, "phantom regression set", false},
		{"reference outputs", Models{Broken: "v3.1.0-clinic.1"}, learn.Options{}, "reference outputs", false},
		{"no gain", Models{Better: func(string) bool { return false }}, learn.Options{}, "clinic held-out cases", false},
		// 18 px with a 10 px vertebra: better than the 30 px before, still
		// off by more than MaxPromotedVHSMAE.
		{"better but inaccurate", Models{Offset: 30, Residual: 18}, learn.Options{}, "clinic accuracy", false},
		{"better and accurate enough", Models{Offset: 30, Residual: 5}, learn.Options{NoPromote: true}, "", true},
		{"no promote", Models{}, learn.Options{NoPromote: true}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRig(t, Trainer{}, tc.models)
			run, err := r.Svc.Learn(t.Context(), tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if run.Promoted {
				t.Fatal("promoted")
			}
			if got := run.Refusal(); tc.wantRule == "" && got != "" || !strings.Contains(got, tc.wantRule) {
				t.Errorf("refusal %q, want %q", got, tc.wantRule)
			}
			if a, _ := r.Svc.Active(t.Context()); !a.Shipped || r.Live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" {
				t.Errorf("active %s", a.Name)
			}
			_, err = r.Svc.Promote(t.Context(), run.ID)
			if (err == nil) != tc.promoteOK {
				t.Errorf("promote: %v", err)
			}
			if tc.promoteOK && r.Live.ModelVersion() != run.Candidate {
				t.Errorf("after promote the live engine serves %s", r.Live.ModelVersion())
			}
		})
	}
}

// TestLearnInterrupted: cancelling mid-training leaves the models in use
// and no candidate; what a crash leaves (a partial output, a report still
// "running") is reported as interrupted and removed by the next run; a
// missing torch and a failing trainer are reported as such.
func TestLearnInterrupted(t *testing.T) {
	started := make(chan struct{})
	r := NewRig(t, Trainer{Block: true, Started: started}, Models{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	run, err := r.Svc.Learn(ctx, learn.Options{}, nil)
	if err == nil || run.Status != learn.StatusCancelled {
		t.Fatalf("cancelled run: %v %s", err, run.Status)
	}
	if a, _ := r.Svc.Active(t.Context()); !a.Shipped || r.Live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" {
		t.Errorf("active %s, live %s", a.Name, r.Live.ModelVersion())
	}
	for _, d := range []string{r.Layout.Versions(), r.Layout.Candidates(), filepath.Join(r.Layout.Staging(), run.Candidate), filepath.Join(r.Layout.Staging(), run.Candidate+".partial")} {
		if ents, err := os.ReadDir(d); err == nil && len(ents) > 0 || err == nil && strings.Contains(d, "clinic") {
			t.Errorf("%s left behind", d)
		}
	}

	// A crash: a report left "running" and a partial output.
	crashed := `{"id":"20260101T000000000Z","status":"running","started":"2026-01-01T00:00:00Z","candidate":"v3.1.0-clinic.7"}`
	if err := os.WriteFile(filepath.Join(r.Layout.Runs(), "20260101T000000000Z.json"), []byte(crashed), 0o644); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(r.Layout.Staging(), "v3.1.0-clinic.7.partial")
	os.MkdirAll(partial, 0o755)
	runs, _ := r.Svc.Runs(t.Context())
	if runs[len(runs)-1].Status != learn.StatusInterrupted {
		t.Errorf("crashed run shows %s", runs[len(runs)-1].Status)
	}
	run, err = r.With(t, Trainer{}).Learn(t.Context(), learn.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("the crash's partial output survived the next run")
	}
	if run.Candidate != "v3.1.0-clinic.8" {
		t.Errorf("candidate %s after a run that reached clinic.7", run.Candidate)
	}
	if _, err := r.With(t, Trainer{NoTorch: true}).Learn(t.Context(), learn.Options{}, nil); !learn.IsMissingTorch(err) {
		t.Errorf("missing torch: %v", err)
	}
	if run, err := r.With(t, Trainer{Fail: true}).Learn(t.Context(), learn.Options{}, nil); err == nil || run.Status != learn.StatusFailed {
		t.Errorf("failed trainer: %v %s", err, run.Status)
	}
}

// TestLiveSwap: a swap waits for in-flight predictions before closing
// the old engine, and new predictions use the new one.
func TestLiveSwap(t *testing.T) {
	old := &Engine{Version: "a", Gate: make(chan struct{}), Entered: make(chan struct{})}
	l := learn.NewLive(old, "dirA")
	done := make(chan error)
	go func() { _, err := l.Predict(t.Context(), nil, cardiac.PredictOptions{}); done <- err }()
	<-old.Entered
	nu := &Engine{Version: "b"}
	l.Swap(nu, "dirB")
	if old.Closed.Load() {
		t.Fatal("closed under an in-flight prediction")
	}
	if l.ModelVersion() != "b" || l.Dir() != "dirB" {
		t.Errorf("serves %s from %s", l.ModelVersion(), l.Dir())
	}
	close(old.Gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !old.Closed.Load() {
		t.Error("old engine not closed after its last prediction")
	}
	l.Close()
	if !nu.Closed.Load() {
		t.Error("Close left the engine open")
	}
}

// TestLearnNoDangerousNumber: a candidate good on average but off by
// more than MaxReturnedVHSError on one held-out case, with a spread
// that does not single that case out, is refused by the
// no-dangerous-number rule alone; the same error on a case whose spread
// is the largest is withheld by the bound derived on the held-out cases,
// and that bound is written into the promoted version's manifest.
func TestLearnNoDangerousNumber(t *testing.T) {
	// The held-out cases of the rig's pool (seed 1) and their widths
	// (WritePool: case-NNN is 400 + NNN pixels wide).
	probe := NewRig(t, Trainer{}, Models{})
	cases, err := learn.LoadPool(probe.Layout.Pool())
	if err != nil {
		t.Fatal(err)
	}
	_, held, err := learn.Split(cases, learn.HoldOut, 1)
	if err != nil {
		t.Fatal(err)
	}
	width := func(c learn.Case) int {
		var i int
		if _, err := fmt.Sscanf(c.Stem, "case-%d", &i); err != nil {
			t.Fatal(err)
		}
		return 400 + i
	}
	bad := width(held[len(held)/2])
	// 25 px on the heart's bottom with a 10 px vertebra: about 2.4 v.
	wrong := map[int]float64{bad: 25}
	const low, high = 0.085, 0.30 // low: amid the other cases' spreads
	spread := func(lowOnBad bool) func(int) float64 {
		return func(w int) float64 {
			s := 0.08 + 0.001*float64(w%17) // 0.08-0.096 on the other cases
			if w == bad {
				s = map[bool]float64{true: low, false: high}[lowOnBad]
			}
			return s
		}
	}
	t.Run("confidently wrong: refused", func(t *testing.T) {
		r := NewRig(t, Trainer{}, Models{Wrong: wrong, Spread: spread(true)})
		run, err := r.Svc.Learn(t.Context(), learn.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.Promoted || run.Promotable {
			t.Fatalf("promoted a candidate off by %.2f v on a held-out case: %+v", run.Bound.CrossMaxErr, run.Rules)
		}
		// Good on average: every other rule holds.
		for _, x := range run.Rules {
			if x.OK != (x.Name != "no dangerous number") {
				t.Errorf("rule %s ok %v: %s", x.Name, x.OK, x.Detail)
			}
		}
		if !(run.After.VHSMAE < 0.5) || !(run.Bound.CrossMaxErr > learn.MaxReturnedVHSError) {
			t.Errorf("MAE %.3f, largest cross-checked error %.3f", run.After.VHSMAE, run.Bound.CrossMaxErr)
		}
		// In-sample, the derived bound withholds the bad case and all
		// above its spread: the rule judges cases it was not derived on.
		if !run.Bound.OK || run.Bound.Bound >= low || run.After.AnsweredMaxErr > learn.BoundCalibrationError {
			t.Errorf("bound %+v, answered max error %.3f", run.Bound, run.After.AnsweredMaxErr)
		}
		if a, _ := r.Svc.Active(t.Context()); !a.Shipped {
			t.Errorf("active %s", a.Name)
		}
	})
	t.Run("wrong but flagged by its spread: promoted with the derived bound", func(t *testing.T) {
		r := NewRig(t, Trainer{}, Models{Wrong: wrong, Spread: spread(false)})
		run, err := r.Svc.Learn(t.Context(), learn.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !run.Promoted {
			t.Fatalf("refused: %s", run.Refusal())
		}
		b := run.Bound
		if !b.OK || b.Param != cardiac.ParamMaxHeartVHSSD || !(b.Bound >= 0.08 && b.Bound < high) ||
			b.Answered != run.HeldOut-1 || b.CrossMaxErr > learn.BoundCalibrationError {
			t.Errorf("bound %+v", b)
		}
		if run.After.Answered != float64(run.HeldOut-1)/float64(run.HeldOut) || run.After.AnsweredMaxErr != 0 || run.After.SpreadBound != b.Bound {
			t.Errorf("after %+v", run.After)
		}
		for _, f := range []string{"manifest.json", "cardiac.family.json"} {
			raw, err := os.ReadFile(filepath.Join(r.Layout.Versions(), run.Candidate, f))
			if errors.Is(err, os.ErrNotExist) && f != "manifest.json" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Families map[string]struct {
					Params map[string]float64 `json:"params"`
				} `json:"families"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if got := m.Families["cardiac"].Params[cardiac.ParamMaxHeartVHSSD]; got != b.Bound {
				t.Errorf("%s: %s %v, want %v", f, cardiac.ParamMaxHeartVHSSD, got, b.Bound)
			}
		}
	})
}

// TestDeriveSpreadBound: the bound is the largest spread seen below the
// first case off by more than the error bound; cases the product does
// not answer and NaN spreads do not count; none when even the
// best-agreeing case is off.
func TestDeriveSpreadBound(t *testing.T) {
	o := func(s, e float64) learn.Outcome { return learn.Outcome{Returned: true, Spread: s, Err: e} }
	cases := []struct {
		name string
		cs   []learn.Outcome
		want float64
		ok   bool
	}{
		{"all good: the largest seen", []learn.Outcome{o(0.1, 0.2), o(0.3, 0.9), o(0.2, 0.1)}, 0.3, true},
		{"a bad case cuts", []learn.Outcome{o(0.1, 0.2), o(0.3, 0.2), o(0.2, 1.2), o(0.15, 0.4)}, 0.15, true},
		{"a tie with the bad case is withheld", []learn.Outcome{o(0.1, 0.2), o(0.2, 0.3), o(0.2, 1.2)}, 0.1, true},
		{"unanswered cases do not count", []learn.Outcome{o(0.1, 0.2), {Spread: 0.05, Err: 9}, {Returned: false, Spread: 0.5}}, 0.1, true},
		{"NaN spread never returned", []learn.Outcome{o(0.1, 0.2), o(math.NaN(), 5)}, 0.1, true},
		{"the best-agreeing case is off", []learn.Outcome{o(0.1, 1.1), o(0.2, 0.1)}, 0, false},
		{"none answered", []learn.Outcome{{Spread: 0.1}}, 0, false},
	}
	for _, tc := range cases {
		got, ok := learn.DeriveSpreadBound(tc.cs, learn.BoundCalibrationError)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// Leave one out: a confident error is caught, a flagged one is not
	// counted.
	good := []learn.Outcome{o(0.1, 0.2), o(0.2, 0.3), o(0.3, 0.1), o(0.25, 0.4)}
	if h := learn.CheckHeldOut(append(slices.Clone(good), o(0.05, 2))); h.CrossMaxErr != 2 || h.Answered != 0 {
		t.Errorf("confident error: %+v", h)
	}
	if h := learn.CheckHeldOut(append(slices.Clone(good), o(0.5, 2))); h.CrossMaxErr != 0.4 || h.Answered != 4 || h.Bound != 0.3 {
		t.Errorf("flagged error: %+v", h)
	}
}
