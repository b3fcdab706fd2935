package learn

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"image"

	"vetlens/engine/cardiac"
)

// TestSplit: patients never straddle the split, about a quarter is held
// out, the seed fixes it, and pools too small or with too few patients
// are refused with the reason.
func TestSplit(t *testing.T) {
	mk := func(n, perPatient int) []Case {
		var cs []Case
		for i := range n {
			p := ""
			if perPatient > 0 {
				p = string(rune('A'+i/perPatient%26)) + string(rune('a'+i/perPatient/26))
			}
			cs = append(cs, Case{Stem: string(rune('a'+i%26)) + string(rune('a'+i/26)), Patient: p})
		}
		return cs
	}
	tests := []struct {
		name    string
		cases   []Case
		wantErr string
	}{
		{"150 cases, 3 per patient", mk(150, 3), ""},
		{"60 cases without patients", mk(60, 0), ""},
		{"too few cases", mk(MinCases-1, 1), "at least"},
		{"two patients only", mk(60, 30), "too few distinct patients"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, held, err := Split(tc.cases, HoldOut, 7)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
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
			_, held2, _ := Split(tc.cases, HoldOut, 7)
			_, held3, _ := Split(tc.cases, HoldOut, 8)
			if stems(held) != stems(held2) {
				t.Error("same seed, different split")
			}
			if stems(held) == stems(held3) {
				t.Error("another seed gave the same split")
			}
		})
	}
}

func stems(cs []Case) string {
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
			iv := PairedBootstrap(before, tc.after, Resamples, 3)
			if !(iv.Lo <= iv.Mean && iv.Mean <= iv.Hi) {
				t.Fatalf("interval %+v does not hold its mean", iv)
			}
			if (iv.Hi < 0) != tc.wantBelow {
				t.Errorf("interval [%.3f, %.3f]: below zero %v, want %v", iv.Lo, iv.Hi, iv.Hi < 0, tc.wantBelow)
			}
			if again := PairedBootstrap(before, tc.after, Resamples, 3); again != iv {
				t.Errorf("same seed, %+v then %+v", iv, again)
			}
		})
	}
	if iv := PairedBootstrap(nil, nil, Resamples, 1); !math.IsNaN(iv.Hi) {
		t.Errorf("no cases gave %+v", iv)
	}
}

// rig is a Service on a temporary data dir with the fakes.
type rig struct {
	svc     *Service
	layout  Layout
	shipped string
	truth   truthBySize
	live    *Live
	loads   *atomic.Int32
}

func newRig(t *testing.T, tr fakeTrainer, models fakeModels) *rig {
	t.Helper()
	root := t.TempDir()
	r := &rig{layout: Layout{Dir: filepath.Join(root, "learn")}, shipped: filepath.Join(root, "models"), truth: truthBySize{}, loads: &atomic.Int32{}}
	if err := writeModelsDir(r.shipped, "v3.1.0-synthetic-xraysim.1"); err != nil {
		t.Fatal(err)
	}
	testPool(t, r.layout.Pool(), 48, 2, r.truth)
	if tr.phantoms == nil {
		tr.phantoms = fakePhantoms(r.truth)
	}
	models.truth = r.truth
	if models.offset == 0 {
		models.offset = 15
	}
	svc, err := New(Config{Layout: r.layout, Shipped: r.shipped, Trainer: tr, Models: models, Phantoms: 5,
		Registry: FileRegistry{Path: r.layout.ActiveFile(), Versions: r.layout.Versions()}})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = svc
	r.live = NewLive(&fakeEngine{version: "v3.1.0-synthetic-xraysim.1"}, r.shipped)
	svc.Attach(r.live, func(dir string) (Engine, error) {
		r.loads.Add(1)
		v, err := familyVersion(dir)
		return &fakeEngine{version: v}, err
	})
	return r
}

// fakeEngine is a live engine that records being closed.
type fakeEngine struct {
	version string
	closed  atomic.Bool
	gate    chan struct{} // Predict waits on it when set
}

func (e *fakeEngine) Predict(ctx context.Context, _ image.Image, _ cardiac.PredictOptions) (*cardiac.Result, error) {
	if e.closed.Load() {
		return nil, errors.New("closed engine used")
	}
	if e.gate != nil {
		<-e.gate
	}
	return &cardiac.Result{}, nil
}
func (e *fakeEngine) ModelVersion() string { return e.version }
func (e *fakeEngine) LandmarkModels() int  { return 5 }
func (e *fakeEngine) Close() error         { e.closed.Store(true); return nil }

