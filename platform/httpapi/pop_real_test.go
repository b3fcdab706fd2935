package httpapi

import (
	"bytes"
	"image/jpeg"
	"image/png"
	"math"
	"path/filepath"
	"testing"
	"time"

	"vetlens/app/capture"
	"vetlens/engine/imageproc"
	"vetlens/engine/testmodels"
	"vetlens/internal/exiftest"
)

// screens holds screen-photo composites with exact corners (engine/pop's
// fixtures, made by models/train/pop/composites.py).
var screens = filepath.Join("..", "..", "engine", "pop", "testdata")

// TestPoPEndpointsRealPipeline runs the five PoP endpoints and a
// screen-photo single prediction through the real pipeline: engine/pop's
// geometry, the capture session manager and the trained cardiac models.
func TestPoPEndpointsRealPipeline(t *testing.T) {
	eng := testmodels.Cardiac(t)
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{cardiac: eng, pipeline: capture.NewService(mgr, eng, capture.PoP{})})
	screen := b64(fileBytes(t, filepath.Join(screens, "screen_0000.jpg")))
	radiograph := b64(fileBytes(t, filepath.Join(screens, "radiograph_0000.png")))

	resp, b := a.do("GET", "/v3/health", a.key, nil)
	if m := obj(t, b); resp.StatusCode != 200 || m["pop_pipeline_enabled"] != true || m["models_loaded"] != 5.0 {
		t.Fatalf("health %d %s", resp.StatusCode, b)
	}

	resp, b = a.do("POST", "/v3/corners", a.key, map[string]any{"image": screen})
	m := obj(t, b)
	if resp.StatusCode != 200 || m["order"] != "TL,TR,BR,BL" || len(m["corners"].([]any)) != 4 {
		t.Fatalf("corners %d %s", resp.StatusCode, b)
	}
	corners := m["corners"]

	resp, b = a.do("POST", "/v3/rectify", a.key, map[string]any{"image": screen, "corners": corners})
	if m := obj(t, b); resp.StatusCode != 200 || m["rectified_image"] == "" || m["width"].(float64) < 32 {
		t.Fatalf("rectify %d %.300s", resp.StatusCode, b)
	}
	collinear := [][2]float64{{10, 10}, {20, 20}, {30, 30}, {40, 40}}
	if resp, b := a.do("POST", "/v3/rectify", a.key, map[string]any{"image": screen, "corners": collinear}); resp.StatusCode != 400 {
		t.Fatalf("rectify with collinear corners: %d %s", resp.StatusCode, b)
	}

	resp, b = a.do("POST", "/v3/preprocess", a.key, map[string]any{"image": screen})
	if m := obj(t, b); resp.StatusCode != 200 || m["rectified_image"] == "" || m["order"] != "TL,TR,BR,BL" {
		t.Fatalf("preprocess %d %.300s", resp.StatusCode, b)
	}
	// A featureless frame shows no screen: 422 from corners and preprocess.
	blank := b64(grayPNG(t, 90, 640, 480))
	for _, path := range []string{"/v3/corners", "/v3/preprocess"} {
		if resp, b := a.do("POST", path, a.key, map[string]any{"image": blank}); resp.StatusCode != 422 {
			t.Fatalf("%s on a blank frame: %d %s", path, resp.StatusCode, b)
		}
	}

	// A single prediction on a screen photo is corrected first.
	resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": screen})
	m = obj(t, b)
	if resp.StatusCode != 200 {
		t.Fatalf("predict screen photo %d %s", resp.StatusCode, b)
	}
	if code := m["result_code"].(float64); code != 6 && m["pop_detected"] != true {
		t.Fatalf("screen photo measured without pop_detected: %.400s", b)
	}
	resp, b = a.do("POST", "/v3/predict", a.key, map[string]any{"image": radiograph})
	if m := obj(t, b); resp.StatusCode != 200 || m["pop_detected"] == true {
		t.Fatalf("radiograph file taken for a screen photo: %d %.400s", resp.StatusCode, b)
	}

	// A session: start, frames until it leaves continue (or max frames).
	resp, b = a.do("POST", "/v3/pop-session/start", a.key, map[string]any{})
	m = obj(t, b)
	if resp.StatusCode != 200 || m["session_status"] != "ready" {
		t.Fatalf("start %d %s", resp.StatusCode, b)
	}
	id := m["session_id"].(string)
	frames := []string{"screen_0000.jpg", "screen_0001.jpg", "screen_0002.jpg", "screen_0003.jpg",
		"screen_0004.jpg", "screen_0005.jpg", "screen_0006.jpg", "screen_0007.jpg"}
	status := ""
	for _, f := range frames {
		resp, b = a.do("POST", "/v3/pop-session", a.key, map[string]any{"session_id": id, "image": b64(fileBytes(t, filepath.Join(screens, f)))})
		m = obj(t, b)
		if resp.StatusCode != 200 {
			t.Fatalf("frame %s: %d %s", f, resp.StatusCode, b)
		}
		status = m["session_status"].(string)
		if status == "continue" {
			if _, ok := m["billing"]; ok {
				t.Fatalf("continue carries billing: %s", b)
			}
			continue
		}
		break
	}
	switch status {
	case "complete":
		if m["rectified_image"] == "" || m["billing"].(map[string]any)["call_type"] != "session" && m["billing"].(map[string]any)["billable"] == true {
			t.Fatalf("complete body %.400s", b)
		}
	case "continue":
		t.Logf("session still collecting after %d different screens (they show different radiographs, so their VHS need not agree)", len(frames))
	default:
		t.Fatalf("session ended %s: %.400s", status, b)
	}
	if resp, b := a.do("POST", "/v3/pop-session", a.key, map[string]any{"session_id": "no-such-session", "image": screen}); resp.StatusCode != 404 {
		t.Fatalf("unknown session: %d %s", resp.StatusCode, b)
	}
}

