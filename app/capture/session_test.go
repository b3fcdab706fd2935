package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/pop"
)

// Frames for the doubles are text: "good:VHS:SPREAD", "bad" (no screen),
// "blur" (corrected but quality fails), "blurred:VHS" (the same, measured
// as code 1), "unsure:VHS" (corrected, code 3),
// "mirror:VHS:MIRRORED" (corrected, code 1, measured MIRRORED when
// mirrored), "learned:CONF:VHS" (corrected by the learned finder with
// corner confidence CONF, code 1). Frames in which a screen is suspected
// but not corrected are decoded (ShowsRadiograph measures them), so they
// are PNGs carrying their text in their pixels (textPNG): "nocorr" (the
// screen shows a radiograph: the predictor does not reject it), "scene"
// (a photo scene's rectangle: rejected).

type fakeAnalyzer struct{}

func (fakeAnalyzer) AnalyzeBytes(b []byte) (*pop.Analysis, error) {
	if bytes.HasPrefix(b, []byte("\x89PNG")) {
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		b = []byte(pixelText(img))
	}
	// "|..." is data appended to the file: the decoded picture, and so
	// its hash, ignore it.
	s, _, _ := strings.Cut(string(b), "|")
	a := &pop.Analysis{FrameHash: sha256.Sum256([]byte(s)), Corners: pop.Corners{Width: 640, Height: 480}}
	switch {
	case s == "bad":
		return a, nil
	case s == "nocorr" || s == "scene":
		a.PoPDetected = true
		return a, nil
	case s == "corrupt":
		return nil, errors.New("decode frame: corrupt image data")
	}
	a.PoPDetected, a.Corrected = true, true
	a.Rectified = &textImage{image.NewGray(image.Rect(0, 0, 64, 64)), s}
	a.RectifiedJPEG = []byte("jpeg:" + s)
	a.Quality = pop.Quality{Sharpness: 500}
	if rest, ok := strings.CutPrefix(s, "learned:"); ok {
		conf, vhs, _ := strings.Cut(rest, ":")
		fmt.Sscanf(conf, "%g", &a.Corners.Confidence)
		a.Learned = &pop.Learned{}
		a.Rectified = &textImage{image.NewGray(image.Rect(0, 0, 64, 64)), "good:" + vhs + ":0.004"}
		a.RectifiedJPEG = []byte("jpeg:good:" + s)
	}
	if vhs, ok := strings.CutPrefix(s, "blurred:"); ok {
		a.Rectified = &textImage{image.NewGray(image.Rect(0, 0, 64, 64)), "good:" + vhs + ":0.004"}
		s = "blur"
	}
	if s == "blur" {
		a.Quality.Problems = []string{"blurred"}
	}
	return a, nil
}

