package pop

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"gocv.io/x/gocv"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
	"vetlens/engine/modelref"
	"vetlens/engine/ort"
	"vetlens/internal/config"
)

// TestModelsEnv names a models directory for the learned-finder tests
// (default ../../models).
const TestModelsEnv = "VETLENS_TEST_MODELS"

var (
	modelsOnce sync.Once
	modelsVal  *Models
	modelsErr  error
)

func testModelsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(TestModelsEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "models")
	}
	m, err := manifest.Load(dir)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no models in %s", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Family(FamilyName); err != nil {
		t.Skipf("no PoP models in %s: %v", dir, err)
	}
	return dir
}

// LoadORT is poport.Load, which the model-backed tests load the models
// with. Package pop's own tests cannot import poport (it imports pop), so
// hook_test.go, an external test file in the same test binary, sets it
// when the binary starts, before any test runs.
var LoadORT func(dir string) (*Models, error)

// loadORT is LoadORT, or an error where hook_test.go did not set it.
func loadORT(dir string) (*Models, error) {
	if LoadORT == nil {
		return nil, errors.New("pop tests: LoadORT not set (hook_test.go sets it to poport.Load)")
	}
	return LoadORT(dir)
}

// testModels loads the shipped PoP models once per test binary; any
// failure but "no PoP models" (missing ONNX Runtime, bad checksum) fails.
func testModels(t testing.TB) *Models {
	t.Helper()
	dir := testModelsDir(t)
	modelsOnce.Do(func() {
		if err := ort.Init("", config.ORTLibraryCandidates()...); err != nil {
			modelsErr = err
			return
		}
		modelsVal, modelsErr = loadORT(dir)
	})
	if modelsErr != nil {
		t.Fatal(modelsErr)
	}
	return modelsVal
}

func TestLoadModelsCount(t *testing.T) {
	m := testModels(t)
	if m.Count() != ExpectedModels {
		t.Fatalf("%d PoP models loaded, want %d", m.Count(), ExpectedModels)
	}
	if m.Version() == Version || m.Version() == "" {
		t.Fatalf("learned family version %q", m.Version())
	}
	var none *Models
	if none.Count() != 0 || none.Version() != Version {
		t.Fatalf("nil Models: %d, %q", none.Count(), none.Version())
	}
}