// TestLearnPromotesAndRollsBack: a candidate that measures the held-out
// cases better is promoted as v3.1.0-clinic.1 with its card, the live
// engine serves it, rollback to the shipped models and forward again
// work, and a second run that does not improve is refused.
func TestLearnPromotesAndRollsBack(t *testing.T) {
	var specs []TrainSpec
	r := newRig(t, fakeTrainer{specs: &specs}, fakeModels{})
	ctx := t.Context()
	var fracs []float64
	run, err := r.svc.Learn(ctx, Options{Steps: 10}, func(p Progress) { fracs = append(fracs, p.Fraction) })
	if err != nil {
		t.Fatal(err)
	}
	if !run.Promoted || run.Candidate != "v3.1.0-clinic.1" || run.Status != StatusDone {
		t.Fatalf("run %s promoted %v status %s: %s", run.Candidate, run.Promoted, run.Status, run.Refusal())
	}
	if run.Train+run.HeldOut != 48 || run.HeldOut != 12 {
		t.Errorf("split %d + %d", run.Train, run.HeldOut)
	}
	if !(run.After.VHSMAE < run.Before.VHSMAE) || run.After.VHSMAE != 0 || run.Bootstrap.Hi >= 0 {
		t.Errorf("MAE %.3f -> %.3f, interval %+v", run.Before.VHSMAE, run.After.VHSMAE, run.Bootstrap)
	}
	if run.Before.Landmarks[cardiac.HeartBottom].Px != 15 || run.After.Landmarks[cardiac.HeartTop].Px != 0 {
		t.Errorf("landmark errors before %+v after %+v", run.Before.Landmarks, run.After.Landmarks)
	}
	if run.PhantomAfter.Cases != 5 {
		t.Errorf("phantom set of %d", run.PhantomAfter.Cases)
	}
	for i := 1; i < len(fracs); i++ {
		if fracs[i] < fracs[i-1] {
			t.Fatalf("progress went back: %v", fracs)
		}
	}
	if fracs[len(fracs)-1] != 1 {
		t.Errorf("progress ended at %v", fracs[len(fracs)-1])
	}
	// The trainer got only training cases and the models in use.
	if len(specs) != 1 || specs[0].Base != r.shipped || specs[0].Version != "v3.1.0-clinic.1" {
		t.Fatalf("specs %+v", specs)
	}
	if got := r.live.ModelVersion(); got != "v3.1.0-clinic.1" {
		t.Errorf("live engine serves %s", got)
	}
	card, _ := os.ReadFile(filepath.Join(r.layout.Versions(), "v3.1.0-clinic.1", cardFile))
	if !strings.Contains(string(card), "## Clinic version v3.1.0-clinic.1") || !strings.Contains(string(card), "36 of the clinic's 48") {
		t.Errorf("card:\n%s", card)
	}
	vs, err := r.svc.Versions(ctx)
	if err != nil || len(vs) != 2 || !vs[1].Active || vs[0].Active || !vs[0].Shipped {
		t.Fatalf("versions %+v %v", vs, err)
	}

	// Rollback to the shipped models, and forward again.
	for _, want := range []string{ShippedAlias, "v3.1.0-clinic.1", "v3.1.0-synthetic-xraysim.1"} {
		v, err := r.svc.Use(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := r.svc.Active(ctx)
		if a.Name != v.Name || r.live.ModelVersion() != v.Name {
			t.Errorf("use %s: active %s, live %s", want, a.Name, r.live.ModelVersion())
		}
	}
	if _, err := r.svc.Use(ctx, "v3.1.0-clinic.9"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := r.svc.Use(ctx, "../../etc"); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("path as version: %v", err)
	}
	r.svc.Use(ctx, "v3.1.0-clinic.1")

	// From clinic.1, clinic.2 measures the same: refused, not promoted,
	// the active version stays.
	run2, err := r.svc.Learn(ctx, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run2.Candidate != "v3.1.0-clinic.2" || run2.Base != "v3.1.0-clinic.1" || run2.Promoted || run2.Promotable {
		t.Fatalf("second run %+v", run2)
	}
	if !strings.Contains(run2.Refusal(), "clinic held-out cases") {
		t.Errorf("refusal %q", run2.Refusal())
	}
	if a, _ := r.svc.Active(ctx); a.Name != "v3.1.0-clinic.1" {
		t.Errorf("active %s after a refused run", a.Name)
	}
	if _, err := r.svc.Promote(ctx, run2.ID); err == nil || !strings.Contains(err.Error(), "did not hold") {
		t.Errorf("promote a refused run: %v", err)
	}
	runs, _ := r.svc.Runs(ctx)
	if len(runs) != 2 || runs[0].ID != run2.ID {
		t.Errorf("runs %d, newest %s", len(runs), runs[0].ID)
	}
}

// TestLearnRefusals: each failing rule refuses promotion and says so;
// --no-promote keeps a promotable candidate for Promote.
func TestLearnRefusals(t *testing.T) {
	tests := []struct {
		name      string
		models    fakeModels
		opts      Options
		wantRule  string // "" : promotable
		promoteOK bool
	}{
		{"phantom regression", fakeModels{phantomWorse: true}, Options{}, "phantom regression set", false},
		{"reference outputs", fakeModels{broken: "v3.1.0-clinic.1"}, Options{}, "reference outputs", false},
		{"no gain", fakeModels{better: func(string) bool { return false }}, Options{}, "clinic held-out cases", false},
		{"no promote", fakeModels{}, Options{NoPromote: true}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, fakeTrainer{}, tc.models)
			run, err := r.svc.Learn(t.Context(), tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if run.Promoted {
				t.Fatal("promoted")
			}
			if got := run.Refusal(); tc.wantRule == "" && got != "" || !strings.Contains(got, tc.wantRule) {
				t.Errorf("refusal %q, want %q", got, tc.wantRule)
			}
			if a, _ := r.svc.Active(t.Context()); !a.Shipped || r.live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" {
				t.Errorf("active %s", a.Name)
			}
			_, err = r.svc.Promote(t.Context(), run.ID)
			if (err == nil) != tc.promoteOK {
				t.Errorf("promote: %v", err)
			}
			if tc.promoteOK && r.live.ModelVersion() != run.Candidate {
				t.Errorf("after promote the live engine serves %s", r.live.ModelVersion())
			}
		})
	}
}

