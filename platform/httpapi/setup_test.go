package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/testmodels"
	"vetlens/platform/store"
)

// fakeCardiac gives synthetic outcomes for the HTTP shape tests: the
// result code is the gray level of the image's top-left pixel. Gray 200
// blocks until the context ends (disconnect and limit tests); started
// receives a value when such a call begins.
type fakeCardiac struct{ started chan struct{} }

func (fakeCardiac) ModelVersion() string { return "fake-1" }
func (fakeCardiac) LandmarkModels() int  { return 5 }
func (f fakeCardiac) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	g := color.GrayModel.Convert(img.At(0, 0)).(color.Gray).Y
	if g == 200 {
		if f.started != nil {
			f.started <- struct{}{}
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	code := cardiac.Code(g)
	r := &cardiac.Result{Width: 64, Height: 64, Code: code, Spread: 0.004, ClassifierConfidence: 0.9, Confidence: cardiac.ConfidenceOptimal}
	switch {
	case code == cardiac.CodeRejected:
		r.ClassifierConfidence, r.Spread = 0.12, math.NaN()
	case code.HasVHS():
		v, l := 9.5, 2.1
		r.VHS, r.LandmarksDetected, r.AxesPerpendicular = &v, true, true
		if code.HasVLAS() {
			r.VLAS = &l
		}
		r.ModelLandmarks = []cardiac.Landmarks{{}}
		for k := range r.Landmarks {
			r.Landmarks[k] = cardiac.Point{X: float64(10 + k), Y: float64(20 + k)}
		}
	}
	if o.Render && code != cardiac.CodeRejected {
		r.Rendered = []byte{0xff, 0xd8}
	}
	return r, nil
}

// fakePoP is an in-memory PoP pipeline: corner detection fails on gray
// level 99; a session completes on the third frame whose gray level is 1
// (a good frame), fails after max_frames (4) frames, and answers
// ErrSessionClosed afterwards. A frame of gray level 5 sees no screen (nil
// result). A session's frames come from the customer who started it
// (another's session is unknown); it keeps no limit of open sessions
// (the real capture.Manager does: TestAttackOpenSessions).
type fakePoP struct {
	mu       sync.Mutex
	sessions map[string]*fakeSession
	n        int
	// hold, when set, keeps DetectCorners (after its decode) until it is
	// closed or the request ends; holding receives a value as each call
	// starts waiting.
	hold, holding chan struct{}
}

type fakeSession struct {
	customer     string
	frames, good int
	done         bool
}

func (p *fakePoP) ModelsLoaded() int                                     { return 0 }
func (p *fakePoP) ModelVersion() string                                  { return "pop-fake-1" }
func (p *fakePoP) PlainFile(ctx context.Context, b []byte) (bool, error) { return false, nil }
func (p *fakePoP) DetectCorners(ctx context.Context, b []byte) ([4][2]float64, int, int, error) {
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return [4][2]float64{}, 0, 0, err
	}
	if p.hold != nil {
		p.holding <- struct{}{}
		select {
		case <-p.hold:
		case <-ctx.Done():
			return [4][2]float64{}, 0, 0, ctx.Err()
		}
	}
	if color.GrayModel.Convert(img.At(0, 0)).(color.Gray).Y == 99 {
		return [4][2]float64{}, 0, 0, app.ErrNoCorners
	}
	w, h := float64(img.Bounds().Dx()), float64(img.Bounds().Dy())
	return [4][2]float64{{1, 1}, {w - 1, 1}, {w - 1, h - 1}, {1, h - 1}}, img.Bounds().Dx(), img.Bounds().Dy(), nil
}
func (p *fakePoP) Rectify(ctx context.Context, b []byte, c [4][2]float64) ([]byte, int, int, error) {
	return []byte{0xff, 0xd8, 0xff}, 40, 30, nil
}
func (p *fakePoP) StartSession(ctx context.Context, owner app.SessionOwner, maxOpen int) (app.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	id := fmt.Sprintf("sess-%d", p.n)
	p.sessions[id] = &fakeSession{customer: owner.Customer}
	return app.Session{ID: id, Config: app.SessionConfig{MaxFrames: 4, MaxConsecutiveFailures: 3, SessionTTLSeconds: 300}}, nil
}
func (p *fakePoP) OwnsSession(id, customer string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.sessions[id]
	return ok && s.customer == customer
}
func (p *fakePoP) Frame(ctx context.Context, customer, id string, b []byte) (app.FrameOutcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.sessions[id]
	if !ok || s.customer != customer {
		return app.FrameOutcome{}, app.ErrSessionNotFound
	}
	if s.done {
		return app.FrameOutcome{}, app.ErrSessionClosed
	}
	s.frames++
	img, _, _ := image.Decode(bytes.NewReader(b))
	g := color.GrayModel.Convert(img.At(0, 0)).(color.Gray).Y
	r, _ := fakeCardiac{}.Predict(ctx, img, cardiac.PredictOptions{})
	r.PopDetected = true
	if g == 1 {
		s.good++
	}
	if g == 5 {
		r = nil
	}
	out := app.FrameOutcome{FrameIndex: s.frames - 1, FramesProcessed: s.frames, GoodFrames: s.good, Result: r}
	switch {
	case s.good >= 3:
		s.done = true
		out.Status, out.Rectified = app.StatusComplete, []byte{0xff, 0xd8, 0xff}
	case s.frames >= 4:
		s.done = true
		out.Status, out.Error, out.Result = app.StatusFailed, app.ErrMaxFrames, nil
	default:
		out.Status, out.Reason = app.StatusContinue, fmt.Sprintf("%d of 3 good frames", s.good)
	}
	return out, nil
}