func TestLoadModelsErrors(t *testing.T) {
	testModels(t) // ONNX Runtime initialised
	for _, tc := range []struct {
		name  string
		setup func(dir string)
	}{
		{"no manifest", func(string) {}},
		{"no pop family", func(dir string) {
			os.WriteFile(filepath.Join(dir, manifest.FileName), []byte(`{"families":{},"models":[]}`), 0o644)
		}},
		{"missing model file", func(dir string) {
			os.WriteFile(filepath.Join(dir, manifest.FileName), []byte(`{"families":{"pop":{"model_version":"x"}},"models":[{"file":"pop_corners_a.onnx","sha256":"00","role":"pop_corners_a","inputs":["image"],"outputs":["points","spread"]}]}`), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			if m, err := loadORT(dir); err == nil {
				m.Close()
				t.Fatal("loaded")
			}
		})
	}
}

// closeCounter is a session that runs nothing and counts its Close calls.
type closeCounter struct{ closes *int }

func (closeCounter) Name() string { return "fake" }
func (closeCounter) Run(context.Context, ...infer.Tensor) ([]infer.Tensor, error) {
	return nil, errors.New("runs nothing")
}
func (c closeCounter) Close() error { *c.closes++; return nil }

// TestLoadModelsWithClosesWhatItOpened: LoadModelsWith opens the five
// models with the opener it is given; when the runtime refuses one, the
// load fails and closes exactly the sessions already opened, and a
// loaded family closes all five.
func TestLoadModelsWithClosesWhatItOpened(t *testing.T) {
	dir := testModelsDir(t)
	for refuse := range ExpectedModels + 1 {
		opened, closes := 0, 0
		m, err := LoadModelsWith(dir, func(path string, in, out []string) (infer.Session, error) {
			if opened == refuse {
				return nil, errors.New("refused")
			}
			opened++
			return closeCounter{&closes}, nil
		})
		if refuse < ExpectedModels {
			if err == nil || closes != refuse {
				t.Errorf("runtime refusing model %d: err %v, %d of %d sessions closed", refuse, err, closes, refuse)
			}
			continue
		}
		if err != nil || m.Count() != ExpectedModels {
			t.Fatalf("all opened: err %v, %d models", err, m.Count())
		}
		m.Close()
		if closes != ExpectedModels {
			t.Errorf("Close closed %d sessions, want %d", closes, ExpectedModels)
		}
	}
}

// TestPopModelsMatchExportReference replays, for every PoP model, the
// input saved at export (models/reference/NAME.json) through ONNX Runtime
// and compares with PyTorch's outputs.
func TestPopModelsMatchExportReference(t *testing.T) {
	testModels(t)
	dir := testModelsDir(t)
	m, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, role := range []string{RoleCornersA, RoleCornersB, RolePresence, RoleViewport, RoleQuality} {
		for _, e := range m.ByRole(role) {
			n++
			t.Run(e.File, func(t *testing.T) {
				diff, err := modelref.Replay(t.Context(), ort.Opener(ort.Options{}), m, e)
				if err != nil {
					t.Fatal(err)
				}
				for o, d := range diff {
					t.Logf("%s: max |ORT - PyTorch| = %.2g", o, d)
					if !(d <= modelref.Tolerance) {
						t.Errorf("%s differs from the export reference by %.3g", o, d)
					}
				}
			})
		}
	}
	if n != ExpectedModels {
		t.Fatalf("%d PoP models in the manifest, want %d", n, ExpectedModels)
	}
}

// learnedBounds are regression guards on the fixtures (the held-out
// figures are measured by bench/evalpop; docs/pop.md).
const (
	learnedMedianErr = 0.01
	learnedMaxErr    = 0.05
)

// TestLearnedOnComposites: the learned finder finds the displayed image
// on screen photos (the classical fixtures and the variety fixtures, made
// with held-out settings and families the models never saw) and says no
// screen on plain radiograph files.
func TestLearnedOnComposites(t *testing.T) {
	m := testModels(t)
	for _, set := range []string{"testdata/truth_screen.json", "testdata/variety/truth_vscreen.json"} {
		t.Run(filepath.Base(filepath.Dir(set))+"/"+filepath.Base(set), func(t *testing.T) {
			var errs []float64
			for _, it := range loadTruth(t, set) {
				if it.CutOff {
					continue
				}
				a, err := m.AnalyzeBytes(t.Context(), readFrame(t, filepath.Join(filepath.Dir(set), it.File)))
				if err != nil {
					t.Fatal(err)
				}
				if !a.PoPDetected || !a.Corrected {
					t.Errorf("%s: detected %v corrected %v (%s; %+v)", it.File, a.PoPDetected, a.Corrected, a.Failure, *a.Learned)
					continue
				}
				e := cornerError(a.Corners.Quad, it)
				errs = append(errs, e)
				if e > learnedMaxErr {
					t.Errorf("%s: corner error %.2f %% of the diagonal", it.File, 100*e)
				}
			}
			sort.Float64s(errs)
			if len(errs) == 0 || errs[len(errs)/2] > learnedMedianErr {
				t.Fatalf("median corner error over %d frames: %v", len(errs), errs)
			}
			t.Logf("median corner error %.2f %% (%d frames)", 100*errs[len(errs)/2], len(errs))
		})
	}
	for _, it := range loadTruth(t, "testdata/truth_radiograph.json") {
		a, err := m.AnalyzeBytes(t.Context(), readFrame(t, filepath.Join("testdata", it.File)))
		if err != nil {
			t.Fatal(err)
		}
		if a.PoPDetected {
			t.Errorf("%s: plain radiograph file taken for a screen photo (p_screen %.2f)", it.File, a.Learned.Presence)
		}
	}
	a, err := m.AnalyzeBytes(t.Context(), readFrame(t, "testdata/tinted_radiograph.png"))
	if err != nil {
		t.Fatal(err)
	}
	if a.PoPDetected {
		t.Errorf("tinted radiograph file taken for a screen photo (p_screen %.2f)", a.Learned.Presence)
	}
}

// TestLearnedPlainFiles: plain radiograph files in the simulator's own
// presentations (tints, film scans, lightbox photos, annotations; see
// testdata/make_fixtures.sh, most of them files the .2 presence model took
// for screen photos) are not screen photos.
func TestLearnedPlainFiles(t *testing.T) {
	m := testModels(t)
	files, err := filepath.Glob("testdata/plain/*.jpg")
	if err != nil || len(files) == 0 {
		t.Fatalf("no plain fixtures (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			a, err := m.AnalyzeBytes(t.Context(), readFrame(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if a.PoPDetected {
				t.Errorf("plain radiograph file taken for a screen photo (chroma %.1f, p_screen %.2f)", a.Chroma, a.Learned.Presence)
			}
		})
	}
}

