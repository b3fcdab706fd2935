package httpapi

import (
	"context"
	"strings"
	"testing"
)

var popPaths = []string{"/v3/pop-session/start", "/v3/pop-session", "/v3/corners", "/v3/rectify", "/v3/preprocess"}

func TestPoPNotLoaded(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	img := b64(grayPNG(t, 1, 64, 64))
	for _, p := range popPaths {
		resp, b := a.do("POST", p, a.key, map[string]any{"image": img, "session_id": "x", "corners": [][]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}}})
		if m := obj(t, b); resp.StatusCode != 503 || m["error"] == "" || len(m) != 1 {
			t.Errorf("%s: %d %s", p, resp.StatusCode, b)
		}
	}
}

func TestPoPSessionFlow(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	resp, b := a.do("POST", "/v3/pop-session/start", a.key, `{}`)
	st := obj(t, b)
	if resp.StatusCode != 200 || st["session_status"] != "ready" || st["pop_pipeline_enabled"] != true || st["models_loaded"] != 5.0 ||
		st["pop_models_loaded"] != 0.0 || st["model_version"] != "fake-1" || st["session_config"].(map[string]any)["max_frames"] != 4.0 || len(st) != 7 {
		t.Fatalf("start %d %s", resp.StatusCode, b)
	}
	id := st["session_id"].(string)
	good, bad := b64(grayPNG(t, 1, 64, 64)), b64(grayPNG(t, 5, 64, 64))
	frame := func(img string) map[string]any {
		resp, b := a.do("POST", "/v3/pop-session", a.key, map[string]any{"image": img, "session_id": id, "uuid": "rex"})
		if resp.StatusCode != 200 {
			t.Fatalf("frame %d %s", resp.StatusCode, b)
		}
		return obj(t, b)
	}
	c := frame(good)
	want := "session_id session_status reason frame_index frames_processed good_frames result_code result_description frame_result model_version"
	if c["session_status"] != "continue" || len(c) != len(strings.Fields(want)) || c["billing"] != nil || c["good_frames"] != 1.0 {
		t.Fatalf("continue %v", c)
	}
	// A continue frame is not billed, so it carries no measurement: vhs
	// and vlas are null (present, as the spec's shape has them), the
	// frame's code, spread and confidence stay (issue 46).
	fr := c["frame_result"].(map[string]any)
	_, hasVHS := fr["vhs"]
	_, hasVLAS := fr["vlas"]
	if len(fr) != 6 || fr["pop_detected"] != true || fr["landmarks_detected"] != true || c["result_code"] != 1.0 ||
		!hasVHS || !hasVLAS || fr["vhs"] != nil || fr["vlas"] != nil || fr["spread"] != 0.004 || fr["model_confidence"] != "optimal" {
		t.Errorf("continue frame_result %v (result_code %v), want vhs and vlas null", fr, c["result_code"])
	}
	nos := frame(bad) // no screen seen: code 5, empty frame_result
	if nos["result_code"] != 5.0 || nos["frame_result"].(map[string]any)["landmarks_detected"] != false || nos["frame_result"].(map[string]any)["vhs"] != nil {
		t.Errorf("no-screen frame %v", nos)
	}
	done := frame(good)
	if done["session_status"] != "continue" {
		t.Fatalf("%v", done)
	}
	// Fourth frame would exceed max_frames 4 in the fake only after it;
	// the third good frame completes.
	resp, b = a.do("POST", "/v3/pop-session", a.key, map[string]any{"image": good, "session_id": id, "uuid": "rex"})
	done = obj(t, b)
	if done["session_status"] != "complete" || done["rectified_image"] == "" || done["frame_index"] != 3.0 {
		t.Fatalf("complete %s", b)
	}
	pred := done["prediction"].(map[string]any)
	if pred["vhs"] != 9.5 || len(pred["prediction"].([]any)) != 7 || pred["model_version"] != "fake-1" {
		t.Errorf("prediction %v", pred)
	}
	if bl := done["billing"].(map[string]any); bl["billable"] != true || bl["call_type"] != "session" || bl["rate"] != 4.0 {
		t.Errorf("billing %v", bl)
	}
	// A frame for the finished session: 409.
	resp, b = a.do("POST", "/v3/pop-session", a.key, map[string]any{"image": good, "session_id": id})
	if resp.StatusCode != 409 || obj(t, b)["error"] == "" {
		t.Errorf("after complete: %d %s", resp.StatusCode, b)
	}
	// Failed session: max frames, billing not billable.
	_, b = a.do("POST", "/v3/pop-session/start", a.key, `{}`)
	id = obj(t, b)["session_id"].(string)
	for range 3 {
		frame(bad)
	}
	f := frame(bad)
	if f["session_status"] != "failed" || f["error"] != "max_frames_exceeded" || len(f) != 5 {
		t.Fatalf("failed %v", f)
	}
	if bl := f["billing"].(map[string]any); bl["billable"] != false || bl["reason"] != "no_valid_vhs" {
		t.Errorf("failed billing %v", bl)
	}
	// Another customer cannot use a session; unknown ids and missing fields.
	_, b = a.do("POST", "/v3/pop-session/start", a.key, `{}`)
	id = obj(t, b)["session_id"].(string)
	other, _, _ := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	for _, tc := range []struct {
		key    string
		body   map[string]any
		status int
	}{
		{other, map[string]any{"image": good, "session_id": id}, 404},
		{a.key, map[string]any{"image": good, "session_id": "nope"}, 404},
		{a.key, map[string]any{"image": good}, 400},
		{a.key, map[string]any{"session_id": id}, 400},
		{a.key, map[string]any{"image": "%%", "session_id": id}, 400},
		{a.key, map[string]any{"image": b64([]byte("GIF89a....")), "session_id": id}, 400},
		{a.key, map[string]any{"image": b64(hugePNGHeader(30000, 30000)), "session_id": id}, 413},
	} {
		resp, b := a.do("POST", "/v3/pop-session", tc.key, tc.body)
		if resp.StatusCode != tc.status || obj(t, b)["error"] == "" {
			t.Errorf("%v: %d %s, want %d", tc.body, resp.StatusCode, b, tc.status)
		}
	}
	if resp, _ := a.do("POST", "/v3/pop-session/start", a.key, `[1]`); resp.StatusCode != 400 {
		t.Errorf("start with a non-object: %d", resp.StatusCode)
	}
	evs, _ := a.svc.Repos().Ledger.Events(context.Background())
	if len(evs) != 1 {
		t.Fatalf("ledger %d events, want the one completed session", len(evs))
	}
}

