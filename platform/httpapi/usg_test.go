package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"vetlens/api/errstatus"
	"vetlens/api/usgv1"
	"vetlens/app"
	"vetlens/engine/testmodels"
	"vetlens/engine/usg"
)

const usgValid = `{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14, "clinic_code": "C-17", "uuid": "cat-9"}`

func checkCORS(t *testing.T, resp *http.Response) {
	t.Helper()
	h := resp.Header
	if h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "OPTIONS") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "x-api-key") {
		t.Errorf("%s %s: CORS headers missing: %v", resp.Request.Method, resp.Request.URL.Path, h)
	}
}

func TestUSGHealthVersionWithoutKey(t *testing.T) {
	a := newAPI(t, apiOpts{})
	resp, body := a.do("GET", "/usg/v1/health", "", nil)
	checkCORS(t, resp)
	h := obj(t, body)
	if resp.StatusCode != 200 || h["status"] != "ok" || h["service"] != "usg-v1" || h["model_version"] == "" || h["service_version"] != usg.ServiceVersion {
		t.Fatalf("health %d %s", resp.StatusCode, body)
	}
	resp, body = a.do("GET", "/usg/v1/version", "", nil)
	checkCORS(t, resp)
	v := obj(t, body)
	if resp.StatusCode != 200 || v["threshold_impaired"] != 0.535 || v["sg_cutoff"] != 1.035 || len(v["features"].([]any)) != 5 ||
		v["feature_aliases"].(map[string]any)["absolute_lymphocytes"] != "ABSOLUTE LYMPHOCYTES" {
		t.Fatalf("version %d %s", resp.StatusCode, body)
	}
	resp, body = a.do("OPTIONS", "/usg/v1/predict", "", nil)
	checkCORS(t, resp)
	if resp.StatusCode != 204 || len(body) != 0 {
		t.Fatalf("preflight %d %q", resp.StatusCode, body)
	}
}

