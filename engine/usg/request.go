package usg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"vetlens/internal/ident"
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

// Code is a stable error code of the USG service (spec usg-v1, Errors).
type Code string

// Error codes the engine produces. The API-key codes belong to the HTTP layer
// but are listed so every code of the spec has one spelling.
const (
	CodeInvalidJSON    Code = "invalid_json"
	CodeInvalidPayload Code = "invalid_payload"
	CodeMissing        Code = "missing_features"
	CodeOutOfRange     Code = "out_of_range"
	CodeInvalidValue   Code = "invalid_value"
	CodeMissingAPIKey  Code = "missing_api_key"
	CodeInvalidAPIKey  Code = "invalid_api_key"
	CodeInternal       Code = "internal_error"
)

// HTTPStatus is the status the spec pairs with the code.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeInvalidJSON, CodeInvalidPayload, CodeMissing, CodeOutOfRange, CodeInvalidValue:
		return http.StatusBadRequest
	case CodeMissingAPIKey:
		return http.StatusUnauthorized
	case CodeInvalidAPIKey:
		return http.StatusForbidden
	default:
		return http.StatusInternalServerError
	}
}

// Error is a request the service rejects, or an internal failure, with its
// stable code. Message text is for people and may change.
type Error struct {
	Code    Code
	Message string
}

// Error returns the code and the message.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// ErrorDetail is the inner object of the error body.
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// ErrorBody is the spec's error response body {error: {code, message}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorBodyOf turns any error into the spec's error body: an *Error keeps its
// code, anything else is internal_error.
func ErrorBodyOf(err error) ErrorBody {
	var e *Error
	if errors.As(err, &e) {
		return ErrorBody{Error: ErrorDetail{Code: e.Code, Message: e.Message}}
	}
	return ErrorBody{Error: ErrorDetail{Code: CodeInternal, Message: err.Error()}}
}

func errorf(c Code, format string, a ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, a...)}
}

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

// decimal is the number syntax accepted inside strings: plain decimal
// notation with an optional exponent (no hex, no NaN/Inf, no underscores).
var decimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// ParseRequest validates a predict body by the spec's numbered rules:
// invalid_json, invalid_payload, missing_features, invalid_value, then the
// auto-corrections, then out_of_range. Errors are *Error.
func ParseRequest(body []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf(CodeInvalidJSON, "body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf(CodeInvalidJSON, "body is not valid JSON: data after the top-level value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errorf(CodeInvalidPayload, "body must be a JSON object")
	}
	if inner, ok := obj["data"].(map[string]any); ok {
		obj = inner
	}
	return parsePayload(obj)
}

func parsePayload(obj map[string]any) (*Request, error) {
	raw := [NumFeatures]any{}
	var missing []string
	for i, f := range featureInfo {
		val, ok := obj[f.key]
		if !ok && f.key == FeatureLymphocytes {
			val, ok = obj[AliasLymphocytes]
		}
		if !ok {
			missing = append(missing, f.key)
			continue
		}
		raw[i] = val
	}
	if len(missing) > 0 {
		return nil, errorf(CodeMissing, "missing required features: %s", strings.Join(missing, ", "))
	}
	req := &Request{}
	var bad []string
	for i, f := range featureInfo {
		x, ok := toFloat(raw[i])
		if !ok {
			bad = append(bad, fmt.Sprintf("%s (%s)", f.key, describe(raw[i])))
			continue
		}
		req.Values[i] = x
	}
	if len(bad) > 0 {
		return nil, errorf(CodeInvalidValue, "not a number: %s", strings.Join(bad, ", "))
	}
	if err := req.optionalFields(obj); err != nil {
		return nil, err
	}
	req.applyCorrections()
	var out []string
	for i, f := range featureInfo {
		if x := req.Values[i]; x < f.lo || x > f.hi {
			out = append(out, fmt.Sprintf("%s %s outside %s-%s %s", f.key, formatNum(x), formatNum(f.lo), formatNum(f.hi), f.unit))
		}
	}
	if len(out) > 0 {
		return nil, errorf(CodeOutOfRange, "outside the plausible range: %s", strings.Join(out, "; "))
	}
	return req, nil
}

// Optional fields stored with each logged prediction.
const (
	FieldClinicCode = "clinic_code"
	FieldUUID       = "uuid"
)

// optionalFields reads clinic_code and uuid: absent or null, or a string
// following the identifier rule (internal/ident: at most ident.MaxBytes
// bytes of UTF-8, graphic characters only, no control or bidi
// characters). Anything else is invalid_value: they are stored and
// logged as sent, so they are bounded and printable.
func (r *Request) optionalFields(obj map[string]any) error {
	var bad []string
	for _, f := range []struct {
		key string
		dst *string
	}{{FieldClinicCode, &r.ClinicCode}, {FieldUUID, &r.UUID}} {
		v, ok := obj[f.key]
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s must be a string (got %s)", f.key, describeType(v)))
			continue
		}
		if err := ident.Check(s); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", f.key, err))
			continue
		}
		*f.dst = s
	}
	if len(bad) > 0 {
		return errorf(CodeInvalidValue, "%s", strings.Join(bad, "; "))
	}
	return nil
}

// describeType names a decoded JSON value's type.
func describeType(v any) string {
	switch v.(type) {
	case json.Number:
		return "number"
	case string:
		return "string"
	}
	return describe(v)
}

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

// toFloat coerces a decoded JSON value: numbers, and strings holding a
// decimal number, give a finite float; anything else (booleans, null,
// arrays, objects, other strings, overflow) does not.
func toFloat(v any) (float64, bool) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
		if !decimal.MatchString(s) {
			return 0, false
		}
	default:
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false
	}
	return x, true
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		if len(t) > 20 {
			t = t[:20] + "..."
		}
		return strconv.Quote(t)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprint(t)
	}
}

func formatNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// round rounds half away from zero to d decimals.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
