package usg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"vetlens/engine/infer"
	"vetlens/engine/ort"
	"vetlens/internal/config"
)

// modelsDir is the shipped models directory, relative to this package.
const modelsDir = "../../models"

var (
	engineOnce sync.Once
	testEngine *Engine
	engineErr  error
)

// LoadORT is usgort.Load, which loadEngine loads the shipped model with.
// Package usg's own tests cannot import usgort (it imports usg), so
// hook_test.go, an external test file in the same test binary, sets it
// when the binary starts, before any test runs.
var LoadORT func(dir string) (*Engine, error)

// loadEngine opens the shipped model once for all tests of the package.
func loadEngine(tb testing.TB) *Engine {
	tb.Helper()
	engineOnce.Do(func() {
		if engineErr = ort.Init("", config.ORTLibraryCandidates()...); engineErr == nil {
			if LoadORT == nil {
				engineErr = errors.New("LoadORT not set (hook_test.go sets it to usgort.Load)")
				return
			}
			testEngine, engineErr = LoadORT(modelsDir)
		}
	})
	if engineErr != nil {
		tb.Fatalf("load shipped USG model: %v", engineErr)
	}
	return testEngine
}

// randomValues draws feature values across the plausible ranges, log-uniform
// where the range spans decades.
func randomValues(rng *rand.Rand) [NumFeatures]float64 {
	var v [NumFeatures]float64
	for i, f := range featureInfo {
		if f.hi/f.lo > 100 {
			v[i] = math.Exp(math.Log(f.lo) + rng.Float64()*(math.Log(f.hi)-math.Log(f.lo)))
		} else {
			v[i] = f.lo + rng.Float64()*(f.hi-f.lo)
		}
	}
	return v
}

func TestModelMatchesExportReference(t *testing.T) {
	e := loadEngine(t)
	ref := e.params.Reference
	if ref == nil || len(ref.Inputs) == 0 {
		t.Fatal("manifest has no reference outputs")
	}
	n := len(ref.Inputs)
	in := make([]float32, 0, n*NumFeatures)
	for _, r := range ref.Inputs {
		for _, v := range r {
			in = append(in, float32(v))
		}
	}
	out, err := e.sess.Run(context.Background(), infer.Tensor{Shape: []int64{int64(n), NumFeatures}, Data: in})
	if err != nil {
		t.Fatal(err)
	}
	logit, members := out[e.logitIdx], out[e.membersIdx]
	m := len(ref.MemberLogits[0])
	if m < 5 || !slices.Equal(members.Shape, []int64{int64(n), int64(m)}) || !slices.Equal(logit.Shape, []int64{int64(n), 1}) {
		t.Fatalf("shapes logit %v members %v, want [%d 1] [%d %d] with >= 5 members", logit.Shape, members.Shape, n, n, m)
	}
	for i := 0; i < n; i++ {
		if d := math.Abs(float64(logit.Data[i]) - ref.Logit[i]); d > 1e-5 {
			t.Errorf("row %d: logit %v, reference %v", i, logit.Data[i], ref.Logit[i])
		}
		for j := 0; j < m; j++ {
			if d := math.Abs(float64(members.Data[i*m+j]) - ref.MemberLogits[i][j]); d > 1e-5 {
				t.Errorf("row %d member %d: %v, reference %v", i, j, members.Data[i*m+j], ref.MemberLogits[i][j])
			}
		}
	}
	// The mean of the members' calibrated log-odds, Platt-scaled, is the ensemble:
	// the ensemble logit is monotone in the member mean across rows.
	type pair struct{ mean, logit float64 }
	var ps []pair
	for i := 0; i < n; i++ {
		var s float64
		for j := 0; j < m; j++ {
			s += float64(members.Data[i*m+j])
		}
		ps = append(ps, pair{s / float64(m), float64(logit.Data[i])})
	}
	sort.Slice(ps, func(a, b int) bool { return ps[a].mean < ps[b].mean })
	for i := 1; i < len(ps); i++ {
		if ps[i].logit < ps[i-1].logit-1e-6 {
			t.Errorf("ensemble logit not monotone in member mean: %v", ps)
		}
	}
}

