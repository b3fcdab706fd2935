package usgv1_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"vetlens/api/errstatus"
	"vetlens/api/usgv1"
	"vetlens/engine/usg"
)

const validBody = `{"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000, "age_months": 150}`

func TestParseRequestErrors(t *testing.T) {
	tests := []struct {
		name, body string
		code       usgv1.Code
		msgHas     string
	}{
		{"empty body", ``, usgv1.CodeInvalidJSON, ""},
		{"garbage", `{BUN: 1}`, usgv1.CodeInvalidJSON, ""},
		{"truncated", `{"BUN": 1`, usgv1.CodeInvalidJSON, ""},
		{"trailing data", validBody + ` {}`, usgv1.CodeInvalidJSON, ""},
		{"NaN literal", `{"BUN": NaN}`, usgv1.CodeInvalidJSON, ""},
		{"array", `[1,2,3]`, usgv1.CodeInvalidPayload, ""},
		{"string", `"BUN"`, usgv1.CodeInvalidPayload, ""},
		{"number", `12`, usgv1.CodeInvalidPayload, ""},
		{"null", `null`, usgv1.CodeInvalidPayload, ""},
		{"empty object", `{}`, usgv1.CodeMissing, "BUN, CREATININE, HGB, ABSOLUTE LYMPHOCYTES, age_months"},
		{"one missing", `{"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000}`, usgv1.CodeMissing, "age_months"},
		{"data not object is not unwrapped", `{"data": [1]}`, usgv1.CodeMissing, "BUN"},
		{"envelope missing", `{"data": {"BUN": 30}}`, usgv1.CodeMissing, "CREATININE"},
		{"missing beats invalid", `{"BUN": true, "HGB": 12}`, usgv1.CodeMissing, "CREATININE"},
		{"boolean", strings.Replace(validBody, `"HGB": 12`, `"HGB": true`, 1), usgv1.CodeInvalidValue, "HGB"},
		{"null value", strings.Replace(validBody, `"HGB": 12`, `"HGB": null`, 1), usgv1.CodeInvalidValue, "HGB (null)"},
		{"word", strings.Replace(validBody, `"BUN": 30`, `"BUN": "high"`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"empty string", strings.Replace(validBody, `"BUN": 30`, `"BUN": ""`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"NaN string", strings.Replace(validBody, `"BUN": 30`, `"BUN": "NaN"`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"Inf string", strings.Replace(validBody, `"BUN": 30`, `"BUN": "Infinity"`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"hex string", strings.Replace(validBody, `"BUN": 30`, `"BUN": "0x1e"`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"overflow", strings.Replace(validBody, `"BUN": 30`, `"BUN": 1e999`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"array value", strings.Replace(validBody, `"BUN": 30`, `"BUN": [30]`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"object value", strings.Replace(validBody, `"BUN": 30`, `"BUN": {"v": 30}`, 1), usgv1.CodeInvalidValue, "BUN"},
		{"invalid beats out of range", `{"BUN": 0, "CREATININE": "x", "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000, "age_months": 150}`, usgv1.CodeInvalidValue, "CREATININE"},
		{"canonical wins even when invalid", `{"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": null, "absolute_lymphocytes": 2000, "age_months": 150}`, usgv1.CodeInvalidValue, "ABSOLUTE LYMPHOCYTES"},
		{"BUN low", strings.Replace(validBody, `"BUN": 30`, `"BUN": 0.99`, 1), usgv1.CodeOutOfRange, "BUN"},
		{"BUN high", strings.Replace(validBody, `"BUN": 30`, `"BUN": 300.01`, 1), usgv1.CodeOutOfRange, "BUN"},
		{"creatinine low", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 0.09`, 1), usgv1.CodeOutOfRange, "CREATININE"},
		{"creatinine 30-50 is not converted", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 40`, 1), usgv1.CodeOutOfRange, "CREATININE"},
		{"creatinine exactly 50 is not converted", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 50`, 1), usgv1.CodeOutOfRange, "CREATININE"},
		{"creatinine too high even after conversion", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 2700`, 1), usgv1.CodeOutOfRange, "CREATININE"},
		{"HGB low", strings.Replace(validBody, `"HGB": 12`, `"HGB": 0.5`, 1), usgv1.CodeOutOfRange, "HGB"},
		{"HGB high", strings.Replace(validBody, `"HGB": 12`, `"HGB": 25.1`, 1), usgv1.CodeOutOfRange, "HGB"},
		{"lymphocytes zero is not scaled", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": 0`, 1), usgv1.CodeOutOfRange, "ABSOLUTE LYMPHOCYTES"},
		{"lymphocytes negative", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": -3`, 1), usgv1.CodeOutOfRange, "ABSOLUTE LYMPHOCYTES"},
		{"lymphocytes high", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": 50001`, 1), usgv1.CodeOutOfRange, "ABSOLUTE LYMPHOCYTES"},
		{"lymphocytes scaled tiny stays below range", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": 0.04`, 1), usgv1.CodeOutOfRange, "ABSOLUTE LYMPHOCYTES"},
		{"age zero", strings.Replace(validBody, `"age_months": 150`, `"age_months": 0`, 1), usgv1.CodeOutOfRange, "age_months"},
		{"age high", strings.Replace(validBody, `"age_months": 150`, `"age_months": 361`, 1), usgv1.CodeOutOfRange, "age_months"},
		{"two out of range", `{"BUN": 400, "CREATININE": 2.0, "HGB": 30, "ABSOLUTE LYMPHOCYTES": 2000, "age_months": 150}`, usgv1.CodeOutOfRange, "HGB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := usgv1.ParseRequest([]byte(tc.body))
			if err == nil {
				t.Fatalf("accepted %s as %+v", tc.body, req)
			}
			var e *usgv1.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not *Error", err)
			}
			if e.Code != tc.code {
				t.Fatalf("code %s, want %s (%s)", e.Code, tc.code, e.Message)
			}
			if !strings.Contains(e.Message, tc.msgHas) {
				t.Errorf("message %q lacks %q", e.Message, tc.msgHas)
			}
			if st := errstatus.USG(e.Code); st != http.StatusBadRequest {
				t.Errorf("status %d", st)
			}
		})
	}
}

func TestParseRequestAccepts(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     [usg.NumFeatures]float64
		warnings []string
	}{
		{"plain", validBody, [usg.NumFeatures]float64{30, 2, 12, 2000, 150}, nil},
		{"envelope", `{"data": ` + validBody + `}`, [usg.NumFeatures]float64{30, 2, 12, 2000, 150}, nil},
		{"numeric strings", `{"BUN": "30", "CREATININE": " 2.0 ", "HGB": "1.2e1", "ABSOLUTE LYMPHOCYTES": "+2000", "age_months": "150."}`,
			[usg.NumFeatures]float64{30, 2, 12, 2000, 150}, nil},
		{"alias", `{"BUN": 30, "CREATININE": 2.0, "HGB": 12, "absolute_lymphocytes": 2100, "age_months": 150}`,
			[usg.NumFeatures]float64{30, 2, 12, 2100, 150}, nil},
		{"canonical wins over alias", `{"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000, "absolute_lymphocytes": "junk", "age_months": 150}`,
			[usg.NumFeatures]float64{30, 2, 12, 2000, 150}, nil},
		{"range edges inclusive", `{"BUN": 1, "CREATININE": 0.1, "HGB": 25, "ABSOLUTE LYMPHOCYTES": 50, "age_months": 360}`,
			[usg.NumFeatures]float64{1, 0.1, 25, 50, 360}, nil},
		{"range edges inclusive high", `{"BUN": 300, "CREATININE": 30, "HGB": 1, "ABSOLUTE LYMPHOCYTES": 50000, "age_months": 1}`,
			[usg.NumFeatures]float64{300, 30, 1, 50000, 1}, nil},
		{"creatinine umol/L", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 150`, 1),
			[usg.NumFeatures]float64{30, 150 / 88.4, 12, 2000, 150},
			[]string{"Creatinine (mg/dL): 150 → 1.7 (converted from umol/L to mg/dL)"}},
		{"creatinine just above 50", strings.Replace(validBody, `"CREATININE": 2.0`, `"CREATININE": 50.5`, 1),
			[usg.NumFeatures]float64{30, 50.5 / 88.4, 12, 2000, 150},
			[]string{"Creatinine (mg/dL): 50.5 → 0.57 (converted from umol/L to mg/dL)"}},
		{"lymphocytes thousands", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": "2.35"`, 1),
			[usg.NumFeatures]float64{30, 2, 12, 2350, 150},
			[]string{"Abs. Lymphocytes (/uL): 2.35 → 2350 (value appears to be in thousands — converted to /uL)"}},
		{"lymphocytes 49.9 scaled", strings.Replace(validBody, `"ABSOLUTE LYMPHOCYTES": 2000`, `"ABSOLUTE LYMPHOCYTES": 49.9`, 1),
			[usg.NumFeatures]float64{30, 2, 12, 49900, 150},
			[]string{"Abs. Lymphocytes (/uL): 49.9 → 49900 (value appears to be in thousands — converted to /uL)"}},
		{"both corrections in order", `{"BUN": 30, "CREATININE": 221, "HGB": 12, "absolute_lymphocytes": 1.234, "age_months": 150}`,
			[usg.NumFeatures]float64{30, 221 / 88.4, 12, 1234, 150},
			[]string{
				"Creatinine (mg/dL): 221 → 2.5 (converted from umol/L to mg/dL)",
				"Abs. Lymphocytes (/uL): 1.234 → 1234 (value appears to be in thousands — converted to /uL)",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := usgv1.ParseRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if d := req.Values[i] - tc.want[i]; d > 1e-9 || d < -1e-9 {
					t.Errorf("%s = %v, want %v", usg.Features()[i], req.Values[i], tc.want[i])
				}
			}
			if !reflect.DeepEqual(req.Warnings, tc.warnings) {
				t.Errorf("warnings %q, want %q", req.Warnings, tc.warnings)
			}
		})
	}
}

// TestOptionalFields: clinic_code and uuid are absent, null or strings
// following the identifier rule (internal/ident); anything else is
// invalid_value, in the spec's error shape, and nothing is kept.
func TestOptionalFields(t *testing.T) {
	with := func(extra string) string {
		return `{"data": {"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000, "age_months": 150` + extra + `}}`
	}
	for _, tc := range []struct {
		name, extra  string
		code         usgv1.Code // "": accepted
		clinic, uuid string
		msgHas       string
	}{
		{"both", `, "clinic_code": "C-17", "uuid": "cat-42"`, "", "C-17", "cat-42", ""},
		{"absent", ``, "", "", "", ""},
		{"null", `, "clinic_code": null, "uuid": null`, "", "", "", ""},
		{"accents and emoji", `, "clinic_code": "São Paulo 🐕"`, "", "São Paulo 🐕", "", ""},
		{"at the cap", `, "uuid": "` + strings.Repeat("u", 128) + `"`, "", "", strings.Repeat("u", 128), ""},
		{"over the cap", `, "uuid": "` + strings.Repeat("u", 129) + `"`, usgv1.CodeInvalidValue, "", "", "uuid: too long"},
		{"32 KB", `, "clinic_code": "` + strings.Repeat("c", 32<<10) + `"`, usgv1.CodeInvalidValue, "", "", "clinic_code: too long"},
		{"NUL", `, "clinic_code": "a\u0000b"`, usgv1.CodeInvalidValue, "", "", "clinic_code: character not allowed"},
		{"ESC", `, "uuid": "\u001b[31mred"`, usgv1.CodeInvalidValue, "", "", "uuid: character not allowed"},
		{"RTL override", `, "uuid": "abc\u202Etxt.exe"`, usgv1.CodeInvalidValue, "", "", "uuid: character not allowed"},
		{"lone surrogate", `, "uuid": "\ud800"`, usgv1.CodeInvalidValue, "", "", "uuid: character not allowed"},
		{"invalid UTF-8", ", \"uuid\": \"a\xffb\"", usgv1.CodeInvalidValue, "", "", "uuid: character not allowed"},
		{"number", `, "clinic_code": 17`, usgv1.CodeInvalidValue, "", "", "clinic_code must be a string (got number)"},
		{"object", `, "uuid": {"a": 1}`, usgv1.CodeInvalidValue, "", "", "uuid must be a string (got object)"},
		{"array", `, "uuid": ["a"]`, usgv1.CodeInvalidValue, "", "", "uuid must be a string (got array)"},
		{"boolean", `, "uuid": true`, usgv1.CodeInvalidValue, "", "", "uuid must be a string (got boolean)"},
		{"both bad", `, "clinic_code": 1, "uuid": "\u0007"`, usgv1.CodeInvalidValue, "", "", "clinic_code must be a string (got number); uuid: character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := usgv1.ParseRequest([]byte(with(tc.extra)))
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if req.ClinicCode != tc.clinic || req.UUID != tc.uuid {
					t.Fatalf("optional fields %q %q", req.ClinicCode, req.UUID)
				}
				return
			}
			var e *usgv1.Error
			if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Message, tc.msgHas) || req != nil {
				t.Fatalf("err %v, want %s containing %q", err, tc.code, tc.msgHas)
			}
			if len(e.Message) > 400 {
				t.Fatalf("message of %d bytes: the value is echoed", len(e.Message))
			}
		})
	}
}

func TestErrorBodyJSON(t *testing.T) {
	_, err := usgv1.ParseRequest([]byte(`[]`))
	b, _ := json.Marshal(usgv1.ErrorBodyOf(err))
	var got map[string]map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["error"]["code"] != "invalid_payload" || got["error"]["message"] == "" || len(got) != 1 || len(got["error"]) != 2 {
		t.Errorf("error body %s", b)
	}
	b, _ = json.Marshal(usgv1.ErrorBodyOf(errors.New("boom")))
	if string(b) != `{"error":{"code":"internal_error","message":"boom"}}` {
		t.Errorf("internal error body %s", b)
	}
}
