package cardiac

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"math"
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

// LoadORT is cardiacort.Load, which the model-backed tests load the
// engine with. Package cardiac's own tests cannot import cardiacort (it
// imports cardiac), so hook_test.go, an external test file in the same
// test binary, sets it when the binary starts, before any test runs.
var LoadORT func(dir string, o Options) (*Engine, error)

// loadORT is LoadORT, or an error where hook_test.go did not set it.
func loadORT(dir string, o Options) (*Engine, error) {
	if LoadORT == nil {
		return nil, errors.New("cardiac tests: LoadORT not set (hook_test.go sets it to cardiacort.Load)")
	}
	return LoadORT(dir, o)
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
		engineVal, engineErr = loadORT(dir, DefaultOptions())
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

// TestLoadColumnFactor: a model version whose manifest names its own
// column factor (ParamColumnVertebraFactor) is measured with it: the same
// models find the same column, and v, Vertebra B and VHS follow the
// factor (app/learn writes a clinic's fitted factor there; rollback
// restores the version's with its models).
func TestLoadColumnFactor(t *testing.T) {
	shipped := testEngine(t)
	src := testModelsDir(t)
	m, err := manifest.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := m.Family(Family)
	if err != nil {
		t.Fatal(err)
	}
	var params map[string]any
	if len(fam.Params) > 0 {
		if err := json.Unmarshal(fam.Params, &params); err != nil {
			t.Fatal(err)
		}
	}
	if params == nil {
		params = map[string]any{}
	}
	if params["route"] == string(RouteSpan) {
		t.Skip("the models under test are of the span route")
	}
	const factor = 1.05 * ColumnVertebraFactor
	params[ParamColumnVertebraFactor] = factor
	fam.Params, _ = json.Marshal(params)
	dir := t.TempDir()
	own := manifest.Manifest{Families: map[string]manifest.Family{Family: fam}}
	for _, role := range []string{RoleValidity, RoleLandmark, RoleRefine} {
		for _, e := range m.ByRole(role) {
			abs, err := filepath.Abs(m.Path(e))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, e.File)); err != nil {
				t.Fatal(err)
			}
			own.Models = append(own.Models, e)
		}
	}
	b, _ := json.Marshal(own)
	if err := os.WriteFile(filepath.Join(dir, manifest.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := loadORT(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if shipped.ColumnVertebraFactor() != ColumnVertebraFactor || e.ColumnVertebraFactor() != factor {
		t.Fatalf("factors %v and %v, want %v and %v", shipped.ColumnVertebraFactor(), e.ColumnVertebraFactor(), ColumnVertebraFactor, factor)
	}
	img := testPhantom(t, "xraysim_4_1400x900.jpg") // code 1 with the shipped models
	a, err := shipped.Predict(context.Background(), img, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z, err := e.Predict(context.Background(), img, PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Column == nil || z.Column == nil {
		t.Fatalf("no column: code %d %s, code %d %s", a.Code, a.Guard, z.Code, z.Guard)
	}
	if !a.Code.HasVHS() || !z.Code.HasVHS() || z.VHS == nil || *z.VHS != Round(z.Geometry.VHS, DecimalsScore) {
		t.Errorf("codes %d and %d: the returned VHS is not the one measured with the factor", a.Code, z.Code)
	}
	if a.Column.Period != z.Column.Period {
		t.Fatalf("periods %v and %v: the same models found another column", a.Column.Period, z.Column.Period)
	}
	if got := z.Column.V / z.Column.Period; math.Abs(got-factor) > 1e-12 {
		t.Errorf("v / period %.6f, want %.6f", got, factor)
	}
	if got, want := z.Geometry.VHS, a.Geometry.VHS*ColumnVertebraFactor/factor; math.Abs(got-want) > 1e-9 {
		t.Errorf("VHS %.4f with the version's factor, want %.4f (%.4f with the shipped one)", got, want, a.Geometry.VHS)
	}
	if got := z.Landmarks[VertebraA].Dist(z.Landmarks[VertebraB]) / 6; z.Code.HasVHS() && math.Abs(got-z.Column.V) > 1e-6 {
		t.Errorf("|A-B|/6 = %.3f, want v %.3f", got, z.Column.V)
	}
	t.Logf("VHS %.3f (code %d) with %.4f, %.3f (code %d) with %.4f", a.Geometry.VHS, a.Code, ColumnVertebraFactor, z.Geometry.VHS, z.Code, factor)
}
