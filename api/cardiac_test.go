package api

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"

	"vetlens/engine/cardiac"
)

// keys marshals v and returns it as a map with its sorted keys.
func keys(t *testing.T, v any) (map[string]any, []string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return m, ks
}

func f(v float64) *float64 { return &v }

// measured is a result as the engine returns it for a 2000x1000 image:
// landmarks in pixels, each model's set, the rounded values and code.
func measured(code cardiac.Code, vhs, vlas *float64) *cardiac.Result {
	l := cardiac.Landmarks{
		cardiac.HeartTop: {X: 1000, Y: 400}, cardiac.HeartBottom: {X: 1000, Y: 900}, cardiac.HeartRight: {X: 800, Y: 650},
		cardiac.HeartLeft: {X: 1300, Y: 650}, cardiac.VLASPoint: {X: 1160, Y: 520}, cardiac.VertebraA: {X: 700, Y: 100},
		cardiac.VertebraB: {X: 1333.33333, Y: 100},
	}
	return &cardiac.Result{Width: 2000, Height: 1000, ClassifierConfidence: 0.9, Landmarks: l,
		ModelLandmarks: []cardiac.Landmarks{l, l, l, l, l}, Spread: 0.00095, Confidence: cardiac.ConfidenceOptimal,
		Code: code, VHS: vhs, VLAS: vlas, LandmarksDetected: vhs != nil}
}

func TestCardiacResponseShape(t *testing.T) {
	normalKeys := []string{"model_confidence", "model_version", "pop_detected", "prediction", "result_code", "result_description", "spread", "vhs", "vlas"}
	rejectKeys := []string{"classifier_confidence", "model_version", "rejected", "rejection_reason", "result_code", "result_description", "vhs", "vlas"}
	nanLandmark := measured(cardiac.CodeUnexpected, nil, nil)
	nanLandmark.Landmarks[cardiac.HeartTop].X = math.NaN()
	nanLandmark.Spread = math.NaN()
	nanValidity := &cardiac.Result{Width: 2000, Height: 1000, ClassifierConfidence: math.NaN(), Spread: math.NaN(), Code: cardiac.CodeUnexpected}
	rejected := &cardiac.Result{Width: 2000, Height: 1000, ClassifierConfidence: 0.123456, Rejected: true, Spread: math.NaN(), Code: cardiac.CodeRejected,
		VHS: f(9)} // a value on a rejected result is never reported
	popFailed := measured(cardiac.CodePoPFailed, nil, nil)
	popFailed.PopDetected = true
	rendered := measured(cardiac.CodeHighConfidence, f(10), f(2))
	rendered.Rendered = []byte{0xff, 0xd8, 1, 2}

	cases := []struct {
		name      string
		r         *cardiac.Result
		keys      []string
		vhs, vlas any // nil means JSON null
	}{
		{"code 1", measured(cardiac.CodeHighConfidence, f(10), f(2)), normalKeys, 10.0, 2.0},
		{"code 4", measured(cardiac.CodeNoVLAS, f(10), nil), normalKeys, 10.0, nil},
		{"code 5", measured(cardiac.CodeNoLandmarks, nil, nil), normalKeys, nil, nil},
		{"code 0 NaN landmark", nanLandmark, []string{"model_version", "pop_detected", "result_code", "result_description", "vhs", "vlas"}, nil, nil},
		{"code 0 NaN validity", nanValidity, []string{"model_version", "pop_detected", "result_code", "result_description", "vhs", "vlas"}, nil, nil},
		{"code 6 rejection", rejected, rejectKeys, nil, nil},
		{"code 7 PoP failed", popFailed, normalKeys, nil, nil},
		{"rendered", rendered, append(slices.Clone(normalKeys), "rendered_image"), 10.0, 2.0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, ks := keys(t, NewCardiacResponse(tc.r, "v3.1.0"))
			want := slices.Clone(tc.keys)
			sort.Strings(want)
			if !reflect.DeepEqual(ks, want) {
				t.Fatalf("keys %v, want %v", ks, want)
			}
			if m["vhs"] != tc.vhs || m["vlas"] != tc.vlas {
				t.Errorf("vhs %v vlas %v, want %v %v", m["vhs"], m["vlas"], tc.vhs, tc.vlas)
			}
			if m["model_version"] != "v3.1.0" || m["result_code"] != float64(tc.r.Code) || m["result_description"] != tc.r.Code.Description() {
				t.Errorf("version/code/description: %v %v %v", m["model_version"], m["result_code"], m["result_description"])
			}
			for _, k := range []string{"historic_vhs", "historic_vlas", "billing", "landmarks_detected", "axes_perpendicular"} {
				if _, ok := m[k]; ok {
					t.Errorf("%s must not be in the engine body", k)
				}
			}
		})
	}

	// Details of the normal body.
	m, _ := keys(t, NewCardiacResponse(cases[0].r, "v"))
	pred := m["prediction"].([]any)
	if len(pred) != cardiac.NumLandmarks {
		t.Fatalf("prediction has %d entries", len(pred))
	}
	for k, p := range pred {
		if e := p.(map[string]any); e["class"] != cardiac.ClassNames[k] {
			t.Errorf("entry %d class %v, want %s", k, e["class"], cardiac.ClassNames[k])
		}
	}
	// Normalized by width and height, rounded to 4 decimals.
	if hb := pred[cardiac.HeartBottom].(map[string]any); hb["x"] != 0.5 || hb["y"] != 0.9 {
		t.Errorf("heart_bottom %v, want x 0.5 y 0.9", hb)
	}
	if vb := pred[cardiac.VertebraB].(map[string]any); vb["x"] != 0.6667 {
		t.Errorf("vertebra_b x %v, want 0.6667", vb["x"])
	}
	if m["spread"] != 0.00095 || m["model_confidence"] != "optimal" || m["pop_detected"] != false {
		t.Errorf("spread %v confidence %v pop %v", m["spread"], m["model_confidence"], m["pop_detected"])
	}
	m, _ = keys(t, NewCardiacResponse(rejected, "v"))
	if m["classifier_confidence"] != 0.1235 || m["rejected"] != true || m["rejection_reason"] != "not_a_valid_radiograph" {
		t.Errorf("rejection body %v", m)
	}
	m, _ = keys(t, NewCardiacResponse(popFailed, "v"))
	if m["pop_detected"] != true {
		t.Errorf("PoP failed body: pop_detected %v", m["pop_detected"])
	}
	m, _ = keys(t, NewCardiacResponse(rendered, "v"))
	if b, err := base64.StdEncoding.DecodeString(m["rendered_image"].(string)); err != nil || len(b) != 4 {
		t.Errorf("rendered_image does not round-trip: %v", err)
	}
}

// TestCardiacResponseEmbedding shows the app layer's extension: embedding
// the body flattens it next to billing and history.
func TestCardiacResponseEmbedding(t *testing.T) {
	body := struct {
		CardiacResponse
		HistoricVHS [][2]any       `json:"historic_vhs"`
		Billing     map[string]any `json:"billing"`
	}{CardiacResponse: NewCardiacResponse(measured(cardiac.CodeHighConfidence, f(10), f(2)), "v"), HistoricVHS: [][2]any{}, Billing: map[string]any{"billable": true}}
	m, _ := keys(t, body)
	if m["vhs"] != 10.0 || m["billing"] == nil || m["historic_vhs"] == nil || m["prediction"] == nil {
		t.Errorf("embedded body %v", m)
	}
}