func TestPoPUtilities(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, pop: &fakePoP{sessions: map[string]*fakeSession{}}})
	img, noCorners := b64(grayPNG(t, 1, 64, 48)), b64(grayPNG(t, 99, 64, 48))
	resp, b := a.do("POST", "/v3/corners", a.key, map[string]any{"image": img})
	c := obj(t, b)
	if resp.StatusCode != 200 || c["order"] != "TL,TR,BR,BL" || c["image_width"] != 64.0 || c["image_height"] != 48.0 ||
		len(c["corners"].([]any)) != 4 || c["model_version"] != "pop-fake-1" || len(c) != 5 {
		t.Fatalf("corners %d %s", resp.StatusCode, b)
	}
	resp, b = a.do("POST", "/v3/rectify", a.key, map[string]any{"image": img, "corners": c["corners"]})
	r := obj(t, b)
	if resp.StatusCode != 200 || r["width"] != 40.0 || r["height"] != 30.0 || r["rectified_image"] == "" || len(r) != 4 {
		t.Fatalf("rectify %d %s", resp.StatusCode, b)
	}
	resp, b = a.do("POST", "/v3/preprocess", a.key, map[string]any{"image": img})
	p := obj(t, b)
	if resp.StatusCode != 200 || len(p) != 6 || p["order"] != "TL,TR,BR,BL" || p["rectified_image"] == "" {
		t.Fatalf("preprocess %d %s", resp.StatusCode, b)
	}
	for _, tc := range []struct {
		path   string
		body   any
		status int
	}{
		{"/v3/corners", map[string]any{"image": noCorners}, 422},
		{"/v3/preprocess", map[string]any{"image": noCorners}, 422},
		{"/v3/corners", map[string]any{}, 400},
		{"/v3/corners", `{"image": 3}`, 400},
		{"/v3/rectify", map[string]any{"image": img}, 400},
		{"/v3/rectify", map[string]any{"image": img, "corners": [][]float64{{0, 0}, {1, 1}}}, 400},
		{"/v3/rectify", map[string]any{"image": img, "corners": [][]any{{0, 0}, {1, "a"}, {1, 1}, {0, 1}}}, 400},
		{"/v3/rectify", map[string]any{"image": img, "corners": [][]float64{{0, 0}, {999, 0}, {1, 1}, {0, 1}}}, 400},
		{"/v3/rectify", map[string]any{"image": b64(make([]byte, 10<<20+1)), "corners": [][]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}}}, 413},
		{"/v3/corners", `{"image":"` + strings.Repeat("A", MaxImageBody) + `"}`, 413},
	} {
		resp, b := a.do("POST", tc.path, a.key, tc.body)
		if resp.StatusCode != tc.status || obj(t, b)["error"] == "" {
			t.Errorf("%s %.80v: %d %s, want %d", tc.path, tc.body, resp.StatusCode, b, tc.status)
		}
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatalf("utilities billed: %+v", evs)
	}
}
