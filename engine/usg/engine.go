// Package usg is the feline urine specific gravity screening engine
// (spec usg-v1): the unit corrections and plausible ranges of a request's
// values (NewRequest), the calibrated ensemble (run through an
// infer.Session: engine/usg/usgort opens it in ONNX Runtime), exact
// Shapley attributions, conformal sets and risk tiers, and the
// response values. It is pure computation: no HTTP, no storage, no wire:
// the request parser, error codes and every body are api/usgv1's.
//
// The model contract, SHAP definition and conformal rule are in docs/usg.md.
package usg

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// Service names and versions reported by the USG service.
const (
	ServiceName    = "usg-v1"
	ServiceVersion = "1.6.0"
	// Family is the manifest family of the USG model.
	Family = "usg"
	// Role is the manifest role of the ensemble model file.
	Role = "usg_ensemble"
)

// Engine runs USG predictions. It is immutable after LoadWith and safe for
// concurrent use.
type Engine struct {
	sess         infer.Session
	logitIdx     int
	membersIdx   int
	modelVersion string
	params       Params
	tiers        Tiers
	bg           [][NumFeatures]float32
	weights      []float64
	base         float64
}

// LoadWith reads the usg family and the usg_ensemble model from the
// manifest in dir, verifies the model's checksum, opens it with open, and
// checks the stored SHAP base value against the model. usgort.Load is
// LoadWith on an ONNX Runtime session; package usg links no runtime.
func LoadWith(dir string, open infer.Opener) (*Engine, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	fam, err := m.Family(Family)
	if err != nil {
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	p, err := parseParams(fam.Params)
	if err != nil {
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	e := &Engine{modelVersion: fam.ModelVersion, params: p}
	if err := e.applyParams(); err != nil {
		return nil, fmt.Errorf("usg engine: manifest %s: %w", dir, err)
	}
	models := m.ByRole(Role)
	if len(models) != 1 {
		return nil, fmt.Errorf("usg engine: manifest %s has %d %s models, want 1", dir, len(models), Role)
	}
	mod := models[0]
	if err := m.Verify(mod); err != nil {
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	if !slices.Equal(mod.InputSize, []int{NumFeatures}) || len(mod.Inputs) != 1 {
		return nil, fmt.Errorf("usg engine: model %s: want one input of size [%d], manifest says %v %v",
			mod.File, NumFeatures, mod.Inputs, mod.InputSize)
	}
	e.logitIdx, e.membersIdx = slices.Index(mod.Outputs, "logit"), slices.Index(mod.Outputs, "member_logits")
	if e.logitIdx < 0 || e.membersIdx < 0 {
		return nil, fmt.Errorf("usg engine: model %s: outputs %v lack logit or member_logits", mod.File, mod.Outputs)
	}
	e.sess, err = open(m.Path(mod), mod.Inputs, mod.Outputs)
	if err != nil {
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	if err := e.computeBase(context.Background()); err != nil {
		e.Close()
		return nil, fmt.Errorf("usg engine: %w", err)
	}
	return e, nil
}

// applyParams validates the family params and derives the tiers, the
// float32 background and its normalised weights from them.
func (e *Engine) applyParams() error {
	p := &e.params
	if !slices.Equal(p.Features, Features()) {
		return fmt.Errorf("features %v, engine expects %v", p.Features, Features())
	}
	if e.modelVersion == "" {
		return fmt.Errorf("empty model_version")
	}
	if !(p.ThresholdImpaired > 0 && p.ThresholdImpaired < 1) {
		return fmt.Errorf("threshold_impaired %v not in (0,1)", p.ThresholdImpaired)
	}
	if len(p.RiskTiers) != 3 || !(p.RiskTiers[0] < p.RiskTiers[1] && p.RiskTiers[1] < p.RiskTiers[2]) ||
		p.RiskTiers[1] != p.ThresholdImpaired {
		return fmt.Errorf("risk_tiers %v must be 3 ascending bounds with the middle one = threshold_impaired %v",
			p.RiskTiers, p.ThresholdImpaired)
	}
	copy(e.tiers.Bounds[:], p.RiskTiers)
	if !(p.ConformalAlpha > 0 && p.ConformalAlpha < 1) || !(p.ConformalQhat >= 0 && p.ConformalQhat <= 1) {
		return fmt.Errorf("conformal alpha %v / qhat %v out of range", p.ConformalAlpha, p.ConformalQhat)
	}
	if p.SGCutoff <= 1 {
		return fmt.Errorf("sg_cutoff %v", p.SGCutoff)
	}
	bg := p.Background
	if len(bg.Rows) == 0 || len(bg.Rows) != len(bg.Weights) {
		return fmt.Errorf("shap_background: %d rows, %d weights", len(bg.Rows), len(bg.Weights))
	}
	var sum float64
	for i, r := range bg.Rows {
		if len(r) != NumFeatures || bg.Weights[i] <= 0 {
			return fmt.Errorf("shap_background row %d: %d values, weight %v", i, len(r), bg.Weights[i])
		}
		var row [NumFeatures]float32
		for j, v := range r {
			row[j] = float32(v)
		}
		e.bg = append(e.bg, row)
		sum += bg.Weights[i]
	}
	for _, w := range bg.Weights {
		e.weights = append(e.weights, w/sum)
	}
	if !maps.Equal(p.FeatureAliases, FeatureAliases()) || p.ServiceVersion != ServiceVersion {
		return fmt.Errorf("feature_aliases %v / service_version %q differ from the engine's %v / %q",
			p.FeatureAliases, p.ServiceVersion, FeatureAliases(), ServiceVersion)
	}
	return nil
}

// computeBase sets the SHAP base value, the weighted mean model log-odds over
// the background, and requires it to match the value stored at export.
func (e *Engine) computeBase(ctx context.Context) error {
	in := make([]float32, 0, len(e.bg)*NumFeatures)
	for _, b := range e.bg {
		in = append(in, b[:]...)
	}
	out, err := e.sess.Run(ctx, infer.Tensor{Shape: []int64{int64(len(e.bg)), NumFeatures}, Data: in})
	if err != nil {
		return fmt.Errorf("shap base value: %w", err)
	}
	logit := out[e.logitIdx].Data
	var base float64
	for k, w := range e.weights {
		base += w * float64(logit[k])
	}
	if d := math.Abs(base - e.params.Background.BaseValue); d > 1e-4 {
		return fmt.Errorf("shap base value %.6f from the model differs from the exported %.6f: model and params do not belong together",
			base, e.params.Background.BaseValue)
	}
	e.base = base
	return nil
}

// Close releases the model's session.
func (e *Engine) Close() error {
	if e == nil {
		return nil
	}
	return e.sess.Close()
}

// ModelVersion identifies the serving model.
func (e *Engine) ModelVersion() string { return e.modelVersion }

// Params returns the manifest parameters the engine runs with.
func (e *Engine) Params() Params { return e.params }

// raw is one prediction before rounding.
type raw struct {
	logit   float64   // calibrated ensemble log-odds
	p       float64   // sigmoid(logit)
	members []float64 // members' calibrated log-odds
	base    float64
	phi     [NumFeatures]float64
}

// predictRaw runs the model once on x and on every coalition of x with the
// background (one batched call) and computes the exact Shapley values.
func (e *Engine) predictRaw(ctx context.Context, vals [NumFeatures]float64) (*raw, error) {
	var x [NumFeatures]float32
	for i, v := range vals {
		x[i] = float32(v)
	}
	k := len(e.bg)
	n := 1 + (Coalitions-2)*k
	in := make([]float32, n*NumFeatures)
	copy(in, x[:])
	coalitionRows(in[NumFeatures:], x, e.bg)
	out, err := e.sess.Run(ctx, infer.Tensor{Shape: []int64{int64(n), NumFeatures}, Data: in})
	if err != nil {
		return nil, fmt.Errorf("usg predict: %w", err)
	}
	logit, members := out[e.logitIdx], out[e.membersIdx]
	if len(logit.Data) != n || len(members.Shape) != 2 || members.Shape[0] != int64(n) {
		return nil, fmt.Errorf("usg predict: output shapes %v and %v for %d rows", logit.Shape, members.Shape, n)
	}
	var v [Coalitions]float64
	v[0] = e.base
	v[Coalitions-1] = float64(logit.Data[0])
	for s := 1; s < Coalitions-1; s++ {
		rows := logit.Data[1+(s-1)*k : 1+s*k]
		var sum float64
		for j, w := range e.weights {
			sum += w * float64(rows[j])
		}
		v[s] = sum
	}
	m := int(members.Shape[1])
	r := &raw{logit: v[Coalitions-1], base: e.base, phi: Shapley(&v), members: make([]float64, m)}
	r.p = sigmoid(r.logit)
	for j := 0; j < m; j++ {
		r.members[j] = float64(members.Data[j])
	}
	return r, nil
}

// Response is a prediction and the service that answered: the spec's
// success body {result, meta} as values (its wire body is
// usgv1.Response, usgv1.NewResponse).
type Response struct {
	Result Result
	Meta   Meta
}

// Result is the prediction.
type Result struct {
	Classification          string
	ProbabilityAdequate     float64
	ProbabilityImpaired     float64
	RiskTier                string
	RiskLabel               string
	ThresholdSG             float64
	ModelVersion            string
	EnsembleStd             float64
	ConformalSet            []string
	ConformalClassification string
	ConformalAlpha          float64
	Explanation             Explanation
	Warnings                []string
}

// Explanation is the SHAP attribution of the log-odds.
type Explanation struct {
	BaseValue float64
	Features  []FeatureShap
}

// FeatureShap is one feature's attribution.
type FeatureShap struct {
	Feature   string
	Label     string
	Value     float64
	Shap      float64
	Direction string
}

// Meta describes the service that answered.
type Meta struct {
	Service      string
	ModelVersion string
	ElapsedMS    float64
}

// Predict runs one validated request. Classification, risk tier and the
// conformal set are decided on the reported (4-decimal) probability, so the
// body is consistent with itself.
func (e *Engine) Predict(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, fmt.Errorf("usg predict: nil request")
	}
	start := req.Received
	if start.IsZero() {
		start = time.Now()
	}
	r, err := e.predictRaw(ctx, req.Values)
	if err != nil {
		return nil, err
	}
	p := round(r.p, 4)
	tier, label := e.tiers.Tier(p)
	set, setClass := ConformalSet(p, e.params.ConformalQhat, e.params.ThresholdImpaired)
	res := Result{
		Classification:          Classify(p, e.params.ThresholdImpaired),
		ProbabilityAdequate:     round(1-p, 4),
		ProbabilityImpaired:     p,
		RiskTier:                tier,
		RiskLabel:               label,
		ThresholdSG:             e.params.SGCutoff,
		ModelVersion:            e.modelVersion,
		EnsembleStd:             round(EnsembleStd(r.members), 4),
		ConformalSet:            set,
		ConformalClassification: setClass,
		ConformalAlpha:          e.params.ConformalAlpha,
		Explanation:             Explanation{BaseValue: round(r.base, 4), Features: explain(req.Values, r.phi)},
		Warnings:                req.Warnings,
	}
	return &Response{
		Result: res,
		Meta: Meta{
			Service:      ServiceName,
			ModelVersion: e.modelVersion,
			ElapsedMS:    round(float64(time.Since(start).Microseconds())/1000, 3),
		},
	}, nil
}

// explain lists the features by |shap| descending (ties in model order).
func explain(vals [NumFeatures]float64, phi [NumFeatures]float64) []FeatureShap {
	idx := []int{0, 1, 2, 3, 4}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(phi[idx[a]]) > math.Abs(phi[idx[b]]) })
	out := make([]FeatureShap, 0, NumFeatures)
	for _, i := range idx {
		s := round(phi[i], 4)
		dir := LabelAdequate
		if s > 0 {
			dir = LabelImpaired
		}
		out = append(out, FeatureShap{
			Feature: featureInfo[i].key, Label: featureInfo[i].label,
			Value: round(vals[i], 2), Shap: s, Direction: dir,
		})
	}
	return out
}

// VersionInfo is what GET /usg/v1/version reports (its wire body is
// usgv1.Version, usgv1.NewVersion).
type VersionInfo struct {
	Service           string
	ServiceVersion    string
	ModelVersion      string
	Features          []string
	FeatureAliases    map[string]string
	ThresholdImpaired float64
	SGCutoff          float64
}

// Version returns the version values.
func (e *Engine) Version() VersionInfo {
	return VersionInfo{
		Service: ServiceName, ServiceVersion: ServiceVersion, ModelVersion: e.modelVersion,
		Features: Features(), FeatureAliases: FeatureAliases(),
		ThresholdImpaired: e.params.ThresholdImpaired, SGCutoff: e.params.SGCutoff,
	}
}

// Health is what GET /usg/v1/health reports (its wire body is
// usgv1.Health, usgv1.NewHealth).
type Health struct {
	Status         string
	Service        string
	ModelVersion   string
	ServiceVersion string
}

// Health returns the health values.
func (e *Engine) Health() Health {
	return Health{Status: "ok", Service: ServiceName, ModelVersion: e.modelVersion, ServiceVersion: ServiceVersion}
}