// textPNG is a 64 x 64 grey PNG whose first row holds s's bytes.
func textPNG(s string) []byte {
	g := image.NewGray(image.Rect(0, 0, 64, 64))
	copy(g.Pix, s)
	var buf bytes.Buffer
	if err := png.Encode(&buf, g); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// frameBytes is the frame "png:TEXT" as textPNG(TEXT), any other as its
// text.
func frameBytes(s string) []byte {
	if t, ok := strings.CutPrefix(s, "png:"); ok {
		return textPNG(t)
	}
	return []byte(s)
}

// pixelText is the text a textPNG carries ("" for other images).
func pixelText(img image.Image) string {
	g, ok := img.(*image.Gray)
	if !ok {
		return ""
	}
	b := g.Bounds()
	row := g.Pix[g.PixOffset(b.Min.X, b.Min.Y):][:b.Dx()]
	if i := bytes.IndexByte(row, 0); i >= 0 {
		row = row[:i]
	}
	return string(row)
}

// textImage carries the frame's text to the fake predictor.
type textImage struct {
	*image.Gray
	text string
}

type fakePredictor struct {
	calls   atomic.Int64
	refined atomic.Int64 // calls that allowed the refinement stage
}

func (p *fakePredictor) ModelVersion() string { return "test" }

func (p *fakePredictor) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	p.calls.Add(1)
	if !o.SkipRefinement {
		p.refined.Add(1)
	}
	t, ok := img.(*textImage)
	if !ok {
		if pixelText(img) == "nocorr" { // a screen showing a radiograph, measured as a file
			return &cardiac.Result{Code: cardiac.CodeNoLandmarks, Guard: cardiac.GuardRadiographUncertain, ClassifierConfidence: 0.2}, nil
		}
		return &cardiac.Result{Code: cardiac.CodeRejected, Rejected: true}, nil
	}
	var vhs, spread float64
	r := &cardiac.Result{Width: 64, Height: 64}
	switch {
	case strings.HasPrefix(t.text, "good:"):
		fmt.Sscanf(t.text, "good:%g:%g", &vhs, &spread)
		r.Code = cardiac.CodeHighConfidence
	case strings.HasPrefix(t.text, "unsure:"):
		fmt.Sscanf(t.text, "unsure:%g", &vhs)
		spread = 0.01
		r.Code = cardiac.CodeReview
	case strings.HasPrefix(t.text, "mirror:"):
		// "mirror:VHS:MIRRORED": code 1 with VHS, and MIRRORED when
		// measured mirrored ("none": no VHS then, code 5).
		v, mv, _ := strings.Cut(strings.TrimPrefix(t.text, "mirror:"), ":")
		fmt.Sscanf(v, "%g", &vhs)
		spread, r.Code = 0.004, cardiac.CodeHighConfidence
		if o.Mirror {
			if mv == "none" {
				r.Code = cardiac.CodeNoLandmarks
				return r, nil
			}
			fmt.Sscanf(mv, "%g", &vhs)
		}
	case t.text == "fail":
		return nil, errors.New("model failure")
	default:
		r.Code = cardiac.CodeNoLandmarks
	}
	r.Spread, r.LandmarksDetected = spread, r.Code.HasVHS()
	if r.Code.HasVHS() {
		r.VHS = &vhs
	}
	return r, nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// owner starts the tests' sessions.
var owner = app.SessionOwner{Customer: "clinic", Key: "k1"}

// billable reports whether out is a billable completion (a valid VHS,
// result codes 1-4), as app meters it.
func billable(out app.FrameOutcome) bool {
	return out.Status == app.StatusComplete && out.Result != nil && out.Result.Code.HasVHS()
}

func newTestManager() (*Manager, *clock, *fakePredictor) {
	c := &clock{t: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)}
	p := &fakePredictor{}
	return NewManager(DefaultConfig(), p, fakeAnalyzer{}, c.now), c, p
}