// TestPresenceWeight: p_screen counts in the corners' confidence up to
// MinPresence; a frame taken for a screen photo gets the full weight.
func TestPresenceWeight(t *testing.T) {
	for _, c := range []struct {
		p, want float64
	}{
		{0, 0},
		{MinPresence / 2, 0.5},
		{MinPresence, 1},
		{0.99, 1},
	} {
		if got := presenceWeight(c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("presenceWeight(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestLearnedBadInput(t *testing.T) {
	m := testModels(t)
	if _, err := m.AnalyzeBytes(t.Context(), []byte("junk")); err == nil {
		t.Fatal("junk analysed")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.AnalyzeBytes(ctx, readFrame(t, "testdata/screen_0000.jpg")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

// BenchmarkFrame1080Learned is one 1920x1080 frame through the learned
// finder (five models), rectification and quality, as
// BenchmarkFrame1080 measures the classical one.
func BenchmarkFrame1080Learned(b *testing.B) {
	md := testModels(b)
	m, err := DecodeFrame(readFrame(b, "testdata/bench/screen_0000.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	b.ResetTimer()
	c0 := cpuTime()
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		a, err := md.Analyze(ctx, m)
		if err != nil || !a.Corrected {
			b.Fatalf("%v %+v", err, a)
		}
		times = append(times, time.Since(t0))
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2])/float64(time.Millisecond), "ms-median")
}

func TestLearnedSize(t *testing.T) {
	sq := Quad{{100, 100}, {500, 100}, {500, 400}, {100, 400}}
	for _, tc := range []struct {
		name   string
		q      Quad
		aspect float64
		w, h   int
		err    bool
	}{
		{"radiograph's own aspect", sq, 1.25, 375, 300, false},
		{"portrait", sq, 0.75, 225, 300, false},
		{"capped long side", Quad{{0, 0}, {4000, 0}, {4000, 3000}, {0, 3000}}, 2, 2048, 1024, false},
		{"unknown aspect: the quad's own", sq, 0, 400, 300, false},
		{"too small", Quad{{0, 0}, {30, 0}, {30, 30}, {0, 30}}, 1, 0, 0, true},
		{"not convex", Quad{{0, 0}, {100, 100}, {100, 0}, {0, 100}}, 1, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, h, err := learnedSize(tc.q, 1000, 800, tc.aspect)
			if tc.err {
				if !errors.Is(err, ErrBadQuad) {
					t.Fatalf("got %dx%d, %v; want ErrBadQuad", w, h, err)
				}
				return
			}
			if err != nil || w != tc.w || h != tc.h {
				t.Fatalf("got %dx%d, %v; want %dx%d", w, h, err, tc.w, tc.h)
			}
		})
	}
}

// TestLearnedSeededFit: on a screen photo where the classical detector
// finds no candidate at all (testdata/variety-seeded: a laptop with a
// light viewer in a dark room), the learned screen quad seeds the edge
// fit, and the displayed image is found to within 1 % of the diagonal.
// Before, a frame without a classical candidate kept the coarse learned
// quad, whose corner models disagreed too much to count it as found.
func TestLearnedSeededFit(t *testing.T) {
	m := testModels(t)
	for _, it := range loadTruth(t, "testdata/variety-seeded/truth_vscreen.json") {
		b := readFrame(t, filepath.Join("testdata/variety-seeded", it.File))
		cl, err := DetectCornersBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Confidence != 0 {
			t.Fatalf("%s: the classical detector found a candidate (confidence %.2f); the fixture no longer tests the seeded fit", it.File, cl.Confidence)
		}
		a, err := m.AnalyzeBytes(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Corrected || a.Learned.Source != "classical_guided" {
			t.Fatalf("%s: corrected %v, source %s (%s; %+v)", it.File, a.Corrected, a.Learned.Source, a.Failure, *a.Learned)
		}
		if e := cornerError(a.Corners.Quad, it); e > 0.01 {
			t.Errorf("%s: corner error %.2f %% of the diagonal", it.File, 100*e)
		}
	}
}

// TestAreaAspect: an area's aspect is the screen's (Aspect) times the
// area's width share over its height share, the shares measured in the
// screen's own coordinates: under perspective the area's frame pixels
// would give other shares.
func TestAreaAspect(t *testing.T) {
	flat := Quad{{100, 100}, {900, 100}, {900, 600}, {100, 600}} // 1.6
	// The same 1.6 screen seen at an angle (a homography of the flat one).
	hm, err := HomographyFrom(Rect(1.6, 1), Quad{{300, 120}, {1500, 40}, {1480, 980}, {320, 860}})
	if err != nil {
		t.Fatal(err)
	}
	tilted := hm.ApplyQuad(Rect(1.6, 1))
	ta, _ := Aspect(tilted, 1920, 1080)
	sub := func(screen Quad, x0, y0, x1, y1 float64) Quad {
		h, err := HomographyFrom(Rect(1, 1), screen)
		if err != nil {
			t.Fatal(err)
		}
		return h.ApplyQuad(Quad{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}})
	}
	for _, tc := range []struct {
		name   string
		screen Quad
		w, h   int
		area   Quad
		want   float64
	}{
		{"whole screen", flat, 1000, 700, flat, 1.6},
		{"left half", flat, 1000, 700, sub(flat, 0, 0, 0.5, 1), 0.8},
		{"letterboxed square", flat, 1000, 700, sub(flat, 0.1875, 0, 0.8125, 1), 1},
		{"tilted screen, left half", tilted, 1920, 1080, sub(tilted, 0, 0, 0.5, 1), ta / 2},
		{"tilted screen, viewport", tilted, 1920, 1080, sub(tilted, 0.2, 0.1, 0.8, 0.9), ta * 0.75},
		{"under 5 % of the screen: unknown", flat, 1000, 700, sub(flat, 0.5, 0.5, 0.53, 0.9), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := areaAspect(tc.screen, tc.area, tc.w, tc.h)
			if math.Abs(got-tc.want) > 0.005*math.Max(tc.want, 1) {
				t.Fatalf("aspect %.3f, want %.3f", got, tc.want)
			}
		})
	}
}

// TestCutOff: a displayed image corner more than cutOffMargin of the
// diagonal outside the frame makes the frame cut off.
func TestCutOff(t *testing.T) {
	const w, h = 1000, 750 // diagonal 1250: the margin is 6.25 px
	for _, tc := range []struct {
		name string
		q    Quad
		want bool
	}{
		{"inside", Quad{{10, 10}, {990, 10}, {990, 740}, {10, 740}}, false},
		{"on the edge", Quad{{0, 0}, {1000, 0}, {1000, 750}, {0, 750}}, false},
		{"5 px out, within the margin", Quad{{-5, 10}, {990, 10}, {990, 740}, {10, 740}}, false},
		{"8 px out on the left", Quad{{-8, 10}, {990, 10}, {990, 740}, {10, 740}}, true},
		{"below the frame", Quad{{10, 10}, {990, 10}, {990, 800}, {10, 740}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cutOff(tc.q, w, h); got != tc.want {
				t.Fatalf("cutOff = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPossibleScreen(t *testing.T) {
	// A screen photographed about 29 degrees off its normal (a 1280x720
	// frame, the quad's right side leaning in) and the same area seen
	// square-on.
	tilted := Corners{Quad: Quad{{515.9, 175.3}, {957.9, 183.6}, {890.6, 633.3}, {527.7, 629.0}}, Found: true, Width: 1280, Height: 720}
	square := tilted
	square.Quad = Quad{{516, 175}, {958, 175}, {958, 630}, {516, 630}}
	lost := tilted
	lost.Found = false
	if _, f := Aspect(tilted.Quad, 1280, 720); Tilt(tilted.Quad, 1280, 720, f) < 25 {
		t.Fatalf("the tilted quad's tilt is %.1f degrees", Tilt(tilted.Quad, 1280, 720, f))
	}
	cases := []frameDecision{
		{"colour, unsure presence, confident tilted quad", 12, 0.10, tilted, false, true},
		{"at the lower presence bound", 12, PossiblePresence, tilted, false, true},
		{"presence too low", 12, PossiblePresence - 0.001, tilted, false, false},
		{"presence reaches MinPresence: a screen photo, not a possible one", 12, MinPresence, tilted, false, false},
		{"grey file", MinChroma - 0.1, 0.10, tilted, false, false},
		{"corners not found", 12, 0.10, lost, false, false},
		{"the quad is the file's own frame", 12, 0.10, tilted, true, false},
		{"seen square-on: no perspective to carry", 12, 0.10, square, false, false},
	}
	for _, tc := range cases {
		if got := PossibleScreen(tc.chroma, tc.presence, tc.c, tc.fileFrame); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

// TestLearnedOddFrames: frames at the decode limits' edges (the smallest
// side, extreme aspects) and without any structure (flat, noise, a single
// step, a bordered plain image) go through the learned pipeline, corners
// alone and the classical pipeline without an error, and the learned
// pipeline takes none for a screen photo.
func TestLearnedOddFrames(t *testing.T) {
	md := testModels(t)
	rng := rand.New(rand.NewPCG(3, 4))
	grey := func(v uint8) func(x, y int) [3]uint8 { return func(x, y int) [3]uint8 { return [3]uint8{v, v, v} } }
	for _, tc := range []struct {
		name string
		w, h int
		bgr  func(x, y int) [3]uint8
	}{
		{"black", 64, 48, grey(0)},
		{"white", 640, 480, grey(255)},
		{"colour noise", 320, 240, func(x, y int) [3]uint8 {
			return [3]uint8{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))}
		}},
		{"smallest side", 32, 32, func(x, y int) [3]uint8 { return [3]uint8{0, 0, uint8(8 * x)} }},
		{"tall strip", 32, 3000, func(x, y int) [3]uint8 { return [3]uint8{9, uint8(x), uint8(y)} }},
		{"wide strip", 3000, 32, func(x, y int) [3]uint8 { return [3]uint8{9, uint8(x), uint8(y)} }},
		{"one step", 400, 300, func(x, y int) [3]uint8 {
			if x < 300 && y < 200 {
				return [3]uint8{200, 200, 200}
			}
			return [3]uint8{10, 10, 10}
		}},
		{"bordered plain image", 400, 300, func(x, y int) [3]uint8 {
			if x < 20 || y < 20 || x >= 380 || y >= 280 {
				return [3]uint8{30, 30, 30}
			}
			return [3]uint8{220, 220, 220}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := gocv.NewMatWithSize(tc.h, tc.w, gocv.MatTypeCV8UC3)
			defer m.Close()
			pix, err := m.DataPtrUint8()
			if err != nil {
				t.Fatal(err)
			}
			for y := range tc.h {
				for x := range tc.w {
					c := tc.bgr(x, y)
					copy(pix[3*(y*tc.w+x):], c[:])
				}
			}
			a, err := md.Analyze(t.Context(), m)
			if err != nil {
				t.Fatalf("learned: %v", err)
			}
			if a.PoPDetected || a.Corrected {
				t.Fatalf("taken for a screen photo: p_screen %.3f, corners %+v", a.Learned.Presence, a.Corners)
			}
			if _, _, err := md.DetectCorners(t.Context(), m); err != nil {
				t.Fatalf("corners: %v", err)
			}
			// The classical pipeline (the fallback without PoP models)
			// has no presence model: it takes even colour noise for a
			// screen photo, so only its errors are checked.
			if _, err := Analyze(m); err != nil {
				t.Fatalf("classical: %v", err)
			}
		})
	}
}
