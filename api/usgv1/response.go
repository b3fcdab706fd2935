package usgv1

import "vetlens/engine/usg"

// Response is the spec's success body {result, meta}.
type Response struct {
	Result Result `json:"result"`
	Meta   Meta   `json:"meta"`
}

// Result is the prediction.
type Result struct {
	Classification          string      `json:"classification"`
	ProbabilityAdequate     float64     `json:"probability_adequate"`
	ProbabilityImpaired     float64     `json:"probability_impaired"`
	RiskTier                string      `json:"risk_tier"`
	RiskLabel               string      `json:"risk_label"`
	ThresholdSG             float64     `json:"threshold_sg"`
	ModelVersion            string      `json:"model_version"`
	EnsembleStd             float64     `json:"ensemble_std"`
	ConformalSet            []string    `json:"conformal_set"`
	ConformalClassification string      `json:"conformal_classification"`
	ConformalAlpha          float64     `json:"conformal_alpha"`
	Explanation             Explanation `json:"explanation"`
	Warnings                []string    `json:"warnings,omitempty"`
}

// Explanation is the SHAP attribution of the log-odds.
type Explanation struct {
	BaseValue float64       `json:"base_value"`
	Features  []FeatureShap `json:"features"`
}

// FeatureShap is one feature's attribution. Its fields are
// usg.FeatureShap's, in its order (FeatureShap(f) converts one).
type FeatureShap struct {
	Feature   string  `json:"feature"`
	Label     string  `json:"label"`
	Value     float64 `json:"value"`
	Shap      float64 `json:"shap"`
	Direction string  `json:"direction"`
}

// Meta describes the service that answered. Its fields are usg.Meta's
// (Meta(m) converts one).
type Meta struct {
	Service      string  `json:"service"`
	ModelVersion string  `json:"model_version"`
	ElapsedMS    float64 `json:"elapsed_ms"`
}

// NewResponse is the success body of the engine's response.
func NewResponse(r *usg.Response) Response {
	return Response{Result: NewResult(r.Result), Meta: Meta(r.Meta)}
}

// NewResult is the result object of a prediction (also what the USG log
// stores of each answer).
func NewResult(r usg.Result) Result {
	var fs []FeatureShap
	if r.Explanation.Features != nil {
		fs = make([]FeatureShap, len(r.Explanation.Features))
		for i, f := range r.Explanation.Features {
			fs[i] = FeatureShap(f)
		}
	}
	return Result{
		Classification: r.Classification, ProbabilityAdequate: r.ProbabilityAdequate, ProbabilityImpaired: r.ProbabilityImpaired,
		RiskTier: r.RiskTier, RiskLabel: r.RiskLabel, ThresholdSG: r.ThresholdSG, ModelVersion: r.ModelVersion,
		EnsembleStd: r.EnsembleStd, ConformalSet: r.ConformalSet, ConformalClassification: r.ConformalClassification,
		ConformalAlpha: r.ConformalAlpha, Explanation: Explanation{BaseValue: r.Explanation.BaseValue, Features: fs},
		Warnings: r.Warnings,
	}
}

// Value is the prediction a result object holds (NewResult's inverse).
func (r Result) Value() usg.Result {
	var fs []usg.FeatureShap
	if r.Explanation.Features != nil {
		fs = make([]usg.FeatureShap, len(r.Explanation.Features))
		for i, f := range r.Explanation.Features {
			fs[i] = usg.FeatureShap(f)
		}
	}
	return usg.Result{
		Classification: r.Classification, ProbabilityAdequate: r.ProbabilityAdequate, ProbabilityImpaired: r.ProbabilityImpaired,
		RiskTier: r.RiskTier, RiskLabel: r.RiskLabel, ThresholdSG: r.ThresholdSG, ModelVersion: r.ModelVersion,
		EnsembleStd: r.EnsembleStd, ConformalSet: r.ConformalSet, ConformalClassification: r.ConformalClassification,
		ConformalAlpha: r.ConformalAlpha, Explanation: usg.Explanation{BaseValue: r.Explanation.BaseValue, Features: fs},
		Warnings: r.Warnings,
	}
}

// Version is the body of GET /usg/v1/version. Its fields are
// usg.VersionInfo's, in its order (NewVersion converts one).
type Version struct {
	Service           string            `json:"service"`
	ServiceVersion    string            `json:"service_version"`
	ModelVersion      string            `json:"model_version"`
	Features          []string          `json:"features"`
	FeatureAliases    map[string]string `json:"feature_aliases"`
	ThresholdImpaired float64           `json:"threshold_impaired"`
	SGCutoff          float64           `json:"sg_cutoff"`
}

// NewVersion is the version body of the engine's version values.
func NewVersion(v usg.VersionInfo) Version { return Version(v) }
