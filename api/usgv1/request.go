package usgv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"vetlens/engine/usg"
	"vetlens/internal/ident"
)

// decimal is the number syntax accepted inside strings: plain decimal
// notation with an optional exponent (no hex, no NaN/Inf, no underscores).
var decimal = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// ParseRequest validates a predict body by the spec's numbered rules:
// invalid_json, invalid_payload, missing_features, invalid_value, then the
// auto-corrections, then out_of_range (usg.NewRequest). Errors are *Error.
func ParseRequest(body []byte) (*usg.Request, error) {
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

// parsePayload applies the rules after the body's shape: the required
// features (the alias standing in for its canonical key), their values,
// the optional fields, then the engine's corrections and ranges.
func parsePayload(obj map[string]any) (*usg.Request, error) {
	keys := usg.Features()
	raw := [usg.NumFeatures]any{}
	var missing []string
	for i, key := range keys {
		val, ok := obj[key]
		if !ok && key == usg.FeatureLymphocytes {
			val, ok = obj[usg.AliasLymphocytes]
		}
		if !ok {
			missing = append(missing, key)
			continue
		}
		raw[i] = val
	}
	if len(missing) > 0 {
		return nil, errorf(CodeMissing, "missing required features: %s", strings.Join(missing, ", "))
	}
	var values [usg.NumFeatures]float64
	var bad []string
	for i, key := range keys {
		x, ok := toFloat(raw[i])
		if !ok {
			bad = append(bad, fmt.Sprintf("%s (%s)", key, describe(raw[i])))
			continue
		}
		values[i] = x
	}
	if len(bad) > 0 {
		return nil, errorf(CodeInvalidValue, "not a number: %s", strings.Join(bad, ", "))
	}
	clinic, uuid, err := optionalFields(obj)
	if err != nil {
		return nil, err
	}
	req, err := usg.NewRequest(values)
	if err != nil {
		var re *usg.RangeError
		if errors.As(err, &re) {
			return nil, &Error{Code: CodeOutOfRange, Message: re.Error(), Err: err}
		}
		return nil, fmt.Errorf("usg request: %w", err)
	}
	req.ClinicCode, req.UUID = clinic, uuid
	return req, nil
}

// optionalFields reads clinic_code and uuid: absent or null, or a string
// following the identifier rule (internal/ident: at most ident.MaxBytes
// bytes of UTF-8, graphic characters only, no control or bidi
// characters). Anything else is invalid_value: they are stored and
// logged as sent, so they are bounded and printable.
func optionalFields(obj map[string]any) (clinic, uuid string, err error) {
	var bad []string
	for _, f := range []struct {
		key string
		dst *string
	}{{usg.FieldClinicCode, &clinic}, {usg.FieldUUID, &uuid}} {
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
		return "", "", errorf(CodeInvalidValue, "%s", strings.Join(bad, "; "))
	}
	return clinic, uuid, nil
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

// describe names a decoded JSON value for an invalid_value message: its
// kind, or a string quoted and cut at 20 bytes, or a number as sent.
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
