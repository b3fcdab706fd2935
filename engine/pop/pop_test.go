package pop

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"gocv.io/x/gocv"

	"vetlens/engine/imageproc"
	"vetlens/internal/dicomtest"
)

type truthItem struct {
	File    string       `json:"file"`
	Kind    string       `json:"kind"`
	Corners [][2]float64 `json:"corners"`
	Width   int          `json:"width"`
	Height  int          `json:"height"`
	Mode    string       `json:"mode"`
	CutOff  bool         `json:"cut_off"`
}

func loadTruth(t testing.TB, path string) []truthItem {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Items []truthItem }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Items
}

func readFrame(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cornerError is the mean corner distance over the image diagonal.
func cornerError(q Quad, it truthItem) float64 {
	var s float64
	for i := range 4 {
		s += math.Hypot(q[i].X-it.Corners[i][0], q[i].Y-it.Corners[i][1])
	}
	return s / 4 / math.Hypot(float64(it.Width), float64(it.Height))
}

// The fixtures are composites from models/train/pop/composites.py
// (testdata/make_fixtures.sh). Accuracy on the full held-out set is
// measured by bench/evalpop; this guards against regressions.
func TestCornersOnComposites(t *testing.T) {
	items := loadTruth(t, "testdata/truth_screen.json")
	var errs []float64
	for _, it := range items {
		a, err := AnalyzeBytes(readFrame(t, filepath.Join("testdata", it.File)))
		if err != nil {
			t.Fatalf("%s: %v", it.File, err)
		}
		if !a.PoPDetected {
			t.Errorf("%s: screen photo not detected (confidence %.2f, chroma %.1f)", it.File, a.Corners.Confidence, a.Chroma)
			continue
		}
		if !a.Corrected {
			errs = append(errs, math.Inf(1))
			continue
		}
		e := cornerError(a.Corners.Quad, it)
		errs = append(errs, e)
		t.Logf("%s (%s): corner error %.2f %% of the diagonal, confidence %.2f", it.File, it.Mode, 100*e, a.Corners.Confidence)
		if a.Rectified == nil || len(a.RectifiedJPEG) != 0 {
			t.Errorf("%s: corrected without a rectified image, or encoded before EncodeRectified", it.File)
		}
		if err := a.EncodeRectified(); err != nil || len(a.RectifiedJPEG) == 0 {
			t.Errorf("%s: EncodeRectified: %v (%d bytes)", it.File, err, len(a.RectifiedJPEG))
		}
	}
	sort.Float64s(errs)
	if med := errs[len(errs)/2]; med > 0.01 {
		t.Errorf("median corner error %.2f %% of the diagonal, want <= 1 %%", 100*med)
	}
	found := 0
	for _, e := range errs {
		if !math.IsInf(e, 1) {
			found++
		}
	}
	if found < len(items)-1 {
		t.Errorf("corners found on %d of %d frames", found, len(items))
	}
}

func TestRadiographFilesAreNotScreenPhotos(t *testing.T) {
	for _, it := range loadTruth(t, "testdata/truth_radiograph.json") {
		a, err := AnalyzeBytes(readFrame(t, filepath.Join("testdata", it.File)))
		if err != nil {
			t.Fatalf("%s: %v", it.File, err)
		}
		if a.PoPDetected || a.Corrected {
			t.Errorf("%s: radiograph file read as a screen photo (chroma %.2f, confidence %.2f)", it.File, a.Chroma, a.Corners.Confidence)
		}
	}
}

func TestHomographyAndAspect(t *testing.T) {
	cases := []struct {
		name   string
		w, h   float64
		yaw    float64 // degrees
		pitch  float64
		aspect float64
	}{
		{"frontal 16:9", 1.6, 0.9, 0, 0, 16.0 / 9},
		{"yaw 30", 1.6, 1.0, 30, 0, 1.6},
		{"pitch 25 yaw 20", 1.25, 1.0, 20, 25, 1.25},
		{"portrait yaw 35", 0.75, 1.0, 35, 5, 0.75},
	}
	const W, H = 1280, 960
	f := 1.1 * W
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Project a tc.w x tc.h rectangle, 2 units away, rotated.
			cy, sy := math.Cos(tc.yaw*math.Pi/180), math.Sin(tc.yaw*math.Pi/180)
			cp, sp := math.Cos(tc.pitch*math.Pi/180), math.Sin(tc.pitch*math.Pi/180)
			var q Quad
			for i, p := range Rect(tc.w, tc.h) {
				x, y, z := p.X-tc.w/2, p.Y-tc.h/2, 0.0
				x, z = cy*x+sy*z, -sy*x+cy*z
				y, z = cp*y-sp*z, sp*y+cp*z
				z += 2.2
				q[i] = Point{f*x/z + W/2, f*y/z + H/2}
			}
			asp, focal := Aspect(q, W, H)
			// With one pair of sides parallel in the photo (pure yaw) the
			// focal length is unobservable and defaultFocal stands in
			// for it (here 1.0 x 1280 against a true 1.1 x 1280).
			tol := 0.01
			if tc.yaw == 0 || tc.pitch == 0 {
				tol = 0.03
			}
			if math.Abs(asp-tc.aspect)/tc.aspect > tol {
				t.Errorf("aspect %.4f, want %.4f", asp, tc.aspect)
			}
			if tc.yaw != 0 && tc.pitch != 0 && math.Abs(focal-f)/f > 0.02 {
				t.Errorf("focal %.1f, want %.1f", focal, f)
			}
			if tc.yaw != 0 && tc.pitch != 0 {
				want := math.Acos(cy*cp) * 180 / math.Pi
				if got := Tilt(q, W, H, focal); math.Abs(got-want) > 1 {
					t.Errorf("tilt %.1f, want %.1f", got, want)
				}
			}
			hm, err := HomographyFrom(Rect(asp, 1), q)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range Rect(asp, 1) {
				if d := dist(hm.Apply(p), q[i]); d > 1e-6 {
					t.Errorf("corner %d maps %.2g px off", i, d)
				}
			}
		})
	}
}

