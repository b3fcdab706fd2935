package usg

import (
	"encoding/json"
	"fmt"
)

// Params are the usg family's parameters from the model manifest.
type Params struct {
	ServiceVersion    string            `json:"service_version"`
	Features          []string          `json:"features"`
	FeatureAliases    map[string]string `json:"feature_aliases"`
	ThresholdImpaired float64           `json:"threshold_impaired"`
	RiskTiers         []float64         `json:"risk_tiers"`
	SGCutoff          float64           `json:"sg_cutoff"`
	ConformalAlpha    float64           `json:"conformal_alpha"`
	ConformalQhat     float64           `json:"conformal_qhat"`
	TrainingData      string            `json:"training_data"`
	Background        Background        `json:"shap_background"`
	Reference         *Reference        `json:"reference,omitempty"`
}

// Background is the weighted SHAP background sample, in raw units.
type Background struct {
	Rows      [][]float64 `json:"rows"`
	Weights   []float64   `json:"weights"`
	BaseValue float64     `json:"base_value"`
}

// Reference holds inputs and the trainer's outputs saved at export, for tests.
type Reference struct {
	Inputs       [][]float64 `json:"inputs"`
	Logit        []float64   `json:"logit"`
	MemberLogits [][]float64 `json:"member_logits"`
	Shap         []struct {
		BaseValue float64   `json:"base_value"`
		Shap      []float64 `json:"shap"`
	} `json:"shap"`
}

// parseParams reads the usg family's params from the model manifest
// (models/manifest.json: a model file the trainer writes, not a wire
// body).
func parseParams(raw []byte) (Params, error) {
	var p Params
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("parse %s family params: %w", Family, err)
	}
	return p, nil
}
