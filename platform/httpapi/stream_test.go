package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"vetlens/engine/cardiac"
)

type sseEvent struct {
	name string
	data map[string]any
}

// readSSE parses the stream, counting comment lines.
func readSSE(t *testing.T, resp *http.Response) ([]sseEvent, int) {
	t.Helper()
	var evs []sseEvent
	comments := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatal(err)
			}
		case line == "" && cur.name != "":
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	return evs, comments
}

func (a *api) stream(ctx context.Context, body any) *http.Response {
	a.t.Helper()
	j, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", a.srv.URL+"/v3/predict/stream", bytes.NewReader(j))
	req.Header.Set("x-api-key", a.key)
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp
}

func TestStreamEvents(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}})
	imgs := []string{b64(grayPNG(t, 2, 64, 64)), "not base64!", b64([]byte("not an image")), b64(grayPNG(t, 6, 64, 64)), b64(grayPNG(t, 1, 64, 64))}
	resp := a.stream(context.Background(), map[string]any{"images": imgs, "uuid": "rex"})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	evs, _ := readSSE(t, resp)
	var names []string
	for _, e := range evs {
		names = append(names, e.name)
	}
	want := "processing_started photo error error photo photo summary billing"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v, want %s", names, want)
	}
	if evs[0].data["n_images"] != 5.0 || evs[0].data["model_version"] != "fake-1" {
		t.Errorf("started %v", evs[0].data)
	}
	p := evs[1].data
	for _, k := range strings.Fields("index vhs vlas spread model_confidence landmarks_detected axes_perpendicular n_total model_version") {
		if _, ok := p[k]; !ok {
			t.Errorf("photo lacks %s: %v", k, p)
		}
	}
	if len(p) != 9 {
		t.Errorf("photo event has fields beyond the spec's nine: %v", p)
	}
	if evs[2].data["index"] != 1.0 || evs[2].data["uuid"] != "rex" || evs[2].data["error"] == "" || evs[3].data["index"] != 2.0 {
		t.Errorf("error events %v %v", evs[2].data, evs[3].data)
	}
	if evs[4].data["rejected"] != true || evs[5].data["index"] != 4.0 {
		t.Errorf("photos %v %v", evs[4].data, evs[5].data)
	}
	if s := evs[6].data; s["best_photo_index"] != 4.0 || s["n_photos_processed"] != 3.0 || s["n_photos_with_landmarks"] != 2.0 {
		t.Errorf("summary %v", s)
	}
	if b := evs[7].data; b["billable"] != true || b["call_type"] != "session" || b["rate"] != 4.0 || b["monthly_usage"] != 1.0 {
		t.Errorf("billing %v", b)
	}
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 1 {
		t.Fatalf("ledger %d events", len(evs))
	}
}

func TestStreamHeartbeat(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, cfg: Config{HeartbeatInterval: 20 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp := a.stream(ctx, map[string]any{"images": []string{b64(grayPNG(t, 200, 64, 64))}})
	_, comments := readSSE(t, resp)
	if comments < 3 {
		t.Fatalf("%d heartbeat comments in 300 ms at 20 ms", comments)
	}
}

// TestStreamDisconnectNotBilled: the client goes away while image 2 of 2
// is being measured; the work stops and nothing is billed.
func TestStreamDisconnectNotBilled(t *testing.T) {
	started := make(chan struct{}, 1)
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{started: started}})
	ctx, cancel := context.WithCancel(context.Background())
	resp := a.stream(ctx, map[string]any{"images": []string{b64(grayPNG(t, 1, 64, 64)), b64(grayPNG(t, 200, 64, 64))}})
	<-started
	cancel()
	resp.Body.Close()
	// The server notices, the fake engine returns, no billing happens.
	a.idle()
	if evs, _ := a.svc.Repos().Ledger.Events(context.Background()); len(evs) != 0 {
		t.Fatalf("disconnected stream billed: %+v", evs)
	}
}

// TestInFlightLimit: with a limit of 2 per key, a third concurrent
// request gets 429 with Retry-After on both services; other keys are not
// affected.
func TestInFlightLimit(t *testing.T) {
	started := make(chan struct{}, 2)
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{started: started}, cfg: Config{MaxInFlightPerKey: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := a.stream(ctx, map[string]any{"images": []string{b64(grayPNG(t, 200, 64, 64))}})
			readSSE(t, resp)
			resp.Body.Close()
		}()
	}
	<-started
	<-started
	resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(grayPNG(t, 1, 64, 64))})
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || obj(t, b)["error"] == "" {
		t.Errorf("v3: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	resp, b = a.do("POST", "/usg/v1/predict", a.key, usgValid)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || obj(t, b)["error"].(map[string]any)["code"] != "rate_limited" {
		t.Errorf("usg: %d %s", resp.StatusCode, b)
	}
	other, _, _ := a.svc.Accounts.CreateKey(context.Background(), "clinic-b", "")
	if resp, b := a.do("POST", "/usg/v1/predict", other, usgValid); resp.StatusCode != 200 {
		t.Errorf("other key: %d %s", resp.StatusCode, b)
	}
	cancel()
	wg.Wait()
	if resp, _ := a.do("POST", "/usg/v1/predict", a.key, usgValid); resp.StatusCode != 200 {
		t.Errorf("after release: %d", resp.StatusCode)
	}
}

// slowCardiac takes 300 ms per image, then measures code 1.
type slowCardiac struct{ fakeCardiac }

func (s slowCardiac) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	time.Sleep(300 * time.Millisecond)
	return s.fakeCardiac.Predict(ctx, img, o)
}

// TestGracefulShutdown: cancelling Serve's context while a request is in
// flight lets it finish (200, billed) before Serve returns; new
// connections are refused.
func TestGracefulShutdown(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: slowCardiac{}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := a.h.HTTPServer(a.srv.TLS)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, ln, 10*time.Second) }()
	url := "https://" + ln.Addr().String() + "/v3/predict"
	type result struct {
		status int
		body   []byte
	}
	got := make(chan result, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"image": b64(grayPNG(t, 1, 64, 64))})
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("x-api-key", a.key)
		resp, err := a.client.Do(req)
		if err != nil {
			got <- result{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, b}
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	r := <-got
	if r.status != 200 || obj(t, r.body)["billing"].(map[string]any)["billable"] != true {
		t.Fatalf("in-flight request during shutdown: %d %s", r.status, r.body)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still accepting after shutdown")
	}
}
