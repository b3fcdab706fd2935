package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"net/http"
	"strings"
	"testing"
	"time"

	"vetlens/engine/cardiac"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// hugePNGHeader is a valid PNG signature and IHDR declaring w x h pixels:
// decode refuses it from the header (413) before allocating.
func hugePNGHeader(w, h uint32) []byte {
	out := []byte("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 0
	chunk := append([]byte("IHDR"), ihdr...)
	out = binary.BigEndian.AppendUint32(out, 13)
	out = append(out, chunk...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
}

var v3Endpoints = []struct{ method, path string }{
	{"GET", "/v3/health"}, {"POST", "/v3/predict"}, {"POST", "/v3/predict/stream"},
	{"POST", "/v3/pop-session/start"}, {"POST", "/v3/pop-session"}, {"POST", "/v3/corners"},
	{"POST", "/v3/rectify"}, {"POST", "/v3/preprocess"},
}

// TestV3KeyRequired: every cardiac endpoint answers 403 {error} for a
// missing, unknown, malformed or revoked key, before reading the body.
func TestV3KeyRequired(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	revoked, info, _ := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	a.svc.Accounts.RevokeKey(context.Background(), info.Prefix)
	for _, ep := range v3Endpoints {
		for _, key := range []string{"", "nope", "vl_00000000_" + strings.Repeat("A", 43), revoked, a.key + "x"} {
			resp, b := a.do(ep.method, ep.path, key, `{}`)
			m := obj(t, b)
			if resp.StatusCode != 403 || len(m) != 1 || m["error"] == "" {
				t.Errorf("%s %s key %q: %d %s", ep.method, ep.path, key, resp.StatusCode, b)
			}
		}
	}
}

func TestV3Health(t *testing.T) {
	a := newAPI(t, apiOpts{})
	resp, b := a.do("GET", "/v3/health", a.key, nil)
	h := obj(t, b)
	// The spec's five fields plus reasons (why degraded; docs/api.md).
	if resp.StatusCode != 200 || h["status"] != "degraded" || h["models_loaded"] != 0.0 || h["pop_pipeline_enabled"] != false || len(h) != 6 {
		t.Fatalf("no models: %d %s", resp.StatusCode, b)
	}
	if r, _ := h["reasons"].([]any); len(r) != 2 {
		t.Fatalf("no models: reasons %v, want the missing models and the missing PoP pipeline", h["reasons"])
	}
	a = newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	_, b = a.do("GET", "/v3/health", a.key, nil)
	if h := obj(t, b); h["status"] != "healthy" || h["models_loaded"] != 5.0 || h["pop_models_loaded"] != 0.0 || h["model_version"] != "fake-1" || h["reasons"] != nil {
		t.Fatalf("loaded: %s", b)
	}
}

// TestV3PredictShapes checks the single, rejection and batch bodies'
// fields and omissions on synthetic outcomes (the engine is a fake; the
// real-model test is TestV3PredictRealModels).
func TestV3PredictShapes(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 1, 64, 64)), "render": true, "uuid": "rex"})
	m := obj(t, b)
	want := "vhs vlas prediction result_code result_description model_confidence spread pop_detected model_version rendered_image historic_vhs historic_vlas billing"
	if resp.StatusCode != 200 || len(m) != len(strings.Fields(want)) {
		t.Fatalf("single: %d %s", resp.StatusCode, b)
	}
	for _, k := range strings.Fields(want) {
		if _, ok := m[k]; !ok {
			t.Errorf("single: %s missing", k)
		}
	}
	if len(m["prediction"].([]any)) != 7 || m["historic_vhs"] == nil {
		t.Errorf("single: %s", b)
	}
	bill := m["billing"].(map[string]any)
	if bill["billable"] != true || bill["reason"] != "valid_vhs" || bill["call_type"] != "single" || bill["rate"] != 3.0 || bill["tier"] != "paygo" || bill["monthly_usage"] != 1.0 {
		t.Errorf("billing %v", bill)
	}
	// Without uuid: historic_* present and null; no render: no rendered_image.
	_, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 2, 64, 64))})
	m = obj(t, b)
	if v, ok := m["historic_vhs"]; !ok || v != nil {
		t.Errorf("historic_vhs without uuid: %v %v", v, ok)
	}
	if _, ok := m["rendered_image"]; ok {
		t.Error("rendered_image without render")
	}
	// Rejection: exactly the spec's fields.
	_, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 6, 64, 64)), "render": true, "uuid": "rex"})
	m = obj(t, b)
	rej := "classifier_confidence model_version rejected rejection_reason result_code result_description vhs vlas billing"
	if len(m) != len(strings.Fields(rej)) || m["rejected"] != true || m["rejection_reason"] != "not_a_valid_radiograph" || m["vhs"] != nil {
		t.Fatalf("rejection: %s", b)
	}
	if bl := m["billing"].(map[string]any); bl["billable"] != false || bl["reason"] != "no_valid_vhs" || bl["rate"] != nil || bl["call_type"] != nil {
		t.Errorf("rejection billing %v", bl)
	}
	// Batch: codes 1, 6, 4 -> best index 0; billed once at the session rate.
	imgs := []string{b64(grayPNG(t, 1, 64, 64)), b64(grayPNG(t, 6, 64, 64)), b64(grayPNG(t, 4, 64, 64))}
	resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"images": imgs, "uuid": "max", "render": true})
	m = obj(t, b)
	batchKeys := "vhs vlas best_photo_index best_vhs best_vlas median_vhs median_vlas vhs_std vlas_std vhs_confidence vlas_confidence n_photos_processed n_photos_with_landmarks processing_started per_photo historic_vhs historic_vlas model_version billing"
	if resp.StatusCode != 200 || len(m) != len(strings.Fields(batchKeys)) || m["best_photo_index"] != 0.0 || m["n_photos_with_landmarks"] != 2.0 || m["n_photos_processed"] != 3.0 {
		t.Fatalf("batch %d %s", resp.StatusCode, b)
	}
	pp := m["per_photo"].([]any)
	p0, p1 := pp[0].(map[string]any), pp[1].(map[string]any)
	if len(pp) != 3 || p0["pop_detected"] != false || p0["landmarks_detected"] != true || p1["rejected"] != true || p1["classifier_confidence"] != 0.12 || p1["pop_detected"] != nil {
		t.Errorf("per_photo %v", pp)
	}
	if _, ok := p0["rendered_image"]; ok {
		t.Error("batch renders")
	}
	if bl := m["billing"].(map[string]any); bl["call_type"] != "session" || bl["rate"] != 4.0 || bl["monthly_usage"] != 3.0 {
		t.Errorf("batch billing %v", bl)
	}
}

