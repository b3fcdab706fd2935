package usg

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// NumFeatures is the number of model inputs.
const NumFeatures = 5

// Canonical feature keys, in the model's input order (spec usg-v1).
const (
	FeatureBUN         = "BUN"
	FeatureCreatinine  = "CREATININE"
	FeatureHGB         = "HGB"
	FeatureLymphocytes = "ABSOLUTE LYMPHOCYTES"
	FeatureAgeMonths   = "age_months"
)

// AliasLymphocytes is the accepted alias of FeatureLymphocytes.
const AliasLymphocytes = "absolute_lymphocytes"

// Features returns the canonical feature keys in model input order.
func Features() []string {
	return []string{FeatureBUN, FeatureCreatinine, FeatureHGB, FeatureLymphocytes, FeatureAgeMonths}
}

// FeatureAliases returns the accepted alias -> canonical key map.
func FeatureAliases() map[string]string {
	return map[string]string{AliasLymphocytes: FeatureLymphocytes}
}

// featureInfo is the display label and plausible range (inclusive, after
// auto-correction) of each feature, indexed in model order.
var featureInfo = [NumFeatures]struct {
	key, label, unit string
	lo, hi           float64
}{
	{FeatureBUN, "BUN (mg/dL)", "mg/dL", 1, 300},
	{FeatureCreatinine, "Creatinine (mg/dL)", "mg/dL", 0.1, 30},
	{FeatureHGB, "Hemoglobin (g/dL)", "g/dL", 1, 25},
	{FeatureLymphocytes, "Abs. Lymphocytes (/uL)", "/uL", 50, 50000},
	{FeatureAgeMonths, "Age (months)", "months", 1, 360},
}

// Label returns the display label of feature i (model order).
func Label(i int) string { return featureInfo[i].label }

// Request is a validated prediction request.
type Request struct {
	// Values are the features in model order, in the spec's units, after
	// auto-correction and range checks.
	Values [NumFeatures]float64
	// Warnings describe the auto-corrections applied, in the spec's shapes.
	Warnings []string
	// ClinicCode and UUID are the optional log fields; they do not affect the model.
	ClinicCode string
	UUID       string
	// Received is when the request entered the service; elapsed_ms counts
	// from it. Zero means "when Predict started".
	Received time.Time
}

// RangeError is a request whose values, after the auto-corrections, lie
// outside their plausible ranges (spec usg-v1's out_of_range).
type RangeError struct {
	// Outside says each offending value with its range, in model order.
	Outside []string
}

// Error lists the values outside their plausible ranges.
func (e *RangeError) Error() string {
	return "outside the plausible range: " + strings.Join(e.Outside, "; ")
}

// NewRequest validates values given in the spec's units, in model order:
// it applies the two unit auto-corrections (recording their warnings),
// then the plausible ranges (inclusive). A value outside its range after
// correction is a *RangeError. The wire parser (api/usgv1) and the
// desktop's form both build requests here.
func NewRequest(values [NumFeatures]float64) (*Request, error) {
	req := &Request{Values: values}
	req.applyCorrections()
	var out []string
	for i, f := range featureInfo {
		if x := req.Values[i]; x < f.lo || x > f.hi {
			out = append(out, fmt.Sprintf("%s %s outside %s-%s %s", f.key, formatNum(x), formatNum(f.lo), formatNum(f.hi), f.unit))
		}
	}
	if len(out) > 0 {
		return nil, &RangeError{Outside: out}
	}
	return req, nil
}

// Optional fields stored with each logged prediction.
const (
	FieldClinicCode = "clinic_code"
	FieldUUID       = "uuid"
)

// applyCorrections applies the two unit auto-corrections and records their warnings.
func (r *Request) applyCorrections() {
	const ic, il = 1, 3
	if c := r.Values[ic]; c > 50 {
		conv := c / 88.4
		r.Warnings = append(r.Warnings, CreatinineWarning(c, conv))
		r.Values[ic] = conv
	}
	if l := r.Values[il]; l > 0 && l < 50 {
		scaled := l * 1000
		r.Warnings = append(r.Warnings, LymphocyteWarning(l, scaled))
		r.Values[il] = scaled
	}
}

// CreatinineWarning is the spec's warning for a creatinine taken as umol/L.
// Numbers print as the submitted value and the converted value rounded to
// two decimals (the precision of explanation values), shortest form.
func CreatinineWarning(submitted, converted float64) string {
	return fmt.Sprintf("Creatinine (mg/dL): %s → %s (converted from umol/L to mg/dL)",
		formatNum(submitted), formatNum(round(converted, 2)))
}

// LymphocyteWarning is the spec's warning for lymphocytes taken as 10^3/uL.
func LymphocyteWarning(submitted, scaled float64) string {
	return fmt.Sprintf("Abs. Lymphocytes (/uL): %s → %s (value appears to be in thousands — converted to /uL)",
		formatNum(submitted), formatNum(round(scaled, 2)))
}

func formatNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// round rounds half away from zero to d decimals.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