func TestShapMatchesTrainerReference(t *testing.T) {
	e := loadEngine(t)
	for i, rs := range e.params.Reference.Shap {
		var x [NumFeatures]float64
		copy(x[:], e.params.Reference.Inputs[i])
		r, err := e.predictRaw(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.base-rs.BaseValue) > 1e-4 {
			t.Errorf("row %d: base %v, trainer %v", i, r.base, rs.BaseValue)
		}
		for j := range r.phi {
			if math.Abs(r.phi[j]-rs.Shap[j]) > 1e-4 {
				t.Errorf("row %d feature %d: shap %v, trainer %v", i, j, r.phi[j], rs.Shap[j])
			}
		}
	}
}

func TestShapAdditivityRandomInputs(t *testing.T) {
	e := loadEngine(t)
	rng := rand.New(rand.NewPCG(7, 11))
	ctx := context.Background()
	var nonzero int
	for n := 0; n < 300; n++ {
		x := randomValues(rng)
		r, err := e.predictRaw(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		sum := r.base
		for _, p := range r.phi {
			sum += p
			if math.Abs(p) > 1e-3 {
				nonzero++
			}
		}
		if d := math.Abs(sum - Logit(r.p)); d > 1e-4 {
			t.Fatalf("x=%v: base %v + sum(shap) = %v, logit(p) = %v (diff %g)", x, r.base, sum, Logit(r.p), d)
		}
	}
	if nonzero < 300 {
		t.Errorf("only %d non-trivial attributions in 300 predictions", nonzero)
	}
}

func TestPredictBody(t *testing.T) {
	e := loadEngine(t)
	// The values of {"BUN": "45", "CREATININE": 265, "HGB": 9.8,
	// "absolute_lymphocytes": 1.1, "age_months": 190}: both corrected.
	req, err := NewRequest([NumFeatures]float64{45, 265, 9.8, 1.1, 190})
	if err != nil {
		t.Fatal(err)
	}
	req.Received = time.Now()
	resp, err := e.Predict(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The body's keys are api/usgv1's (TestResponseBody there); here the
	// values: a corrected request carries its warnings.
	if len(resp.Result.Warnings) == 0 || resp.Result.Explanation.Features == nil || resp.Result.ConformalSet == nil {
		t.Errorf("result %+v", resp.Result)
	}
	r := resp.Result
	// The version must say what the model was trained on.
	simulated := strings.HasPrefix(e.params.TrainingData, "simulated")
	if simulated != strings.Contains(r.ModelVersion, "simulated") || resp.Meta.ModelVersion != r.ModelVersion || resp.Meta.Service != "usg-v1" {
		t.Errorf("versions %q %q service %q", r.ModelVersion, resp.Meta.ModelVersion, resp.Meta.Service)
	}
	if r.ProbabilityImpaired != round(r.ProbabilityImpaired, 4) || math.Abs(r.ProbabilityAdequate+r.ProbabilityImpaired-1) > 1e-9 {
		t.Errorf("probabilities %v %v", r.ProbabilityImpaired, r.ProbabilityAdequate)
	}
	if r.ThresholdSG != 1.035 || r.ConformalAlpha != 0.10 {
		t.Errorf("threshold_sg %v alpha %v", r.ThresholdSG, r.ConformalAlpha)
	}
	if r.Classification != Classify(r.ProbabilityImpaired, 0.535) {
		t.Errorf("classification %s at %v", r.Classification, r.ProbabilityImpaired)
	}
	if tier, _ := e.tiers.Tier(r.ProbabilityImpaired); tier != r.RiskTier {
		t.Errorf("tier %s at %v", r.RiskTier, r.ProbabilityImpaired)
	}
	if len(r.ConformalSet) == 0 || r.EnsembleStd < 0 || r.EnsembleStd > 0.5 {
		t.Errorf("conformal %v std %v", r.ConformalSet, r.EnsembleStd)
	}
	if len(r.Warnings) != 2 || !strings.HasPrefix(r.Warnings[0], "Creatinine (mg/dL): 265 → 3 (") ||
		!strings.HasPrefix(r.Warnings[1], "Abs. Lymphocytes (/uL): 1.1 → 1100 (") {
		t.Errorf("warnings %q", r.Warnings)
	}
	fs := r.Explanation.Features
	if len(fs) != NumFeatures {
		t.Fatalf("%d explanation features", len(fs))
	}
	seen := map[string]bool{}
	sum := r.Explanation.BaseValue
	for i, f := range fs {
		seen[f.Feature] = true
		sum += f.Shap
		if i > 0 && math.Abs(f.Shap) > math.Abs(fs[i-1].Shap) {
			t.Errorf("features not sorted by |shap|: %+v", fs)
		}
		if (f.Shap > 0) != (f.Direction == LabelImpaired) || f.Label == "" {
			t.Errorf("feature %+v", f)
		}
		if f.Feature == FeatureCreatinine && f.Value != 3 {
			t.Errorf("creatinine value %v, want the corrected 3", f.Value)
		}
		if f.Feature == FeatureLymphocytes && f.Value != 1100 {
			t.Errorf("lymphocytes value %v, want 1100", f.Value)
		}
	}
	if len(seen) != NumFeatures {
		t.Errorf("features %+v", fs)
	}
	// After rounding the sum is still close to the log-odds of the rounded probability.
	if d := math.Abs(sum - Logit(r.ProbabilityImpaired)); d > 2e-3 {
		t.Errorf("rounded base+shap %v vs logit(p) %v", sum, Logit(r.ProbabilityImpaired))
	}
	// No correction: no warnings key at all.
	req2, _ := NewRequest(validValues)
	resp2, err := e.Predict(context.Background(), req2)
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Result.Warnings != nil {
		t.Errorf("warnings present without a correction: %v", resp2.Result.Warnings)
	}
}

// TestRiskOrdering checks the model behaves as the simulation says: an
// azotaemic, anaemic old cat is riskier than a young cat with normal values.
func TestRiskOrdering(t *testing.T) {
	e := loadEngine(t)
	ctx := context.Background()
	sick, err := e.predictRaw(ctx, [NumFeatures]float64{70, 4.5, 9, 900, 200})
	if err != nil {
		t.Fatal(err)
	}
	well, err := e.predictRaw(ctx, [NumFeatures]float64{22, 1.3, 14, 3000, 40})
	if err != nil {
		t.Fatal(err)
	}
	if !(sick.p > 0.75 && well.p < 0.20) {
		t.Errorf("sick cat p=%v, healthy cat p=%v", sick.p, well.p)
	}
}

func TestVersionAndHealth(t *testing.T) {
	e := loadEngine(t)
	want := VersionInfo{Service: "usg-v1", ServiceVersion: "1.6.0", ModelVersion: e.ModelVersion(),
		Features:       []string{"BUN", "CREATININE", "HGB", "ABSOLUTE LYMPHOCYTES", "age_months"},
		FeatureAliases: map[string]string{"absolute_lymphocytes": "ABSOLUTE LYMPHOCYTES"}, ThresholdImpaired: 0.535, SGCutoff: 1.035}
	if v := e.Version(); !reflect.DeepEqual(v, want) {
		t.Errorf("version %+v\nwant %+v", v, want)
	}
	h := e.Health()
	if h.Status != "ok" || h.Service != "usg-v1" || h.ServiceVersion != "1.6.0" || h.ModelVersion != e.ModelVersion() {
		t.Errorf("health %+v", h)
	}
}

func TestPredictConcurrent(t *testing.T) {
	e := loadEngine(t)
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := make([][NumFeatures]float64, 40)
	want := make([]float64, len(inputs))
	for i := range inputs {
		inputs[i] = randomValues(rng)
		r, err := e.predictRaw(context.Background(), inputs[i])
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.logit
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(inputs)*4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range inputs {
				r, err := e.predictRaw(context.Background(), inputs[i])
				if err != nil || r.logit != want[i] {
					errs <- fmt.Sprintf("input %d: %v %v, want %v", i, r, err, want[i])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for m := range errs {
		t.Error(m)
	}
}

func TestPredictCancelled(t *testing.T) {
	e := loadEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := NewRequest(validValues)
	if _, err := e.Predict(ctx, req); err == nil {
		t.Error("cancelled context predicted")
	}
}

// BenchmarkPredict times one prediction including exact SHAP (one batched
// ONNX Runtime call of 1 + 30 x background rows). Besides ns/op (the mean) it
// reports the median wall time and the process CPU time per prediction; the
// latter is close to the wall time on an idle machine when other work
// competes for the cores.
func BenchmarkPredict(b *testing.B) {
	e := loadEngine(b)
	req, err := NewRequest(validValues)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var laps []time.Duration
	var r0, r1 syscall.Rusage
	b.ReportAllocs()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Predict(ctx, req); err != nil {
			b.Fatal(err)
		}
		laps = append(laps, time.Since(t0))
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	slices.Sort(laps)
	b.ReportMetric(float64(laps[len(laps)/2].Nanoseconds()), "median-ns")
	cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(len(laps)), "cpu-ns/op")
}