// TestV3PredictErrorRows covers the prediction error rows: 400 for
// missing or invalid fields and more than 10 images, 413 for an image
// over 10 MiB or over the pixel limits, 405 and 404.
func TestV3PredictErrorRows(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	ok := b64(grayPNG(t, 1, 64, 64))
	big := b64(make([]byte, 10<<20+1))
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = ok
	}
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"empty body", "POST", "/v3/predict", "", 400},
		{"not json", "POST", "/v3/predict", "{", 400},
		{"no image", "POST", "/v3/predict", map[string]any{"uuid": "x"}, 400},
		{"image not string", "POST", "/v3/predict", map[string]any{"image": 1}, 400},
		{"bad base64", "POST", "/v3/predict", map[string]any{"image": "@@@"}, 400},
		{"not an image", "POST", "/v3/predict", map[string]any{"image": b64([]byte("hello world"))}, 400},
		{"too small image", "POST", "/v3/predict", map[string]any{"image": b64(grayPNG(t, 1, 8, 8))}, 400},
		{"eleven images", "POST", "/v3/predict", map[string]any{"images": eleven}, 400},
		{"image and images", "POST", "/v3/predict", map[string]any{"image": ok, "images": []string{ok}}, 400},
		{"over 10 MiB", "POST", "/v3/predict", map[string]any{"image": big}, 413},
		{"over 10 MiB in batch", "POST", "/v3/predict", map[string]any{"images": []string{ok, big}}, 413},
		{"pixel limit", "POST", "/v3/predict", map[string]any{"image": b64(hugePNGHeader(20000, 20000))}, 413},
		{"stream eleven", "POST", "/v3/predict/stream", map[string]any{"images": eleven}, 400},
		{"stream no images", "POST", "/v3/predict/stream", `{}`, 400},
		{"wrong method", "GET", "/v3/predict", nil, 405},
		{"unknown", "GET", "/v3/nothing", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := a.do(tc.method, tc.path, a.key, tc.body)
			m := obj(t, b)
			if resp.StatusCode != tc.status || len(m) != 1 || m["error"] == "" {
				t.Fatalf("%d %s, want %d {error}", resp.StatusCode, b, tc.status)
			}
		})
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatalf("errors billed: %+v", evs)
	}
}