func TestSessionRows(t *testing.T) {
	type step struct {
		frame  string
		status string
		good   int
		reason string // substring for continue
		index  int    // FrameIndex (best frame on complete)
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"three agreeing good frames complete, best is the lowest spread", []step{
			{"good:10.0:0.004", app.StatusContinue, 1, "1 of 3 good frames", 0},
			{"bad", app.StatusContinue, 1, "1 of 3 good frames: no screen found", 1},
			{"good:10.2:0.002", app.StatusContinue, 2, "2 of 3 good frames", 2},
			{"good:10.1:0.003", app.StatusComplete, 3, "", 2},
		}},
		{"disagreeing VHS keeps the session open until a third agrees", []step{
			{"good:9.0:0.004", app.StatusContinue, 1, "1 of 3", 0},
			{"good:10.0:0.004", app.StatusContinue, 2, "2 of 3", 1},
			{"good:11.0:0.004", app.StatusContinue, 3, "3 of 3", 2},
			{"good:10.2:0.003", app.StatusContinue, 4, "4 of 3", 3},
			{"good:10.1:0.005", app.StatusComplete, 5, "", 3},
		}},
		{"the same frame sent again does not count", []step{
			{"good:10.0:0.004", app.StatusContinue, 1, "1 of 3", 0},
			{"good:10.0:0.004", app.StatusContinue, 1, "duplicate of an earlier frame", 1},
			{"good:10.0:0.004", app.StatusContinue, 1, "duplicate", 2},
			{"good:10.0:0.0041", app.StatusContinue, 2, "2 of 3", 3},
		}},
		{"the same picture with bytes appended does not count", []step{
			{"good:10.0:0.004", app.StatusContinue, 1, "1 of 3", 0},
			{"good:10.0:0.004|x", app.StatusContinue, 1, "duplicate of an earlier frame (the same picture)", 1},
			{"good:10.0:0.004|xx", app.StatusContinue, 1, "duplicate", 2},
			{"good:10.1:0.004|x", app.StatusContinue, 2, "2 of 3", 3},
			{"good:10.1:0.004|xyz", app.StatusContinue, 2, "duplicate", 4},
			{"good:10.2:0.004", app.StatusComplete, 3, "", 0},
		}},
		{"learned corners must be certain; the classical finder's are not held to it", []step{
			{"learned:0.84:10.0", app.StatusContinue, 0, "screen corners not certain enough (confidence 0.84 < 0.85)", 0},
			{"learned:0.85:10.1", app.StatusContinue, 1, "1 of 3 good frames", 1},
			{"learned:0.99:10.2", app.StatusContinue, 2, "2 of 3 good frames", 2},
			{"good:10.0:0.002", app.StatusComplete, 3, "", 3},
		}},
		{"quality, low confidence, uncorrected and corrupt frames are not good", []step{
			{"blur", app.StatusContinue, 0, "frame quality: [blurred]", 0},
			{"unsure:10", app.StatusContinue, 0, "result code 3", 1},
			{"png:nocorr", app.StatusContinue, 0, "screen corners not found", 2},
			{"corrupt", app.StatusContinue, 0, "unreadable frame", 3},
			{"png:scene", app.StatusContinue, 0, "no screen found", 4},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _, p := newTestManager()
			st, err := m.Start(owner, 0)
			if id, perr := uuid.Parse(st.ID); err != nil || st.Config != DefaultConfig().Session() || perr != nil || id.Version() != 4 || len(st.ID) != 36 {
				t.Fatalf("start: %+v, %v", st, err)
			}
			defer func() {
				if p.refined.Load() != 0 {
					t.Errorf("%d session frames were measured with the refinement stage", p.refined.Load())
				}
			}()
			for i, s := range tc.steps {
				out, err := m.Frame(context.Background(), owner.Customer, st.ID, frameBytes(s.frame))
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if out.Status != s.status || out.GoodFrames != s.good || out.FrameIndex != s.index || out.FramesProcessed != i+1 {
					t.Fatalf("frame %d (%s): got %s good=%d index=%d processed=%d, want %s good=%d index=%d",
						i, s.frame, out.Status, out.GoodFrames, out.FrameIndex, out.FramesProcessed, s.status, s.good, s.index)
				}
				if s.status == app.StatusContinue && !strings.Contains(out.Reason, s.reason) {
					t.Fatalf("frame %d: reason %q, want %q", i, out.Reason, s.reason)
				}
				if s.status == app.StatusComplete {
					if out.Result == nil || !billable(out) || !bytes.HasPrefix(out.Rectified, []byte("jpeg:good")) {
						t.Fatalf("complete without best result or image: %+v", out)
					}
				} else if billable(out) {
					t.Fatalf("frame %d billable while %s", i, out.Status)
				}
			}
		})
	}
}

func TestClosedAndUnknown(t *testing.T) {
	m, _, _ := newTestManager()
	if _, err := m.Frame(context.Background(), owner.Customer, "nope", []byte("bad")); !errors.Is(err, app.ErrSessionNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	st, _ := m.Start(owner, 0)
	for _, f := range []string{"good:10:0.001", "good:10:0.0011", "good:10:0.0012"} {
		if _, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("good:10:0.0013")); !errors.Is(err, app.ErrSessionClosed) {
		t.Fatalf("frame after complete: %v", err)
	}
}

func TestMaxFrames(t *testing.T) {
	m, _, _ := newTestManager()
	st, _ := m.Start(owner, 0)
	for i := range 20 {
		out, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("bad"))
		if err != nil {
			t.Fatal(err)
		}
		want := app.StatusContinue
		if i == 19 {
			want = app.StatusFailed
		}
		if out.Status != want {
			t.Fatalf("frame %d: %s, want %s", i, out.Status, want)
		}
		if i == 19 && (out.Error != app.ErrMaxFrames || billable(out) || out.FrameIndex != 19) {
			t.Fatalf("failed outcome: %+v", out)
		}
	}
	if _, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("bad")); !errors.Is(err, app.ErrSessionClosed) {
		t.Fatalf("frame 21: %v", err)
	}
}

