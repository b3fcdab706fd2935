package cardiac

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/png"
	"math"
	"os"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"vetlens/engine/imageproc"
)

func pngBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkConsistent asserts the invariants every Result must keep.
func checkConsistent(t *testing.T, r *Result) {
	t.Helper()
	if r.Code < 0 || r.Code > CodeRejected {
		t.Fatalf("engine decided code %d", r.Code)
	}
	if r.Rejected != (r.Code == CodeRejected) {
		t.Errorf("rejected %v with code %d", r.Rejected, r.Code)
	}
	if (r.VHS != nil) != r.Code.HasVHS() || (r.VLAS != nil) != r.Code.HasVLAS() || r.LandmarksDetected != r.Code.HasVHS() {
		t.Errorf("code %d with vhs %v vlas %v detected %v", r.Code, r.VHS, r.VLAS, r.LandmarksDetected)
	}
	if r.VHS != nil && *r.VHS != Round(r.Geometry.VHS, 2) {
		t.Errorf("vhs %v from geometry %v", *r.VHS, r.Geometry.VHS)
	}
	if r.Code >= CodeHighConfidence && r.Code <= CodeReview && r.Confidence != [...]Confidence{ConfidenceOptimal, ConfidenceGood, ConfidenceReview}[r.Code-1] {
		t.Errorf("code %d with confidence %s", r.Code, r.Confidence)
	}
	if !r.Rejected && r.Code != CodeUnexpected {
		if len(r.ModelLandmarks) < 2 {
			t.Errorf("%d model landmark sets", len(r.ModelLandmarks))
		}
		for k, p := range r.Landmarks {
			if p.X < 0 || p.X > float64(r.Width) || p.Y < 0 || p.Y > float64(r.Height) {
				t.Errorf("landmark %s %v outside %dx%d", ClassNames[k], p, r.Width, r.Height)
			}
		}
	}
}

