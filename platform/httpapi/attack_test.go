package httpapi

import (
	"context"
	"image"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
)

// The attack tests replay, against the API on loopback TLS, what a
// hostile holder of a valid key tried in issue 13. Sizes are kept small
// enough for `make test` on a loaded 2-core machine; each test is bounded
// in requests and time and stops by itself.

// repeatBody is a request body made on the fly, never held in memory:
// head, unit repeated n times, tail. sent counts the bytes handed out.
type repeatBody struct {
	head, unit, tail string
	n                int
	sent             int64
	chunk            []byte
}

func newRepeatBody(head, unit, tail string, size int) *repeatBody {
	b := &repeatBody{head: head, unit: unit, tail: tail, n: (size - len(head) - len(tail)) / len(unit)}
	b.chunk = []byte(strings.Repeat(unit, max(1, (32<<10)/len(unit))))
	return b
}

func (b *repeatBody) size() int64 { return int64(len(b.head) + b.n*len(b.unit) + len(b.tail)) }

func (b *repeatBody) Read(p []byte) (int, error) {
	head, body := int64(len(b.head)), int64(b.n*len(b.unit))
	switch off := b.sent; {
	case off < head:
		n := copy(p, b.head[off:])
		b.sent += int64(n)
		return n, nil
	case off < head+body:
		rel := off - head
		u := int64(len(b.unit))
		// Whole units from a unit boundary, or the rest of a unit.
		if rel%u != 0 {
			n := copy(p, b.unit[rel%u:])
			b.sent += int64(n)
			return n, nil
		}
		n := copy(p, b.chunk[:min(int64(len(b.chunk)), head+body-off)])
		b.sent += int64(n)
		return n, nil
	case off < b.size():
		n := copy(p, b.tail[off-head-body:])
		b.sent += int64(n)
		return n, nil
	}
	return 0, io.EOF
}

// post sends body to path with the key and returns the status, the
// response body and the time until the response's headers arrived.
func (a *api) post(path string, body io.Reader, size int64) (int, []byte, time.Duration) {
	a.t.Helper()
	req, err := http.NewRequest("POST", a.srv.URL+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", a.key)
	start := time.Now()
	resp, err := a.client.Do(req)
	took := time.Since(start)
	if err != nil {
		a.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, took
}

// TestAttackHugeImagesArray: 140 MB bodies that break a rule in their
// first bytes ({"images":[1,1,...]}, an 11th image, a field of the wrong
// type) are refused after the server read only the start of them (it read
// them whole before: 36-46 s and +4 GB of RSS). How fast the refusal comes
// is BenchmarkAttackHugeImagesArray's (well under a second).
func TestAttackHugeImagesArray(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	img := b64(grayPNG(t, 1, 64, 64))
	const size = 140 << 20
	for _, tc := range []struct {
		name, path, head, unit, tail string
		status                       int
	}{
		{"numbers in images", "/v3/predict", `{"images":[`, `1,`, `1]}`, 400},
		{"numbers in images, stream", "/v3/predict/stream", `{"images":[`, `1,`, `1]}`, 400},
		{"an 11th image", "/v3/predict", `{"images":[`, `"` + img + `",`, `"x"]}`, 400},
		{"render of the wrong type", "/v3/predict", `{"render":[`, `1,`, `1]}`, 400},
		{"one image string of 140 MB", "/v3/predict", `{"image":"`, `AAAA`, `"}`, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := newRepeatBody(tc.head, tc.unit, tc.tail, size)
			status, b, took := a.post(tc.path, body, body.size())
			t.Logf("%d after %v, %d of %d bytes sent: %s", status, took, body.sent, body.size(), strings.TrimSpace(string(b)))
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, b)
			}
			if body.sent > size/4 {
				t.Fatalf("the client sent %d of %d bytes: the server read on", body.sent, body.size())
			}
		})
	}
}

// BenchmarkAttackHugeImagesArray times the refusal of a 140 MB body of
// numbers in "images" (ns/op: from the request to the 400's headers).
func BenchmarkAttackHugeImagesArray(b *testing.B) {
	a := newAPI(b, apiOpts{cardiac: fakeCardiac{}})
	for b.Loop() {
		body := newRepeatBody(`{"images":[`, `1,`, `1]}`, 140<<20)
		if status, resp, _ := a.post("/v3/predict", body, body.size()); status != 400 {
			b.Fatalf("status %d: %s", status, resp)
		}
	}
}