func TestTTLAndSweep(t *testing.T) {
	m, c, p := newTestManager()
	st, _ := m.Start(owner, 0)
	other, _ := m.Start(owner, 0)
	c.add(299 * time.Second)
	if out, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("good:10:0.001")); err != nil || out.Status != app.StatusContinue {
		t.Fatalf("at 299 s: %+v %v", out, err)
	}
	c.add(2 * time.Second)
	calls := p.calls.Load()
	out, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("good:10:0.001"))
	if err != nil || out.Status != app.StatusFailed || out.Error != app.ErrTimeout {
		t.Fatalf("at 301 s: %+v %v", out, err)
	}
	if p.calls.Load() != calls {
		t.Fatal("an expired session ran the models")
	}
	if m.Len() != 2 {
		t.Fatalf("sessions held: %d", m.Len())
	}
	c.add(61 * time.Second)
	m.Sweep()
	if m.Len() != 0 {
		t.Fatalf("after sweep: %d sessions held", m.Len())
	}
	for _, id := range []string{st.ID, other.ID} {
		if _, err := m.Frame(context.Background(), owner.Customer, id, []byte("bad")); !errors.Is(err, app.ErrSessionNotFound) {
			t.Fatalf("swept session: %v", err)
		}
	}
}

func TestConsecutiveFailuresDiscardGoodFrames(t *testing.T) {
	m, _, _ := newTestManager()
	st, _ := m.Start(owner, 0)
	frames := []string{"good:10:0.001", "good:10:0.0011"}
	for range m.Config().MaxConsecutiveFailures {
		frames = append(frames, "bad")
	}
	frames = append(frames, "good:10:0.0012")
	var out app.FrameOutcome
	for _, f := range frames {
		var err error
		if out, err = m.Frame(context.Background(), owner.Customer, st.ID, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if out.Status != app.StatusContinue || out.GoodFrames != 1 {
		t.Fatalf("after %d failures: %+v", m.Config().MaxConsecutiveFailures, out)
	}
}

func TestModelErrorIsReturned(t *testing.T) {
	m, _, _ := newTestManager()
	st, _ := m.Start(owner, 0)
	if _, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte("fail")); err == nil || !strings.Contains(err.Error(), "model failure") {
		t.Fatalf("model failure: %v", err)
	}
}

func TestConcurrentSessions(t *testing.T) {
	m, _, _ := newTestManager()
	const sessions = 40
	var wg sync.WaitGroup
	var complete atomic.Int64
	for range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := m.Start(owner, 0)
			if err != nil {
				t.Error(err)
				return
			}
			for _, f := range []string{"bad", "good:10:0.002", "blur", "good:10.1:0.001", "good:9.9:0.003"} {
				out, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte(f))
				if err != nil {
					t.Error(err)
					return
				}
				if out.Status == app.StatusComplete {
					complete.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if complete.Load() != sessions {
		t.Fatalf("%d of %d sessions completed", complete.Load(), sessions)
	}
}

func TestConcurrentFramesOneSession(t *testing.T) {
	m, _, _ := newTestManager()
	st, _ := m.Start(owner, 0)
	var wg sync.WaitGroup
	var complete, closed, cont atomic.Int64
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := m.Frame(context.Background(), owner.Customer, st.ID, []byte(fmt.Sprintf("good:10:%g", 0.002+float64(i)*1e-5)))
			switch {
			case errors.Is(err, app.ErrSessionClosed):
				closed.Add(1)
			case err != nil:
				t.Error(err)
			case out.Status == app.StatusComplete:
				complete.Add(1)
			case out.Status == app.StatusContinue:
				cont.Add(1)
			}
		}()
	}
	wg.Wait()
	if complete.Load() != 1 || complete.Load()+closed.Load()+cont.Load() != 30 {
		t.Fatalf("complete %d, continue %d, closed %d", complete.Load(), cont.Load(), closed.Load())
	}
}