// TestPredictBadInput runs each awkward input of the bad-input list
// through the public byte path: a clear error or a proper result.
func TestPredictBadInput(t *testing.T) {
	e := testEngine(t)
	cmyk, err := os.ReadFile("../imageproc/testdata/cmyk.jpg")
	if err != nil {
		t.Fatal(err)
	}
	g16 := image.NewGray16(image.Rect(0, 0, 300, 200))
	for i := range g16.Pix {
		g16.Pix[i] = uint8(i * 7)
	}
	rgba := image.NewNRGBA(image.Rect(0, 0, 320, 240))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i * 3)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 256, 256), palette.WebSafe)
	for i := range pal.Pix {
		pal.Pix[i] = uint8(i % 200)
	}
	good, err := os.ReadFile("testdata/phantoms/xraysim_2_480x720.jpg")
	if err != nil {
		t.Fatal(err)
	}
	goodPNG, err := os.ReadFile("testdata/phantoms/xraysim_1_640x480.png")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want error // nil: a proper result
	}{
		{"zero bytes", nil, imageproc.ErrEmpty},
		{"corrupt bytes", []byte("\xff\xd8\xff\xe0 definitely not a jpeg body"), imageproc.ErrCorrupt},
		{"truncated jpeg", good[:len(good)/3], imageproc.ErrCorrupt},
		{"text", []byte("GET / HTTP/1.1"), imageproc.ErrFormat},
		{"1x1 png", pngBytes(t, image.NewGray(image.Rect(0, 0, 1, 1))), imageproc.ErrTooSmall},
		{"png header 20000x20000", bombPNG(), imageproc.ErrTooLarge},
		{"cmyk jpeg", cmyk, nil},
		{"16-bit gray png", pngBytes(t, g16), nil},
		{"rgba png", pngBytes(t, rgba), nil},
		{"paletted png", pngBytes(t, pal), nil},
		{"gray phantom jpeg", good, nil},
		{"gray phantom png", goodPNG, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.PredictBytes(context.Background(), tc.data, PredictOptions{Render: true})
			if tc.want != nil {
				if !errors.Is(err, tc.want) || r != nil {
					t.Fatalf("got %v, %v; want error %v", r, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			checkConsistent(t, r)
			if !r.Rejected && len(r.Rendered) == 0 {
				t.Error("render requested but missing")
			}
		})
	}
}

// bombPNG is a valid PNG signature and IHDR claiming 20000x20000 8-bit gray.
func bombPNG() []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := []byte{0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20, 8, 0, 0, 0, 0}
	var hdr bytes.Buffer
	hdr.Write([]byte{0, 0, 0, 13})
	hdr.WriteString("IHDR")
	hdr.Write(ihdr)
	b.Write(hdr.Bytes())
	crc := crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...))
	b.Write([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	return b.Bytes()
}

func TestPredictImageTooSmall(t *testing.T) {
	e := testEngine(t)
	_, err := e.Predict(context.Background(), image.NewGray(image.Rect(0, 0, 10, 10)), PredictOptions{})
	if !errors.Is(err, imageproc.ErrTooSmall) {
		t.Fatalf("err = %v", err)
	}
}

// TestPredictScaleInvariant: a held-out phantom and its 2x2-averaged half
// give nearly the same normalized landmarks and VHS (a scale or aspect
// mistake in the letterbox mapping would not).
func TestPredictScaleInvariant(t *testing.T) {
	e := testEngine(t)
	b, err := os.ReadFile("testdata/phantoms/xraysim_2_480x720.jpg")
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := imageproc.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := full.(*image.Gray)
	if !ok {
		t.Fatalf("phantom decodes to %T", full)
	}
	half := image.NewGray(image.Rect(0, 0, 240, 360))
	for y := 0; y < 360; y++ {
		for x := 0; x < 240; x++ {
			s := int(g.GrayAt(2*x, 2*y).Y) + int(g.GrayAt(2*x+1, 2*y).Y) + int(g.GrayAt(2*x, 2*y+1).Y) + int(g.GrayAt(2*x+1, 2*y+1).Y)
			half.SetGray(x, y, color.Gray{uint8((s + 2) / 4)})
		}
	}
	a, err := e.Predict(context.Background(), full, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Predict(context.Background(), half, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, a)
	checkConsistent(t, h)
	if a.Rejected || h.Rejected {
		t.Fatalf("phantom rejected: p %.3f and %.3f", a.ClassifierConfidence, h.ClassifierConfidence)
	}
	pa, ph := normalized(a), normalized(h)
	for k := range comparedPoints(a, h) {
		if math.Abs(pa[k].X-ph[k].X) > 0.01 || math.Abs(pa[k].Y-ph[k].Y) > 0.01 {
			t.Errorf("%s: %v at full size, %v at half", ClassNames[k], pa[k], ph[k])
		}
	}
	if plainColumns(a, h) && math.Abs(a.Geometry.VHS-h.Geometry.VHS) > 0.3 {
		t.Errorf("VHS %.2f at full size, %.2f at half", a.Geometry.VHS, h.Geometry.VHS)
	}
}

func TestPredictConcurrentAndCancelled(t *testing.T) {
	e := testEngine(t)
	img := testPhantom(t, "xraysim_5_900x1300.jpg")
	ref, err := e.Predict(context.Background(), img, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.Predict(context.Background(), img, PredictOptions{})
			if err != nil {
				errs <- err
				return
			}
			if r.Code != ref.Code || r.Geometry.VHS != ref.Geometry.VHS && !math.IsNaN(ref.Geometry.VHS) {
				errs <- fmt.Errorf("concurrent result differs: code %d VHS %v vs %d %v", r.Code, r.Geometry.VHS, ref.Code, ref.Geometry.VHS)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Predict(ctx, img, PredictOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}

// TestPredictRejectsColourScene: a saturated colour pattern is not a
// radiograph; a real validity model and the test double both reject it.
func TestPredictRejectsColourScene(t *testing.T) {
	e := testEngine(t)
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for y := 0; y < 480; y++ {
		for x := 0; x < 640; x++ {
			img.SetRGBA(x, y, [...]color.RGBA{{230, 20, 20, 255}, {20, 200, 40, 255}, {30, 40, 230, 255}, {250, 220, 0, 255}}[(x/40+y/40)%4])
		}
	}
	r, err := e.Predict(context.Background(), img, PredictOptions{Render: true})
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, r)
	if r.Code != CodeRejected || r.Rendered != nil {
		t.Fatalf("colour checkerboard: code %d (p %.3f), rendered %d bytes", r.Code, r.ClassifierConfidence, len(r.Rendered))
	}
}

func benchPredict(b *testing.B, e *Engine, data []byte) {
	ctx := context.Background()
	if _, err := e.PredictBytes(ctx, data, PredictOptions{}); err != nil { // warm up
		b.Fatal(err)
	}
	var times []time.Duration
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.PredictBytes(ctx, data, PredictOptions{}); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	// CPU time per prediction: unlike wall time, it barely moves when other
	// work shares the cores.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(times)), "cpu-ms/op")
}

// cpuTime is this process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bench1024 is a 1024x1024 held-out phantom radiograph (grayscale JPEG).
func bench1024(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/phantoms/xraysim_3_1024x1024.jpg")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkPredict1024 is decode + validity + 5-model ensemble + geometry
// for one 1024x1024 JPEG, with the default options. It reports the median.
func BenchmarkPredict1024(b *testing.B) {
	e := testEngine(b)
	benchPredict(b, e, bench1024(b))
}

// BenchmarkPredict1024Modes compares how the ensemble is scheduled.
func BenchmarkPredict1024Modes(b *testing.B) {
	n := runtime.NumCPU()
	benchModes(b, []Options{
		{IntraOpThreads: 1, Concurrency: 0},
		{IntraOpThreads: 1, Concurrency: n},
		{IntraOpThreads: n, Concurrency: 1},
		{IntraOpThreads: n, Concurrency: 0},
	}, benchPredict)
}

// BenchmarkPredict1024ModesParallel is BenchmarkPredict1024Modes with one
// caller per core predicting at once (as LAN clients would): ns/op is wall
// time per prediction at that load, so lower means more throughput.
func BenchmarkPredict1024ModesParallel(b *testing.B) {
	n := runtime.NumCPU()
	benchModes(b, []Options{
		{IntraOpThreads: 1, Concurrency: n},
		{IntraOpThreads: n, Concurrency: 1},
	}, benchPredictParallel)
}

// benchModes runs bench on the 1024x1024 benchmark radiograph with an
// engine loaded with each of the options.
func benchModes(b *testing.B, opts []Options, bench func(*testing.B, *Engine, []byte)) {
	testEngine(b) // initialises ONNX Runtime; skips without models
	dir := testModelsDir(b)
	data := bench1024(b)
	for _, o := range opts {
		b.Run(fmt.Sprintf("threads=%d,concurrency=%d", o.IntraOpThreads, o.Concurrency), func(b *testing.B) {
			e, err := loadORT(dir, o)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			bench(b, e, data)
		})
	}
}

// benchPredictParallel predicts data with one caller per core at once.
func benchPredictParallel(b *testing.B, e *Engine, data []byte) {
	ctx := context.Background()
	if _, err := e.PredictBytes(ctx, data, PredictOptions{}); err != nil { // warm up
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.PredictBytes(ctx, data, PredictOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// normalized is r's ensemble landmarks divided by the image size.
func normalized(r *Result) []Point {
	out := make([]Point, len(r.Landmarks))
	for k, p := range r.Landmarks {
		out[k] = Point{p.X / float64(r.Width), p.Y / float64(r.Height)}
	}
	return out
}

// TestRawLandmarks: the ensemble stage alone gives the unclamped mean of
// the models' landmarks that Predict reports; a tiny image is refused.
func TestRawLandmarks(t *testing.T) {
	e := testEngine(t)
	img := testPhantom(t, "phantom_1_640x480.png")
	raw, err := e.RawLandmarks(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Predict(t.Context(), img, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rejected {
		t.Fatal("phantom rejected")
	}
	want := EnsembleMean(r.ModelLandmarks)
	for k := range raw {
		if raw[k].Dist(want[k]) > 1e-6 {
			t.Errorf("landmark %s: raw %v, Predict's ensemble mean %v", ClassNames[k], raw[k], want[k])
		}
	}
	if _, err := e.RawLandmarks(t.Context(), image.NewGray(image.Rect(0, 0, 4, 4))); err == nil {
		t.Error("a 4x4 image was measured")
	}
}

// TestPredictMirror: PredictOptions.Mirror measures the mirrored image, so
// its landmarks lie mirrored (x -> W - x, within 1 % of the width) and the
// VHS of its landmarks agrees within the 0.3 v a screen photo is held to
// (app/capture), on a held-out phantom the models know.
func TestPredictMirror(t *testing.T) {
	e := testEngine(t)
	b, err := os.ReadFile("testdata/phantoms/xraysim_2_480x720.jpg")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.PredictBytes(context.Background(), b, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mirrored, err := e.PredictBytes(context.Background(), b, PredictOptions{Mirror: true})
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, plain)
	checkConsistent(t, mirrored)
	if plain.Rejected || mirrored.Rejected {
		t.Fatalf("phantom rejected: p %.3f plain, %.3f mirrored", plain.ClassifierConfidence, mirrored.ClassifierConfidence)
	}
	if mirrored.Width != plain.Width || mirrored.Height != plain.Height {
		t.Fatalf("mirrored size %dx%d, plain %dx%d", mirrored.Width, mirrored.Height, plain.Width, plain.Height)
	}
	w := float64(plain.Width)
	for k := range comparedPoints(plain, mirrored) {
		p, m := plain.Landmarks[k], mirrored.Landmarks[k]
		if math.Abs(p.X-(w-m.X)) > 0.01*w || math.Abs(p.Y-m.Y) > 0.01*float64(plain.Height) {
			t.Errorf("%s: %v plain, %v mirrored (want x near %.1f)", ClassNames[k], p, m, w-m.X)
		}
	}
	if d := math.Abs(plain.Geometry.VHS - mirrored.Geometry.VHS); plainColumns(plain, mirrored) && d > 0.3 {
		t.Errorf("VHS %.2f plain, %.2f mirrored", plain.Geometry.VHS, mirrored.Geometry.VHS)
	}
}

// plainColumns reports whether both results measured v on a column that
// repeats plainly enough to return a number (the column route); where a
// column is weak its period is not a measurement, so two views of the
// image need not agree on it. Results of the span route always compare.
func plainColumns(rs ...*Result) bool {
	for _, r := range rs {
		if r.Column == nil && r.Guard != GuardColumnNotFound {
			continue // the span route
		}
		if r.Column == nil || r.Column.Score < MinColumnScore {
			return false
		}
	}
	return true
}

// comparedPoints is the landmarks two views of one image must agree on:
// all seven where their columns are plain, else the models' five heart
// points (Vertebra A and B then sit on a column that is not measured).
func comparedPoints(rs ...*Result) int {
	if plainColumns(rs...) {
		return NumLandmarks
	}
	return VertebraA
}