// api is a running server over TLS on loopback with one customer's key.
type api struct {
	t      testing.TB
	srv    *httptest.Server
	h      *Server
	svc    *app.Service
	store  *store.Store
	client *http.Client
	key    string
}

type apiOpts struct {
	cardiac app.CardiacEngine
	// usg, when set, replaces the shipped USG models.
	usg app.USGEngine
	pop app.PoP
	// pipeline, when set, is the real PoP pipeline: the PoP port and the
	// screen-aware predictor and measurer (as cli wires it).
	pipeline *capture.Service
	cfg      Config
	// appCfg, when set, adjusts the service's configuration.
	appCfg func(*app.Config)
	// disk, when set, is the free-space probe (none: no guard).
	disk app.DiskSpace
}

func newAPI(t testing.TB, o apiOpts) *api {
	t.Helper()
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	deps := app.Deps{Repos: st.Repos(), USG: testmodels.USG(t), PoP: o.pop, Disk: o.disk}
	if o.cardiac != nil {
		deps.Cardiac = o.cardiac
	}
	if o.pipeline != nil {
		deps.PoP, deps.PoPMeasurer = o.pipeline, o.pipeline
	}
	if o.usg != nil {
		deps.USG = o.usg
	}
	cfg := app.DefaultConfig()
	cfg.CardiacConcurrency = 4 // the blocking fakes in the limit tests need 2 at once
	if o.appCfg != nil {
		o.appCfg(&cfg)
	}
	svc, err := app.New(deps, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := New(svc, o.cfg)
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); st.Close() })
	key, _, err := svc.Accounts.CreateKey(context.Background(), "clinic-a", "")
	if err != nil {
		t.Fatal(err)
	}
	cl := srv.Client()
	cl.Transport.(*http.Transport).MaxConnsPerHost = 0
	cl.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS12
	return &api{t: t, srv: srv, h: h, svc: svc, store: st, client: cl, key: key}
}

// do sends a request; key "" sends no x-api-key header.
func (a *api) do(method, path, key string, body any) (*http.Response, []byte) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, a.srv.URL+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp, data
}

// obj decodes a JSON object body.
func obj(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return m
}

// grayPNG is a w x h PNG of one gray level.
func grayPNG(t testing.TB, level uint8, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = level
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func keysOf(m map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func fileBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// idle waits until the server has no request in flight.
func (a *api) idle() {
	a.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		a.h.mu.Lock()
		n := len(a.h.inFlight)
		a.h.mu.Unlock()
		if n == 0 {
			return
		}
	}
	a.t.Fatal("requests still in flight after 5 s")
}
