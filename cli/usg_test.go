package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/api/usgv1"
	"vetlens/engine/usg"
	"vetlens/internal/config"
)

const modelsDir = "../models"

func runUSG(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := USG(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUSGHappyPath(t *testing.T) {
	code, out, errs := runUSG(t, "", "--models", modelsDir, "--bun", "45", "--creatinine", "265",
		"--hgb", "9.8", "--lymphocytes", "1.1", "--age-months", "190")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s, stdout %s", code, errs, out)
	}
	var resp usgv1.Response
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("output is not the response body: %v\n%s", err, out)
	}
	r := resp.Result
	if resp.Meta.Service != "usg-v1" || !strings.Contains(r.ModelVersion, "simulated") || len(r.Explanation.Features) != 5 {
		t.Errorf("response %+v", resp)
	}
	if r.Classification != usg.LabelImpaired && r.Classification != usg.LabelAdequate {
		t.Errorf("classification %q", r.Classification)
	}
	if len(r.Warnings) != 2 || !strings.Contains(out, "Creatinine (mg/dL): 265 → 3 (converted from umol/L to mg/dL)") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestUSGJSONInput(t *testing.T) {
	body := `{"data": {"BUN": 22, "CREATININE": 1.3, "HGB": 14, "absolute_lymphocytes": 3000, "age_months": 40}}`
	code, out, errs := runUSG(t, body, "--models", modelsDir, "--json", "-")
	if code != ExitOK {
		t.Fatalf("stdin: exit %d, %s %s", code, errs, out)
	}
	f := filepath.Join(t.TempDir(), "req.json")
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.Models.Env, modelsDir)
	code, out2, errs := runUSG(t, "", "--json", f)
	if code != ExitOK {
		t.Fatalf("file with $%s: exit %d, %s %s", config.Models.Env, code, errs, out2)
	}
	var a, b usgv1.Response
	_ = json.Unmarshal([]byte(out), &a)
	_ = json.Unmarshal([]byte(out2), &b)
	if a.Result.ProbabilityImpaired != b.Result.ProbabilityImpaired || a.Result.RiskTier != b.Result.RiskTier {
		t.Errorf("same request, different results: %v vs %v", a.Result, b.Result)
	}
}

func TestUSGErrors(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		exit  int
		code  usgv1.Code
	}{
		{"missing feature", "", []string{"--bun", "30", "--creatinine", "2", "--hgb", "12", "--lymphocytes", "2000"}, ExitRejected, usgv1.CodeMissing},
		{"out of range", "", []string{"--bun", "30", "--creatinine", "2", "--hgb", "40", "--lymphocytes", "2000", "--age-months", "100"}, ExitRejected, usgv1.CodeOutOfRange},
		{"not a number", "", []string{"--bun", "thirty", "--creatinine", "2", "--hgb", "12", "--lymphocytes", "2000", "--age-months", "100"}, ExitRejected, usgv1.CodeInvalidValue},
		{"invalid json", "{", []string{"--json", "-"}, ExitRejected, usgv1.CodeInvalidJSON},
		{"not an object", "[1]", []string{"--json", "-"}, ExitRejected, usgv1.CodeInvalidPayload},
		{"no models", "", []string{"--models", "/nonexistent", "--bun", "30", "--creatinine", "2", "--hgb", "12", "--lymphocytes", "2000", "--age-months", "100"}, ExitInternal, usgv1.CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runUSG(t, tc.stdin, tc.args...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, tc.exit, out, errs)
			}
			var body usgv1.ErrorBody
			if err := json.Unmarshal([]byte(out), &body); err != nil || body.Error.Code != tc.code || body.Error.Message == "" {
				t.Errorf("error body %s (%v), want code %s", out, err, tc.code)
			}
		})
	}
}

func TestUSGUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--nope"},
		{"--json", "-", "--bun", "3"},
		{"--bun", "3", "extra"},
		{"--json", "/nonexistent/req.json"},
	} {
		if code, out, _ := runUSG(t, "", args...); code != ExitUsage || out != "" {
			t.Errorf("%v: exit %d stdout %q, want %d and nothing", args, code, out, ExitUsage)
		}
	}
}
