package usgv1

import (
	"encoding/json"
	"reflect"
	"testing"

	"vetlens/engine/usg"
)

// TestResponseBody: the success body has the spec's keys, warnings only
// when the request was corrected; NewResult and Value are inverses (the
// USG log reads back what it stored).
func TestResponseBody(t *testing.T) {
	res := usg.Result{Classification: "impaired", ProbabilityAdequate: 0.3, ProbabilityImpaired: 0.7, RiskTier: "high", RiskLabel: "High",
		ThresholdSG: 1.035, ModelVersion: "u-1", EnsembleStd: 0.01, ConformalSet: []string{"impaired"}, ConformalClassification: "impaired",
		ConformalAlpha: 0.1, Explanation: usg.Explanation{BaseValue: -0.2, Features: []usg.FeatureShap{{Feature: "BUN", Label: "BUN", Value: 45, Shap: 0.5, Direction: "impaired"}}},
		Warnings: []string{"BUN read as 45"}}
	resp := &usg.Response{Result: res, Meta: usg.Meta{Service: "usg-v1", ModelVersion: "u-1", ElapsedMS: 1.5}}
	b, err := json.Marshal(NewResponse(resp))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"result":{"classification":"impaired","probability_adequate":0.3,"probability_impaired":0.7,"risk_tier":"high","risk_label":"High",` +
		`"threshold_sg":1.035,"model_version":"u-1","ensemble_std":0.01,"conformal_set":["impaired"],"conformal_classification":"impaired",` +
		`"conformal_alpha":0.1,"explanation":{"base_value":-0.2,"features":[{"feature":"BUN","label":"BUN","value":45,"shap":0.5,"direction":"impaired"}]},` +
		`"warnings":["BUN read as 45"]},"meta":{"service":"usg-v1","model_version":"u-1","elapsed_ms":1.5}}`
	if string(b) != want {
		t.Errorf("body\n%s\nwant\n%s", b, want)
	}
	if back := NewResult(res).Value(); !reflect.DeepEqual(back, res) {
		t.Errorf("read back %+v\nwant %+v", back, res)
	}
	res.Warnings = nil
	if b, _ := json.Marshal(NewResult(res)); containsKey(t, b, "warnings") {
		t.Errorf("warnings present without a correction: %s", b)
	}
}

func containsKey(t *testing.T, b []byte, k string) bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	_, ok := m[k]
	return ok
}

// TestVersionAndHealthBodies: the version and health bodies are the
// spec's; reasons only when degraded.
func TestVersionAndHealthBodies(t *testing.T) {
	v := usg.VersionInfo{Service: "usg-v1", ServiceVersion: "1.6.0", ModelVersion: "m",
		Features:       []string{"BUN", "CREATININE", "HGB", "ABSOLUTE LYMPHOCYTES", "age_months"},
		FeatureAliases: map[string]string{"absolute_lymphocytes": "ABSOLUTE LYMPHOCYTES"}, ThresholdImpaired: 0.535, SGCutoff: 1.035}
	b, _ := json.Marshal(NewVersion(v))
	want := `{"service":"usg-v1","service_version":"1.6.0","model_version":"m",` +
		`"features":["BUN","CREATININE","HGB","ABSOLUTE LYMPHOCYTES","age_months"],` +
		`"feature_aliases":{"absolute_lymphocytes":"ABSOLUTE LYMPHOCYTES"},"threshold_impaired":0.535,"sg_cutoff":1.035}`
	if string(b) != want {
		t.Errorf("version body\n%s\nwant\n%s", b, want)
	}
	h := usg.Health{Status: "ok", Service: "usg-v1", ModelVersion: "m", ServiceVersion: "1.6.0"}
	if b, _ := json.Marshal(NewHealth(h, nil)); string(b) != `{"status":"ok","service":"usg-v1","model_version":"m","service_version":"1.6.0"}` {
		t.Errorf("health body %s", b)
	}
	h.Status = "degraded"
	if b, _ := json.Marshal(NewHealth(h, []string{"disk low"})); string(b) != `{"status":"degraded","service":"usg-v1","model_version":"m","service_version":"1.6.0","reasons":["disk low"]}` {
		t.Errorf("degraded health body %s", b)
	}
}