// TestUniqueIDs: session ids are random (version 4) UUIDs in the
// canonical 36-character lowercase form, unique, and unguessable: across
// 2,000 ids each of the 122 random bits is set about half the time (a
// counter, a clock or a truncated source would leave bits fixed or
// skewed), the 6 version and variant bits are fixed, and each id opens
// its own session.
func TestUniqueIDs(t *testing.T) {
	m, _, _ := newTestManager()
	const n = 2000
	seen := map[string]bool{}
	var ones [128]int
	for range n {
		st, err := m.Start(owner, 0)
		if err != nil {
			t.Fatal(err)
		}
		id := st.ID
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || len(id) != 36 || id != strings.ToLower(id) {
			t.Fatalf("session id %q is not a canonical random UUID: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("duplicate session id %s", id)
		}
		seen[id] = true
		for i := range ones {
			ones[i] += int(u[i/8] >> (7 - i%8) & 1)
		}
	}
	// Binomial(2000, 0.5): sd 22; 4.5 sd either side fails by chance
	// about once in 150,000 runs of all 122 bits.
	for i, c := range ones {
		if i >= 48 && i < 52 || i == 64 || i == 65 { // version, variant
			continue
		}
		if c < n/2-100 || c > n/2+100 {
			t.Errorf("bit %d set in %d of %d ids: not uniformly random", i, c, n)
		}
	}
	if m.Len() != n {
		t.Errorf("%d sessions open, want %d", m.Len(), n)
	}
}

// Bad frames through the real PoP pipeline: none is good, none errors.
func TestBadFramesRealPipeline(t *testing.T) {
	enc := func(img image.Image, asPNG bool) []byte {
		var b bytes.Buffer
		if asPNG {
			png.Encode(&b, img)
		} else {
			jpeg.Encode(&b, img, nil)
		}
		return b.Bytes()
	}
	black := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for i := range black.Pix {
		if i%4 == 3 {
			black.Pix[i] = 255
		}
	}
	room := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for y := range 480 {
		for x := range 640 {
			room.Set(x, y, color.RGBA{uint8(100 + x/8), uint8(80 + y/6), 120, 255})
		}
	}
	frames := map[string][]byte{
		"corrupt":   []byte("\xff\xd8\xff\xe0 this is not a jpeg"),
		"empty":     nil,
		"tiny":      enc(image.NewGray(image.Rect(0, 0, 8, 8)), true),
		"all black": enc(black, false),
		"no screen": enc(room, false),
	}
	p := &fakePredictor{}
	m := NewManager(DefaultConfig(), p, PoP{}, nil)
	st, _ := m.Start(owner, 0)
	for name, b := range frames {
		out, err := m.Frame(context.Background(), owner.Customer, st.ID, b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.Status != app.StatusContinue || out.GoodFrames != 0 || out.Result != nil {
			t.Fatalf("%s: %+v", name, out)
		}
	}
	if p.calls.Load() != 0 {
		t.Fatalf("models ran %d times on frames with no screen", p.calls.Load())
	}
}

// TestAppendedBytesRealPipeline: with the real PoP pipeline, a screen
// photo sent three times with bytes appended is one frame, then two
// duplicates, measured once (they counted as three agreeing frames
// before).
func TestAppendedBytesRealPipeline(t *testing.T) {
	jpg, err := os.ReadFile(filepath.Join("..", "..", "engine", "pop", "testdata", "screen_0000.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePredictor{}
	m := NewManager(DefaultConfig(), p, PoP{}, nil)
	st, _ := m.Start(owner, 0)
	for i, extra := range []string{"", "x", "xx"} {
		out, err := m.Frame(context.Background(), owner.Customer, st.ID, append(append([]byte{}, jpg...), extra...))
		if err != nil {
			t.Fatal(err)
		}
		dup := strings.Contains(out.Reason, "duplicate")
		if out.Status != app.StatusContinue || dup != (i > 0) {
			t.Fatalf("frame %d: %s %q", i, out.Status, out.Reason)
		}
	}
	if n := p.calls.Load(); n != 1 {
		t.Fatalf("the models ran %d times, want once", n)
	}
}