// TestAttackPixelBudget: concurrent large but compressible PNGs (a few
// KB each, 4 MP decoded) are decoded only as far as the pixel budget
// allows. With room for two at a time and both held busy, the others wait
// the budget's wait, then get 503 with Retry-After; the bytes reserved
// never exceed the budget, and it drains to zero afterwards. Corners
// (the PoP pipeline, never billed, outside the cardiac slot: issue 13's
// 16 x 40 MP attack) and predict (the Go decoder) are both covered.
func TestAttackPixelBudget(t *testing.T) {
	const w, h, clients = 2000, 2000, 6
	png4MP := b64(grayPNG(t, 200, w, h)) // gray 200: the fake cardiac engine blocks
	t.Logf("PNG of %dx%d: %d bytes of base64", w, h, len(png4MP))
	for _, tc := range []struct {
		name, path string
		perPixel   int64 // bytes per pixel the path reserves
	}{
		{"corners", "/v3/corners", 10}, // app.popBytesPerPixel
		{"predict", "/v3/predict", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cost := tc.perPixel * w * h
			pop := &fakePoP{sessions: map[string]*fakeSession{}, hold: make(chan struct{}), holding: make(chan struct{}, clients)}
			started := make(chan struct{}, clients)
			a := newAPI(t, apiOpts{cardiac: fakeCardiac{started: started}, pop: pop, appCfg: func(c *app.Config) {
				c.PixelBudget, c.PixelWait = 2*cost+cost/2, 100*time.Millisecond
			}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				status     int
				retryAfter string
			}
			results := make(chan result, clients)
			start := time.Now()
			for range clients {
				go func() {
					req, _ := http.NewRequestWithContext(ctx, "POST", a.srv.URL+tc.path, strings.NewReader(`{"image":"`+png4MP+`"}`))
					req.Header.Set("x-api-key", a.key)
					resp, err := a.client.Do(req)
					if err != nil {
						results <- result{status: -1}
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					results <- result{resp.StatusCode, resp.Header.Get("Retry-After")}
				}()
			}
			// Two decode and hold; the other four are refused after the wait.
			held := pop.holding
			if tc.path == "/v3/predict" {
				held = started
			}
			for range 2 {
				select {
				case <-held:
				case <-time.After(10 * time.Second):
					t.Fatal("no request got room in the budget")
				}
			}
			for range clients - 2 {
				r := <-results
				if r.status != http.StatusServiceUnavailable || r.retryAfter == "" {
					t.Fatalf("refused request: %d, Retry-After %q; want 503 with Retry-After", r.status, r.retryAfter)
				}
			}
			refusedAfter := time.Since(start)
			st := a.svc.Status.PixelStats()
			t.Logf("budget %d MB, cost %d MB per image: %d reservations, %d refused within %v, peak %d MB",
				st.Capacity>>20, cost>>20, st.Reservations, st.Refused, refusedAfter, st.Peak>>20)
			if st.Reservations != 2 || st.Refused != clients-2 || st.Peak != 2*cost || st.Peak > st.Capacity {
				t.Fatalf("stats %+v, want 2 reservations of %d, %d refused", st, cost, clients-2)
			}
			// Let the two held ones finish: the budget drains.
			close(pop.hold)
			cancel() // the fake cardiac engine holds until its request ends
			for range 2 {
				<-results
			}
			for deadline := time.Now().Add(5 * time.Second); a.svc.Status.PixelStats().InUse != 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("budget not drained: %+v", a.svc.Status.PixelStats())
				}
			}
		})
	}
}

// TestAttackUSGStoredStrings: 300 USG calls whose clinic_code or uuid is
// a 32 KB string (plain, with NUL, ESC, RTL overrides, lone surrogates or
// invalid UTF-8) or not a string at all are all refused with 400
// invalid_value, and the database grows by less than 1 MB (it grew from
// 0.5 to 33.6 MB before, and bbolt never shrinks). Nothing is logged or
// billed.
func TestAttackUSGStoredStrings(t *testing.T) {
	ctx := context.Background()
	a := newAPI(t, apiOpts{})
	const features = `"BUN": 27, "CREATININE": 1.2, "HGB": 15.1, "ABSOLUTE LYMPHOCYTES": 1435, "age_months": 14`
	pad := func(s string) string { return strings.Repeat(s, (32<<10)/len(s)) }
	fields := []string{
		`"clinic_code": "` + pad("c") + `"`,
		`"uuid": "` + pad(`a\u0000`) + `"`,
		`"clinic_code": "` + pad(`\u001b[2J`) + `"`,
		`"uuid": "` + pad(`x\u202Egpj.exe`) + `"`,
		`"uuid": "` + pad(`\ud800`) + `"`,
		`"clinic_code": "` + pad("a\xff") + `"`,
		`"clinic_code": ` + strings.Repeat("9", 32<<10),
		`"uuid": {"a": "` + pad("o") + `"}`,
		`"uuid": "rex\u202e"`, // short but with a bidi override
	}
	// Warm the database up with one valid, logged call, so the file has
	// grown to its working size before it is measured.
	if resp, b := a.do("POST", "/usg/v1/predict", a.key, `{`+features+`, "clinic_code": "C-1", "uuid": "rex"}`); resp.StatusCode != 200 {
		t.Fatalf("valid call: %d %s", resp.StatusCode, b)
	}
	size := func() int64 {
		st, err := os.Stat(a.store.Path())
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	start := time.Now()
	for i := range 300 {
		body := `{` + features + `, ` + fields[i%len(fields)] + `}`
		resp, b := a.do("POST", "/usg/v1/predict", a.key, body)
		m := obj(t, b)
		e, _ := m["error"].(map[string]any)
		if resp.StatusCode != 400 || e["code"] != "invalid_value" || len(b) > 1024 {
			t.Fatalf("call %d (%.60s...): %d %.300s", i, fields[i%len(fields)], resp.StatusCode, b)
		}
	}
	took := time.Since(start)
	after := size()
	t.Logf("300 calls with 32 KB fields in %v: database %d -> %d bytes", took, before, after)
	if after-before >= 1<<20 {
		t.Fatalf("database grew by %d bytes", after-before)
	}
	if log, _ := a.svc.Repos().USGLog.List(ctx); len(log) != 1 {
		t.Fatalf("%d log entries, want the one valid call", len(log))
	}
	if evs, _ := a.svc.Repos().Ledger.Events(ctx); len(evs) != 1 {
		t.Fatalf("%d ledger events, want the one valid call", len(evs))
	}
}

// alwaysGood measures every image as code 1, VHS 10.0: any frame the PoP
// pipeline corrects is a good, agreeing frame.
type alwaysGood struct{ fakeCardiac }

func (alwaysGood) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	v, l := 10.0, 2.0
	b := img.Bounds()
	return &cardiac.Result{Width: b.Dx(), Height: b.Dy(), Code: cardiac.CodeHighConfidence, VHS: &v, VLAS: &l, Spread: 0.004,
		ClassifierConfidence: 0.99, Confidence: cardiac.ConfidenceOptimal, LandmarksDetected: true, AxesPerpendicular: true}, nil
}