// TestSidewaysPhoneJPEGIsMeasuredUpright: a screen photo stored sideways
// with EXIF orientation 6 (how a phone saves a portrait shot) is measured
// as it shows upright: /v3/corners reports the upright size and the same
// corners as the picture stored upright, and /v3/predict the same
// landmarks. Before, such a photo crashed the server (the frame decoder
// read a Mat it had closed).
func TestSidewaysPhoneJPEGIsMeasuredUpright(t *testing.T) {
	eng := testmodels.Cardiac(t)
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{cardiac: eng, pipeline: capture.NewService(mgr, eng, capture.PoP{})})
	up, _, err := imageproc.Decode(fileBytes(t, filepath.Join(screens, "screen_0000.jpg")))
	if err != nil {
		t.Fatal(err)
	}
	var sj, ref bytes.Buffer
	if err := jpeg.Encode(&sj, imageproc.Orient(up, imageproc.OrientRotate90CCW), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	sideways := exiftest.JPEG(sj.Bytes(), exiftest.TIFF(uint16(imageproc.OrientRotate90CW), false))
	shown, _, err := imageproc.Decode(sideways) // the reference: the same pixels, upright, lossless
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&ref, shown); err != nil {
		t.Fatal(err)
	}
	W, H := float64(up.Bounds().Dx()), float64(up.Bounds().Dy())
	if shown.Bounds().Dx() != up.Bounds().Dx() || shown.Bounds().Dy() != up.Bounds().Dy() {
		t.Fatalf("decoded %v, want the upright %v", shown.Bounds(), up.Bounds())
	}

	corners := func(img []byte) (map[string]any, [][]float64) {
		resp, b := a.do("POST", "/v3/corners", a.key, map[string]any{"image": b64(img)})
		m := obj(t, b)
		if resp.StatusCode != 200 {
			t.Fatalf("corners %d %s", resp.StatusCode, b)
		}
		var c [][]float64
		for _, p := range m["corners"].([]any) {
			xy := p.([]any)
			c = append(c, []float64{xy[0].(float64), xy[1].(float64)})
		}
		return m, c
	}
	ms, cs := corners(sideways)
	_, cr := corners(ref.Bytes())
	if ms["image_width"] != W || ms["image_height"] != H {
		t.Fatalf("sideways photo reported %vx%v, want the upright %vx%v", ms["image_width"], ms["image_height"], W, H)
	}
	diag := math.Hypot(W, H)
	for i := range cs {
		if d := math.Hypot(cs[i][0]-cr[i][0], cs[i][1]-cr[i][1]); d > 0.005*diag {
			t.Errorf("corner %d: %v sideways, %v upright (%.1f px apart)", i, cs[i], cr[i], d)
		}
	}

	predict := func(img []byte) map[string]any {
		resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(img)})
		if resp.StatusCode != 200 {
			t.Fatalf("predict %d %s", resp.StatusCode, b)
		}
		return obj(t, b)
	}
	ps, pr := predict(sideways), predict(ref.Bytes())
	if ps["result_code"] != pr["result_code"] || ps["pop_detected"] != pr["pop_detected"] {
		t.Fatalf("sideways: code %v pop %v; upright: code %v pop %v", ps["result_code"], ps["pop_detected"], pr["result_code"], pr["pop_detected"])
	}
	ls, lr := ps["prediction"].([]any), pr["prediction"].([]any)
	for i := range lr {
		s, r := ls[i].(map[string]any), lr[i].(map[string]any)
		if d := math.Hypot(s["x"].(float64)-r["x"].(float64), s["y"].(float64)-r["y"].(float64)); d > 0.02 {
			t.Errorf("%s: (%v, %v) sideways, (%v, %v) upright", r["class"], s["x"], s["y"], r["x"], r["y"])
		}
	}
}

// TestCutShortJPEGIsRefused: a screen photo whose upload or copy was cut
// short is a 400 from every image endpoint, as the spec's bad image. Before,
// OpenCV decoded what was there (the rest grey), so /v3/corners answered
// 422 and /v3/predict took it for a screen photo (code 7, or a number on
// a half-grey picture).
func TestCutShortJPEGIsRefused(t *testing.T) {
	eng := testmodels.Cardiac(t)
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{cardiac: eng, pipeline: capture.NewService(mgr, eng, capture.PoP{})})
	full := fileBytes(t, filepath.Join(screens, "screen_0000.jpg"))
	cut := b64(full[:len(full)*2/5])
	for _, path := range []string{"/v3/corners", "/v3/preprocess", "/v3/predict"} {
		resp, b := a.do("POST", path, a.key, map[string]any{"image": cut})
		if resp.StatusCode != 400 || !bytes.Contains(b, []byte("cut short")) {
			t.Errorf("%s on a JPEG cut short: %d %s", path, resp.StatusCode, b)
		}
	}
	resp, b := a.do("POST", "/v3/pop-session/start", a.key, map[string]any{})
	id, _ := obj(t, b)["session_id"].(string)
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("start %d %s", resp.StatusCode, b)
	}
	if resp, b := a.do("POST", "/v3/pop-session", a.key, map[string]any{"session_id": id, "image": cut}); resp.StatusCode != 400 {
		t.Errorf("a session frame cut short: %d %s", resp.StatusCode, b)
	}
}