func TestOrderCorners(t *testing.T) {
	want := Quad{{10, 12}, {200, 5}, {210, 150}, {5, 140}}
	for _, perm := range [][4]int{{0, 1, 2, 3}, {2, 0, 3, 1}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		var p [4]Point
		for i, j := range perm {
			p[i] = want[j]
		}
		if got := orderCorners(p); got != want {
			t.Errorf("order %v: %v", perm, got)
		}
	}
}

func TestRectifyIdentity(t *testing.T) {
	// Rectifying the whole frame onto its own size is the identity.
	m := gocv.NewMatWithSize(120, 160, gocv.MatTypeCV8UC1)
	defer m.Close()
	for y := range 120 {
		for x := range 160 {
			m.SetUCharAt(y, x, uint8((x*7+y*3)%256))
		}
	}
	r, err := Rectify(m, Rect(160, 120), 160, 120)
	defer r.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int{{0, 0}, {159, 119}, {80, 60}, {3, 117}} {
		if a, b := m.GetUCharAt(p[1], p[0]), r.GetUCharAt(p[1], p[0]); absDiff(a, b) > 1 {
			t.Errorf("pixel %v: %d became %d", p, a, b)
		}
	}
	if _, _, err := RectifiedSize(Quad{{0, 0}, {10, 0}, {0, 10}, {10, 10}}, 100, 100); err == nil {
		t.Error("self-intersecting quad accepted")
	}
}

func TestBadFrames(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"not an image", []byte("hello")},
		{"truncated jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF")},
	}
	for _, tc := range cases {
		if _, err := AnalyzeBytes(tc.b); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	black := gocv.NewMatWithSize(480, 640, gocv.MatTypeCV8UC3)
	defer black.Close()
	a, err := Analyze(black)
	if err != nil {
		t.Fatal(err)
	}
	if a.PoPDetected || a.Corners.Found {
		t.Errorf("all-black frame: %+v", a.Corners)
	}
}

// BenchmarkFrame1080 is one 1920x1080 frame through corners,
// rectification and quality (decoding excluded; JPEG encoding of the
// rectified image included, as the pipeline returns it).
func BenchmarkFrame1080(b *testing.B) {
	m, err := DecodeFrame(readFrame(b, "testdata/bench/screen_0000.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	// CPU time (all threads) per frame, next to the wall time: on a
	// shared, loaded machine wall time measures the neighbours too.
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		a, err := Analyze(m)
		if err != nil || !a.Corrected {
			b.Fatalf("%v %+v", err, a)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's CPU time (user and system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestDICOMFramesAreRadiographs: a DICOM file decodes to a BGR frame of
// its grey first frame and is never taken for a photograph of a screen.
func TestDICOMFramesAreRadiographs(t *testing.T) {
	set := dicomtest.Build(t)
	for _, name := range []string{"mono1-16bit", "jpeg-baseline"} {
		b := set.Get(t, name).Bytes(t)
		m, err := DecodeFrame(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Cols() != set.Source.Bounds().Dx() || m.Rows() != set.Source.Bounds().Dy() || m.Channels() != 3 || Chroma(m) != 0 {
			t.Errorf("%s: %dx%d, %d channels, chroma %.2f", name, m.Cols(), m.Rows(), m.Channels(), Chroma(m))
		}
		m.Close()
		a, err := AnalyzeBytes(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.PoPDetected || a.Corrected {
			t.Errorf("%s: DICOM read as a screen photo", name)
		}
	}
	if _, err := DecodeFrame(set.Get(t, "rle").Bytes(t)); !errors.Is(err, imageproc.ErrFormat) {
		t.Errorf("RLE DICOM: %v, want ErrFormat", err)
	}
}

// TestEncodeRectified: the JPEG made on demand from the rectified image
// has the very bytes of encoding the rectified Mat (what analysing a frame
// used to do), in colour and in grey; it is made once; an analysis with
// nothing rectified refuses.
func TestEncodeRectified(t *testing.T) {
	frame, err := DecodeFrame(readFrame(t, "testdata/screen_0000.jpg"))
	defer frame.Close()
	if err != nil {
		t.Fatal(err)
	}
	grey := gocv.NewMat()
	defer grey.Close()
	gocv.CvtColor(frame, &grey, gocv.ColorBGRToGray)
	q := Quad{{40, 30}, {300, 50}, {290, 220}, {30, 200}}
	for _, tc := range []struct {
		name string
		src  gocv.Mat
	}{{"colour", frame}, {"grey", grey}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Rectify(tc.src, q, 260, 180)
			defer r.Close()
			if err != nil {
				t.Fatal(err)
			}
			want, err := EncodeJPEG(r, JPEGQuality)
			if err != nil {
				t.Fatal(err)
			}
			img, err := r.ToImage()
			if err != nil {
				t.Fatal(err)
			}
			a := &Analysis{Corrected: true, Rectified: img}
			if err := a.EncodeRectified(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.RectifiedJPEG, want) {
				t.Fatalf("%d bytes, want the Mat's %d bytes", len(a.RectifiedJPEG), len(want))
			}
			a.RectifiedJPEG = []byte("kept")
			if err := a.EncodeRectified(); err != nil || string(a.RectifiedJPEG) != "kept" {
				t.Fatalf("encoded again: %v %q", err, a.RectifiedJPEG)
			}
		})
	}
	if err := (&Analysis{}).EncodeRectified(); err == nil {
		t.Fatal("nothing rectified, yet encoded")
	}
}
