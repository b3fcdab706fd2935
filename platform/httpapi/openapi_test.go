package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// schemaCheck validates v against the subset of JSON Schema the document
// uses (type, properties, required, items, enum, min/maxItems, minimum,
// maximum, $ref into components). Properties the document does not list
// are errors: the document must name every field the server sends.
type schemaCheck struct {
	t    *testing.T
	doc  map[string]any
	errs []string
}

func (c *schemaCheck) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		next, ok := c.doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		if !ok {
			c.errs = append(c.errs, "unresolved "+ref)
			return map[string]any{}
		}
		s = next
	}
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (c *schemaCheck) check(path string, s map[string]any, v any) {
	s = c.resolve(s)
	if t, ok := s["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, y := range x {
				types = append(types, y.(string))
			}
		}
		got := typeOf(v)
		if !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
			c.errs = append(c.errs, fmt.Sprintf("%s: %s, documented %v", path, got, types))
			return
		}
	}
	if e, ok := s["enum"].([]any); ok && v != nil && !slices.Contains(e, v) {
		c.errs = append(c.errs, fmt.Sprintf("%s: %v not in the documented %v", path, v, e))
	}
	if n, ok := v.(float64); ok {
		if lo, ok := s["minimum"].(float64); ok && n < lo {
			c.errs = append(c.errs, fmt.Sprintf("%s: %v below the documented minimum %v", path, n, lo))
		}
		if hi, ok := s["maximum"].(float64); ok && n > hi {
			c.errs = append(c.errs, fmt.Sprintf("%s: %v above the documented maximum %v", path, n, hi))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				c.errs = append(c.errs, fmt.Sprintf("%s: required %s missing", path, r))
			}
		}
		for k, val := range x {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if props != nil {
					c.errs = append(c.errs, fmt.Sprintf("%s.%s: not in the document", path, k))
				}
				continue
			}
			c.check(path+"."+k, ps, val)
		}
	case []any:
		if lo, ok := s["minItems"].(float64); ok && float64(len(x)) < lo {
			c.errs = append(c.errs, fmt.Sprintf("%s: %d items, documented at least %v", path, len(x), lo))
		}
		if hi, ok := s["maxItems"].(float64); ok && float64(len(x)) > hi {
			c.errs = append(c.errs, fmt.Sprintf("%s: %d items, documented at most %v", path, len(x), hi))
		}
		if is, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				c.check(path+"["+strconv.Itoa(i)+"]", is, e)
			}
		}
	}
}

// TestOpenAPIDocument: /v3/openapi.json lists every endpoint, and what
// the server really answers (success and error bodies, with the fakes'
// outcomes) matches the schema the document gives for that path and
// status: every field sent is documented with its type, required fields
// are present, enums and ranges hold.
func TestOpenAPIDocument(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	resp, b := a.do("GET", "/v3/openapi.json", "", nil)
	doc := obj(t, b)
	if resp.StatusCode != 200 || !strings.HasPrefix(doc["openapi"].(string), "3.") {
		t.Fatalf("%d", resp.StatusCode)
	}
	paths := doc["paths"].(map[string]any)
	for _, ep := range v3Endpoints {
		if _, ok := paths[ep.path].(map[string]any)[strings.ToLower(ep.method)]; !ok {
			t.Errorf("openapi lacks %s %s", ep.method, ep.path)
		}
	}
	for _, p := range []string{"/usg/v1/health", "/usg/v1/version", "/usg/v1/predict", "/eu/predict"} {
		if paths[p] == nil {
			t.Errorf("openapi lacks %s", p)
		}
	}
	// The check itself catches drift: a wrong type, an undocumented field,
	// a missing required one, a value outside an enum.
	drift := &schemaCheck{t: t, doc: doc}
	drift.check("drift", map[string]any{"$ref": "#/components/schemas/Landmark"}, map[string]any{"x": "0.5", "class": "tail", "z": 1.0})
	if len(drift.errs) != 4 {
		t.Fatalf("drifted body: %d errors %v, want 4 (type, enum, undocumented, required)", len(drift.errs), drift.errs)
	}
	usgBody := map[string]any{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14}
	img := func(level uint8) string { return b64(grayPNG(t, level, 64, 64)) }
	for _, tc := range []struct {
		name, method, path string
		key                bool
		body               any
		status             int
	}{
		{"health", "GET", "/v3/health", true, nil, 200},
		{"single, code 1", "POST", "/v3/predict", true, map[string]any{"image": img(1), "uuid": "rex"}, 200},
		{"single, code 4, rendered", "POST", "/v3/predict", true, map[string]any{"image": img(4), "render": true}, 200},
		{"single, rejected", "POST", "/v3/predict", true, map[string]any{"image": img(6)}, 200},
		{"batch", "POST", "/v3/predict", true, map[string]any{"images": []string{img(1), img(2), img(6)}, "uuid": "rex"}, 200},
		{"bad body", "POST", "/v3/predict", true, map[string]any{"image": 5}, 400},
		{"no key", "POST", "/v3/predict", false, map[string]any{"image": img(1)}, 403},
		{"session start", "POST", "/v3/pop-session/start", true, map[string]any{}, 200},
		{"unknown session", "POST", "/v3/pop-session", true, map[string]any{"session_id": "nope", "image": img(1)}, 404},
		{"corners", "POST", "/v3/corners", true, map[string]any{"image": img(1)}, 200},
		{"no corners", "POST", "/v3/corners", true, map[string]any{"image": img(99)}, 422},
		{"preprocess", "POST", "/v3/preprocess", true, map[string]any{"image": img(1)}, 200},
		{"retired v2", "POST", "/eu/predict", false, map[string]any{}, 410},
		{"usg health", "GET", "/usg/v1/health", false, nil, 200},
		{"usg version", "GET", "/usg/v1/version", false, nil, 200},
		{"usg predict", "POST", "/usg/v1/predict", true, usgBody, 200},
		{"usg out of range", "POST", "/usg/v1/predict", true, map[string]any{"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 9000}, 400},
		{"usg no key", "POST", "/usg/v1/predict", false, usgBody, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := ""
			if tc.key {
				key = a.key
			}
			resp, b := a.do(tc.method, tc.path, key, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			op, ok := paths[tc.path].(map[string]any)[strings.ToLower(tc.method)].(map[string]any)
			if !ok {
				t.Fatalf("%s %s is not documented", tc.method, tc.path)
			}
			r, ok := op["responses"].(map[string]any)[strconv.Itoa(tc.status)].(map[string]any)
			if !ok {
				t.Fatalf("status %d of %s %s is not documented", tc.status, tc.method, tc.path)
			}
			schema, ok := r["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
			if !ok {
				t.Fatalf("status %d of %s %s has no JSON schema", tc.status, tc.method, tc.path)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			c := &schemaCheck{t: t, doc: doc}
			c.check("body", schema, v)
			for _, e := range c.errs {
				t.Error(e)
			}
		})
	}
}