func TestUSGPredictLogsAndBills(t *testing.T) {
	ctx := context.Background()
	a := newAPI(t, apiOpts{})
	resp, body := a.do("POST", "/usg/v1/predict", a.key, usgValid)
	checkCORS(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var r usgv1.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	m := obj(t, body)
	if _, ok := m["result"].(map[string]any)["warnings"]; ok {
		t.Error("warnings present without a correction")
	}
	if r.Meta.Service != "usg-v1" || r.Meta.ModelVersion != r.Result.ModelVersion || r.Meta.ElapsedMS <= 0 || len(r.Result.Explanation.Features) != 5 {
		t.Fatalf("%s", body)
	}
	// Envelope and both corrections: warnings present.
	resp, body = a.do("POST", "/usg/v1/predict", a.key, `{"data": {"BUN": 27, "CREATININE": 106, "HGB": 15.1, "absolute_lymphocytes": 1.4, "age_months": 14}}`)
	if resp.StatusCode != 200 || len(obj(t, body)["result"].(map[string]any)["warnings"].([]any)) != 2 {
		t.Fatalf("envelope: %d %s", resp.StatusCode, body)
	}
	log, err := a.svc.Repos().USGLog.List(ctx)
	if err != nil || len(log) != 2 {
		t.Fatalf("usg log: %d entries, %v", len(log), err)
	}
	e := log[0]
	if e.ClinicCode != "C-17" || e.UUID != "cat-9" || e.ModelVersion != r.Result.ModelVersion || e.Customer != "clinic-a" ||
		!strings.Contains(string(e.Inputs), `"BUN":27`) || !strings.Contains(string(e.Outputs), `"probability_impaired"`) {
		t.Fatalf("log entry %+v inputs %s", e, e.Inputs)
	}
	evs, _ := a.svc.Repos().Ledger.Events(ctx)
	if len(evs) != 2 || evs[0].CallType != "usg" || evs[0].RateCents != 50 || evs[1].MonthlyUsage != 2 {
		t.Fatalf("ledger %+v", evs)
	}
}

// TestUSGErrorRows exercises every error row of the usg-v1 spec and the
// rows VetLens adds (413, 404, 405), each with the {error:{code,message}}
// shape and CORS headers. Nothing here is billed or logged.
func TestUSGErrorRows(t *testing.T) {
	a := newAPI(t, apiOpts{})
	revoked, info, _ := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	a.svc.Accounts.RevokeKey(context.Background(), info.Prefix)
	for _, tc := range []struct {
		name, method, path, key, body string
		status                        int
		code                          string
	}{
		{"invalid_json", "POST", "/usg/v1/predict", a.key, `{"BUN":`, 400, "invalid_json"},
		{"invalid_payload", "POST", "/usg/v1/predict", a.key, `[1,2]`, 400, "invalid_payload"},
		{"missing_features", "POST", "/usg/v1/predict", a.key, `{"BUN": 27}`, 400, "missing_features"},
		{"invalid_value", "POST", "/usg/v1/predict", a.key, strings.Replace(usgValid, "27", `"abc"`, 1), 400, "invalid_value"},
		{"out_of_range", "POST", "/usg/v1/predict", a.key, strings.Replace(usgValid, `"age_months": 14`, `"age_months": 400`, 1), 400, "out_of_range"},
		{"missing_api_key", "POST", "/usg/v1/predict", "", usgValid, 401, "missing_api_key"},
		{"invalid_api_key", "POST", "/usg/v1/predict", "vl_00000000_nope", usgValid, 403, "invalid_api_key"},
		{"revoked key", "POST", "/usg/v1/predict", revoked, usgValid, 403, "invalid_api_key"},
		{"body too large", "POST", "/usg/v1/predict", a.key, `{"x":"` + strings.Repeat("a", MaxSmallBody) + `"}`, 413, "payload_too_large"},
		{"unknown path", "GET", "/usg/v1/nope", "", "", 404, "not_found"},
		{"wrong method", "GET", "/usg/v1/predict", "", "", 405, "method_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			resp, b := a.do(tc.method, tc.path, tc.key, body)
			checkCORS(t, resp)
			m := obj(t, b)
			e, _ := m["error"].(map[string]any)
			if resp.StatusCode != tc.status || e["code"] != tc.code || e["message"] == "" || len(m) != 1 || len(e) != 2 {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, b, tc.status, tc.code)
			}
		})
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatalf("errors were billed: %+v", evs)
	}
}

func FuzzUSGParseRequest(f *testing.F) {
	for _, s := range []string{usgValid, `{"data":{"BUN":"27"}}`, `[]`, `{"BUN":1e999}`, `{"CREATININE":"0x10"}`, `null`, `{"data":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := usgv1.ParseRequest(body)
		if err != nil {
			eb := usgv1.ErrorBodyOf(err)
			if st := errstatus.USG(eb.Error.Code); st != 400 {
				t.Fatalf("parse error with status %d: %v", st, err)
			}
			return
		}
		for i, v := range req.Values {
			if v != v || v <= 0 {
				t.Fatalf("accepted feature %d = %v", i, v)
			}
		}
	})
}

// brokenUSG fails every prediction, as a broken ONNX Runtime would.
type brokenUSG struct{ *usg.Engine }

func (brokenUSG) Predict(context.Context, *usg.Request) (*usg.Response, error) {
	return nil, errors.New("onnxruntime: session run failed")
}

// TestUSGInternalError: the spec's 500 internal_error row; nothing is
// logged or billed.
func TestUSGInternalError(t *testing.T) {
	a := newAPI(t, apiOpts{})
	svc, err := app.New(app.Deps{Repos: a.svc.Repos(), USG: brokenUSG{testmodels.USG(t)}}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(New(svc, Config{}))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/usg/v1/predict", strings.NewReader(usgValid))
	req.Header.Set("x-api-key", a.key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb usgv1.ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	if resp.StatusCode != 500 || eb.Error.Code != "internal_error" || eb.Error.Message == "" {
		t.Fatalf("%d %+v", resp.StatusCode, eb)
	}
	checkCORS(t, resp)
	if l, _ := a.svc.Repos().USGLog.List(context.Background()); len(l) != 0 {
		t.Fatal("failed prediction logged")
	}
}
