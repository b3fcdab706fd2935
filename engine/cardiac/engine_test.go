package cardiac

import (
	"context"
	"errors"
	"image"
	"os"
	"path/filepath"
	"sync"
	"testing"

	xdraw "golang.org/x/image/draw"

	"vetlens/engine/imageproc"
	"vetlens/engine/manifest"
	"vetlens/engine/ort"
	"vetlens/internal/config"
)

// TestModelsEnv points the model-backed tests at another models directory
// (for example a test double made by testdata/make_test_double.py) instead
// of the shipped ../../models.
const TestModelsEnv = "VETLENS_TEST_MODELS"

var (
	engineOnce sync.Once
	engineVal  *Engine
	engineErr  error
)

// testModelsDir returns the models directory the model-backed tests use:
// $VETLENS_TEST_MODELS or the shipped ../../models. It skips only while the
// manifest lists no cardiac models; the lead can turn that into a failure
// once models are shipped.
func testModelsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(TestModelsEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", "models")
	}
	m, err := manifest.Load(dir)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(m.ByRole(RoleValidity))+len(m.ByRole(RoleLandmark)) == 0 {
		t.Skipf("no cardiac models in %s/manifest.json yet; set %s to a test double from testdata/make_test_double.py to run this", dir, TestModelsEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// testEngine loads the cardiac models once per test binary. Any failure
// other than "no cardiac models yet" (missing ONNX Runtime, bad checksum,
// broken model) fails the test.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	dir := testModelsDir(t)
	engineOnce.Do(func() {
		if err := ort.Init("", config.ORTLibraryCandidates()...); err != nil {
			engineErr = err
			return
		}
		engineVal, engineErr = Load(dir, DefaultOptions())
	})
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engineVal
}

// testPhantom decodes one of the held-out phantom radiographs in
// testdata/phantoms.
func testPhantom(t testing.TB, name string) image.Image {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "phantoms", name))
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := imageproc.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// resized scales img to w x h (bilinear), changing its aspect ratio.
func resized(img image.Image, w, h int) image.Image {
	out := image.NewGray(image.Rect(0, 0, w, h))
	xdraw.BiLinear.Scale(out, out.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	return out
}

func TestPredictSizes(t *testing.T) {
	e := testEngine(t)
	src := testPhantom(t, "xraysim_3_1024x1024.jpg")
	for _, sz := range [][2]int{{1024, 1024}, {1600, 900}, {700, 1100}, {3000, 2000}, {32, 32}} {
		r, err := e.Predict(context.Background(), resized(src, sz[0], sz[1]), PredictOptions{Render: true})
		if err != nil {
			t.Fatal(err)
		}
		checkConsistent(t, r)
		if r.Width != sz[0] || r.Height != sz[1] || !r.Rejected && len(r.Rendered) == 0 {
			t.Errorf("%v: size %dx%d, rendered %d bytes", sz, r.Width, r.Height, len(r.Rendered))
		}
		t.Logf("%v: code %d %s p %.3f spread %v %s VHS %.2f VLAS %.2f axes at %.1f degrees", sz, r.Code, r.Guard, r.ClassifierConfidence, r.Spread, r.Confidence, r.Geometry.VHS, r.Geometry.VLAS, r.Geometry.AxisAngle)
	}
}
