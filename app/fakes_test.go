package app

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
	"testing"
	"time"

	"vetlens/engine/cardiac"
	"vetlens/platform/store"
)

// fakeClock is a settable Clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// fakeCardiac returns synthetic outcomes: the result code is the gray
// level of the image's top-left pixel (0-7), the VHS 9 + level/10.
type fakeCardiac struct{}

func (fakeCardiac) ModelVersion() string { return "fake-1" }
func (fakeCardiac) LandmarkModels() int  { return 5 }
func (fakeCardiac) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := color.GrayModel.Convert(img.At(img.Bounds().Min.X, img.Bounds().Min.Y)).(color.Gray).Y
	return syntheticResult(cardiac.Code(g)), nil
}

func syntheticResult(code cardiac.Code) *cardiac.Result {
	r := &cardiac.Result{Width: 64, Height: 64, Code: code, Spread: 0.004 + float64(code)*0.001, ClassifierConfidence: 0.9}
	r.Confidence = cardiac.ConfidenceFor(r.Spread)
	switch {
	case code == cardiac.CodeRejected:
		r.ClassifierConfidence = 0.1
		r.Spread = math.NaN()
	case code.HasVHS():
		v := 9 + float64(code)/10
		r.VHS = &v
		r.LandmarksDetected = true
		if code.HasVLAS() {
			l := 2.0
			r.VLAS = &l
		}
	}
	return r
}

// codeImage is a PNG whose pixels all have gray level code.
func codeImage(t testing.TB, code int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = uint8(code)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newTestService opens a store in a temp dir with a fake clock at t0.
func newTestService(t testing.TB, t0 time.Time) (*Service, *fakeClock) {
	t.Helper()
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &fakeClock{t: t0}
	s, err := New(Deps{Repos: st.Repos(), Clock: clk, Cardiac: fakeCardiac{}}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	testStoresMu.Lock()
	testStores[s] = st
	testStoresMu.Unlock()
	return s, clk
}

// testStores is the bbolt store behind each test Service (for tests that
// close it under the Service).
var (
	testStoresMu sync.Mutex
	testStores   = map[*Service]*store.Store{}
)

// newCaller creates a customer with a key and returns its Caller.
func newCaller(t testing.TB, s *Service, customer string, tier Tier) Caller {
	t.Helper()
	key, _, err := s.Accounts.CreateKey(context.Background(), customer, tier)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Accounts.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type cardiacResult = cardiac.Result

func cardiacCode(c int) cardiac.Code { return cardiac.Code(c) }

// rewire rebuilds s's features with change applied to the Deps and
// Config it was built with (the engines or limits a test scripts). s
// keeps its address, so a fake holding s sees the rebuilt features.
func rewire(t testing.TB, s *Service, change func(*Deps, *Config)) {
	t.Helper()
	d := Deps{Repos: s.Repos(), Clock: s.Accounts.clock, Cardiac: s.Cardiac.cardiac, USG: s.USG.usg, PoP: s.Sessions.pop,
		PoPMeasurer: s.Cardiac.popMeasure, Disk: s.Cardiac.disk.probe}
	cfg := s.Accounts.cfg
	change(&d, &cfg)
	n, err := New(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	*s = *n
}