// TestAttackPoPAppendedBytes: one screen photo sent as three frames with
// bytes appended (three different SHA-256s, one picture) does not
// complete a session as three agreeing frames (it did, and was billed);
// three distinct photos still do.
func TestAttackPoPAppendedBytes(t *testing.T) {
	eng := alwaysGood{}
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{cardiac: eng, pipeline: capture.NewService(mgr, eng, capture.PoP{})})
	frame := func(name, extra string) string {
		return b64(append(fileBytes(t, filepath.Join(screens, name)), extra...))
	}
	session := func(frames ...string) (statuses []string, reasons []string) {
		_, b := a.do("POST", "/v3/pop-session/start", a.key, map[string]any{})
		id := obj(t, b)["session_id"].(string)
		for _, f := range frames {
			resp, b := a.do("POST", "/v3/pop-session", a.key, map[string]any{"session_id": id, "image": f})
			if resp.StatusCode != 200 {
				t.Fatalf("frame: %d %s", resp.StatusCode, b)
			}
			m := obj(t, b)
			r, _ := m["reason"].(string)
			statuses, reasons = append(statuses, m["session_status"].(string)), append(reasons, r)
			if m["session_status"] != "continue" {
				break
			}
		}
		return statuses, reasons
	}
	st, rs := session(frame("screen_0000.jpg", ""), frame("screen_0000.jpg", "x"), frame("screen_0000.jpg", "\x00\x01appended"))
	if st[0] != "continue" || !strings.HasPrefix(rs[0], "1 of 3") {
		t.Fatalf("the first frame is not a good frame (%v %q): the test proves nothing", st, rs)
	}
	for i := 1; i < 3; i++ {
		if st[i] != "continue" || !strings.Contains(rs[i], "duplicate") {
			t.Fatalf("frame %d with bytes appended: %s %q", i, st[i], rs[i])
		}
	}
	st, rs = session(frame("screen_0000.jpg", ""), frame("screen_0001.jpg", ""), frame("screen_0002.jpg", ""), frame("screen_0003.jpg", ""))
	if st[len(st)-1] != "complete" {
		t.Fatalf("distinct photos did not complete: %v %q", st, rs)
	}
}

// TestAttackOpenSessions: one key cannot pile up PoP sessions: past
// MaxOpenSessionsPerKey, starting another is 429 with Retry-After, while
// another customer's key still starts them (the real session registry,
// capture.Manager, keeps the limit).
func TestAttackOpenSessions(t *testing.T) {
	mgr := capture.NewManager(capture.DefaultConfig(), fakeCardiac{}, capture.PoP{}, time.Now)
	a := newAPI(t, apiOpts{pipeline: capture.NewService(mgr, fakeCardiac{}, capture.PoP{})})
	for i := range app.DefaultMaxOpenSessionsPerKey {
		if resp, b := a.do("POST", "/v3/pop-session/start", a.key, `{}`); resp.StatusCode != 200 {
			t.Fatalf("session %d: %d %s", i, resp.StatusCode, b)
		}
	}
	for range 20 {
		resp, b := a.do("POST", "/v3/pop-session/start", a.key, `{}`)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || obj(t, b)["error"] == "" {
			t.Fatalf("over the cap: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}
	other, _, _ := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	if resp, b := a.do("POST", "/v3/pop-session/start", other, `{}`); resp.StatusCode != 200 {
		t.Fatalf("another key: %d %s", resp.StatusCode, b)
	}
}