// TestLearnInterrupted: cancelling mid-training leaves the models in use
// and no candidate; what a crash leaves (a partial output, a report still
// "running") is reported as interrupted and removed by the next run; a
// missing torch is reported as such.
func TestLearnInterrupted(t *testing.T) {
	started := make(chan struct{})
	r := newRig(t, fakeTrainer{block: true, started: started}, fakeModels{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	run, err := r.svc.Learn(ctx, Options{}, nil)
	if err == nil || run.Status != StatusCancelled {
		t.Fatalf("cancelled run: %v %s", err, run.Status)
	}
	if a, _ := r.svc.Active(t.Context()); !a.Shipped || r.loads.Load() != 0 {
		t.Errorf("active %s, %d engine loads", a.Name, r.loads.Load())
	}
	if ents, _ := os.ReadDir(r.layout.Staging()); len(ents) != 1 { // the cases file only
		t.Errorf("staging holds %d entries", len(ents))
	}
	if names, _ := dirNames(r.layout.Candidates()); len(names) != 0 {
		t.Errorf("candidates %v", names)
	}

	// A crash: a report left "running" and a partial output.
	crashed := Run{ID: "20260101T000000000Z", Status: StatusRunning, Started: time.Now().Add(-time.Hour), Candidate: "v3.1.0-clinic.7"}
	if err := r.svc.saveRun(&crashed); err != nil {
		t.Fatal(err)
	}
	partial := filepath.Join(r.layout.Staging(), "v3.1.0-clinic.7.partial")
	os.MkdirAll(partial, 0o755)
	runs, _ := r.svc.Runs(t.Context())
	if runs[len(runs)-1].Status != StatusInterrupted {
		t.Errorf("crashed run shows %s", runs[len(runs)-1].Status)
	}
	r.svc.cfg.Trainer = fakeTrainer{}
	run, err = r.svc.Learn(t.Context(), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("the crash's partial output survived the next run")
	}
	if run.Candidate != "v3.1.0-clinic.8" {
		t.Errorf("candidate %s after a run that reached clinic.7", run.Candidate)
	}

	r.svc.cfg.Trainer = fakeTrainer{noTorch: true}
	if _, err := r.svc.Learn(t.Context(), Options{}, nil); !IsMissingTorch(err) {
		t.Errorf("missing torch: %v", err)
	}
	r.svc.cfg.Trainer = fakeTrainer{fail: true}
	if run, err := r.svc.Learn(t.Context(), Options{}, nil); err == nil || run.Status != StatusFailed {
		t.Errorf("failed trainer: %v %s", err, run.Status)
	}
}

// TestLiveSwap: a swap waits for in-flight predictions before closing
// the old engine, and new predictions use the new one.
func TestLiveSwap(t *testing.T) {
	old := &fakeEngine{version: "a", gate: make(chan struct{})}
	l := NewLive(old, "dirA")
	done := make(chan error)
	go func() { _, err := l.Predict(t.Context(), nil, cardiac.PredictOptions{}); done <- err }()
	for { // wait until the prediction holds the old engine
		l.mu.Lock()
		refs := l.cur.refs
		l.mu.Unlock()
		if refs == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	nu := &fakeEngine{version: "b"}
	l.Swap(nu, "dirB")
	if old.closed.Load() {
		t.Fatal("closed under an in-flight prediction")
	}
	if l.ModelVersion() != "b" || l.Dir() != "dirB" {
		t.Errorf("serves %s from %s", l.ModelVersion(), l.Dir())
	}
	close(old.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !old.closed.Load() {
		t.Error("old engine not closed after its last prediction")
	}
	l.Close()
	if !nu.closed.Load() {
		t.Error("Close left the engine open")
	}
}
