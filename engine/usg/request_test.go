package usg

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// validValues are a plausible request's values, none corrected:
// {"BUN": 30, "CREATININE": 2.0, "HGB": 12, "ABSOLUTE LYMPHOCYTES": 2000,
// "age_months": 150}.
var validValues = [NumFeatures]float64{30, 2, 12, 2000, 150}

// TestNewRequest: the corrections come before the ranges, and a value
// outside its range after them is a *RangeError naming it. The wire
// parser's rules around it are api/usgv1's tests.
func TestNewRequest(t *testing.T) {
	req, err := NewRequest([NumFeatures]float64{30, 221, 12, 1.234, 150})
	if err != nil {
		t.Fatal(err)
	}
	if want := [NumFeatures]float64{30, 221 / 88.4, 12, 1234, 150}; req.Values != want {
		t.Errorf("values %v, want %v", req.Values, want)
	}
	wantWarnings := []string{
		"Creatinine (mg/dL): 221 → 2.5 (converted from umol/L to mg/dL)",
		"Abs. Lymphocytes (/uL): 1.234 → 1234 (value appears to be in thousands — converted to /uL)",
	}
	if !reflect.DeepEqual(req.Warnings, wantWarnings) {
		t.Errorf("warnings %q", req.Warnings)
	}
	_, err = NewRequest([NumFeatures]float64{400, 2, 30, 2000, 150})
	var re *RangeError
	if !errors.As(err, &re) || len(re.Outside) != 2 ||
		!strings.HasPrefix(err.Error(), "outside the plausible range: BUN 400 outside 1-300 mg/dL; HGB 30") {
		t.Fatalf("err %v, want a *RangeError naming BUN and HGB", err)
	}
}