func TestV3NoCardiacModels(t *testing.T) {
	a := newAPI(t, apiOpts{})
	for _, path := range []string{"/v3/predict", "/v3/predict/stream"} {
		resp, b := a.do("POST", path, a.key, map[string]any{"image": b64(grayPNG(t, 1, 64, 64))})
		if resp.StatusCode != 503 || obj(t, b)["error"] == "" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}

func TestEUPredictGone(t *testing.T) {
	a := newAPI(t, apiOpts{})
	for _, method := range []string{"POST", "GET"} {
		resp, b := a.do(method, "/eu/predict", "", `{"image":"x"}`)
		m := obj(t, b)
		if resp.StatusCode != http.StatusGone || !strings.Contains(m["error"].(string), "/v3/predict") ||
			resp.Header.Get("Sunset") != "Sat, 01 Aug 2026 00:00:00 GMT" || resp.Header.Get("Deprecation") != "true" ||
			!strings.Contains(resp.Header.Get("Link"), `rel=deprecation`) {
			t.Fatalf("%s: %d %v %s", method, resp.StatusCode, resp.Header, b)
		}
	}
}

// TestRequestTimeout: work that outlives Config.RequestTimeout is
// stopped and answered 500 {error: "request timed out"}, not billed.
func TestRequestTimeout(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, cfg: Config{RequestTimeout: 100 * time.Millisecond}})
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 200, 64, 64))})
	if resp.StatusCode != 500 || !strings.Contains(obj(t, b)["error"].(string), "timed out") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatal("timed-out request billed")
	}
}

// TestBatchUndecodableImage: valid base64 that is not a usable image does
// not fail a batch; its per_photo entry is rejected "invalid_image".
func TestBatchUndecodableImage(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"images": []string{b64([]byte("not an image")), b64(grayPNG(t, 2, 64, 64))}})
	m := obj(t, b)
	if resp.StatusCode != 200 || m["best_photo_index"] != 1.0 || m["n_photos_processed"] != 1.0 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	p0 := m["per_photo"].([]any)[0].(map[string]any)
	if p0["rejected"] != true || p0["rejection_reason"] != "invalid_image" || p0["vhs"] != nil {
		t.Fatalf("per_photo[0] %v", p0)
	}
}

// TestUnreadableFormatIsNamed: a photo in a format VetLens does not read
// (an iPhone's HEIC above all) is a 400 whose error says what it is and
// what to do, on the single-image and the PoP endpoints.
func TestUnreadableFormatIsNamed(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	heic := b64([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + strings.Repeat("\x00", 200)))
	for _, path := range []string{"/v3/predict", "/v3/corners", "/v3/preprocess"} {
		resp, b := a.do("POST", path, a.key, map[string]any{"image": heic})
		if m := obj(t, b); resp.StatusCode != 400 || !strings.Contains(m["error"].(string), "HEIC photo") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}

// brokenCardiac fails every prediction.
type brokenCardiac struct{ fakeCardiac }

func (brokenCardiac) Predict(context.Context, image.Image, cardiac.PredictOptions) (*cardiac.Result, error) {
	return nil, errors.New("onnxruntime: session run failed")
}

// TestV3InternalError: the spec's 500 row, {error} body, nothing billed;
// a stream ends with an error event of index -1.
func TestV3InternalError(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: brokenCardiac{}})
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 1, 64, 64))})
	if m := obj(t, b); resp.StatusCode != 500 || m["error"] != "internal server error" || len(m) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	sresp := a.stream(context.Background(), map[string]any{"images": []string{b64(grayPNG(t, 1, 64, 64))}})
	evs, _ := readSSE(t, sresp)
	sresp.Body.Close()
	if len(evs) != 2 || evs[1].name != "error" || evs[1].data["index"] != -1.0 {
		t.Fatalf("stream events %v", evs)
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatal("failure billed")
	}
}
