// Package learntest holds test doubles of app/learn's ports for the
// tests of learn and of its callers (the Learning panel): models that
// measure a known truth exactly or shifted, a trainer that writes a
// models directory of the asked version (or blocks, or fails), and a pool
// of blank images with their truth.
package learntest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"vetlens/app/dogheart"
	"vetlens/app/learn"
	"vetlens/engine/cardiac"
)

// CardFile is the model card a models directory holds.
const CardFile = "CARDIAC_MODEL_CARD.md"

// WriteModelsDir writes a models directory whose manifest names only the
// cardiac family's version (enough for the fake models below).
func WriteModelsDir(dir, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	man := fmt.Sprintf(`{"families":{"cardiac":{"model_version":%q,"params":{}}},"models":[]}`, version)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(man), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, CardFile), []byte("# card\n"), 0o644)
}

// Truth maps an image's width to its truth, for the fake models:
// every test image has its own width.
type Truth map[int]cardiac.Landmarks

// Models measures the truth exactly with a clinic version and the
// truth shifted by Offset pixels with any other version; Broken versions
// fail the reference check.
type Models struct {
	// Truth is what the images hold; Offset how far (px) a version that
	// is not better places the heart's bottom.
	Truth  Truth
	Offset float64
	// Better says whether a version measures exactly (default: a
	// version with "-clinic." does).
	Better func(version string) bool
	// Broken is a version whose reference check fails.
	Broken string
	// PhantomWorse makes the better versions worse on the phantom set.
	PhantomWorse bool
	// Residual is how far (px) a better version still places the heart's
	// bottom (0: exactly).
	Residual float64
	// Wrong adds, for a better version, this many px to the heart's
	// bottom on the image of that width (a case it gets badly wrong).
	Wrong map[int]float64
	// Spread is the route's spread a version reports on the image of a
	// width (nil: 0 everywhere); Bound the versions' own spread bound
	// (0: none, +Inf).
	Spread func(width int) float64
	Bound  float64
}

// Open reads dir's cardiac version.
func (f Models) Open(dir string) (learn.Measurer, error) {
	v, err := learn.FamilyVersion(dir)
	if err != nil {
		return nil, err
	}
	better := strings.Contains(v, "-clinic.")
	if f.Better != nil {
		better = f.Better(v)
	}
	return measurer{f: f, version: v, better: better}, nil
}

// VerifyReference fails for the Broken version only.
func (f Models) VerifyReference(_ context.Context, dir string) (float64, error) {
	v, err := learn.FamilyVersion(dir)
	if err != nil {
		return 0, err
	}
	if v == f.Broken {
		return 0.5, fmt.Errorf("reference check: cardiac_landmark_1.onnx output landmarks differs by 0.5")
	}
	return 1e-7, nil
}

type measurer struct {
	f       Models
	version string
	better  bool
}

func (m measurer) Measure(_ context.Context, img image.Image) (learn.Reading, error) {
	l, ok := m.f.Truth[img.Bounds().Dx()]
	if !ok {
		return learn.Reading{}, fmt.Errorf("no truth for width %d", img.Bounds().Dx())
	}
	if m.better && m.f.PhantomWorse && img.Bounds().Dx() >= 2000 {
		l[cardiac.HeartBottom].Y += 3 * m.f.Offset
	}
	if !m.better {
		// Shift the heart's bottom: the long axis, so the VHS, changes.
		l[cardiac.HeartBottom].Y += m.f.Offset
	} else {
		l[cardiac.HeartBottom].Y += m.f.Residual + m.f.Wrong[img.Bounds().Dx()]
	}
	rd := learn.Reading{Raw: l, Code: cardiac.CodeHighConfidence}
	if m.f.Spread != nil {
		rd.Spread = m.f.Spread(img.Bounds().Dx())
	}
	return rd, nil
}
func (m measurer) ModelVersion() string { return m.version }
func (m measurer) SpreadBound() float64 {
	if m.f.Bound == 0 {
		return math.Inf(1)
	}
	return m.f.Bound
}
func (m measurer) Close() error { return nil }

// Trainer is a test double of the trainer port: it writes OUTDIR as
// a models directory of version VERSION (the fake models' layout), or
// blocks until cancelled, or fails, as configured.
type Trainer struct {
	// Block waits for ctx, leaving Out.partial behind as a crash would;
	// Started is closed when it starts waiting.
	Block   bool
	Started chan struct{}
	// Fail reports a trainer error; NoTorch a missing torch.
	Fail, NoTorch bool
	// MakePhantomsFunc writes the phantom set (Phantoms).
	MakePhantomsFunc func(dir string, n int) error
	// Specs, when set, collects the jobs asked for.
	Specs *[]learn.TrainSpec
	// Curve is the held-out curve written into train.json when the job
	// lists held-out cases (nil: Falling(4, 1.2, 0.6); NoCurve: none, as
	// an older trainer).
	Curve   []learn.CurvePoint
	NoCurve bool
}

// Falling is a held-out curve of n+1 points over steps 0..10n falling
// from first to last.
func Falling(n int, first, last float64) []learn.CurvePoint {
	pts := make([]learn.CurvePoint, n+1)
	for i := range pts {
		f := float64(i) / float64(n)
		pts[i] = learn.CurvePoint{Step: float64(10 * i), VHSMAE: first + (last-first)*f}
	}
	return pts
}

// Check fails with missing_torch when NoTorch.
func (f Trainer) Check(context.Context) (string, error) {
	if f.NoTorch {
		return "", &learn.TrainerError{Code: learn.CodeMissingTorch, Message: "apt install python3-torch python3-scipy python3-onnx"}
	}
	return "fake", nil
}

// Train writes Out as a models directory of the asked version.
func (f Trainer) Train(ctx context.Context, s learn.TrainSpec, progress func(learn.Progress)) error {
	if f.Specs != nil {
		*f.Specs = append(*f.Specs, s)
	}
	if _, err := os.Stat(s.Out); err == nil {
		return fmt.Errorf("out %s exists", s.Out)
	}
	progress(learn.Progress{Stage: "train", Member: 1, Step: 1, Steps: 2, Fraction: 0.5})
	if f.Block {
		os.MkdirAll(s.Out+".partial", 0o755)
		if f.Started != nil {
			close(f.Started)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	if f.Fail {
		return &learn.TrainerError{Code: "train_failed", Message: "loss is NaN"}
	}
	var b []byte
	if b, _ = os.ReadFile(s.CasesFile); len(b) == 0 {
		return fmt.Errorf("no cases file")
	}
	if err := WriteModelsDir(s.Out, s.Version); err != nil {
		return err
	}
	if s.EvalCasesFile == "" || f.NoCurve {
		return nil
	}
	var held []string
	if b, err := os.ReadFile(s.EvalCasesFile); err != nil || json.Unmarshal(b, &held) != nil {
		return fmt.Errorf("held-out cases file %s: %v", s.EvalCasesFile, err)
	}
	pts := f.Curve
	if pts == nil {
		pts = Falling(4, 1.2, 0.6)
	}
	b, err := json.Marshal(map[string]any{"version": s.Version, "heldout_curve": learn.Curve{Cases: len(held), Metric: "fake", Points: pts}})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Out, "train.json"), b, 0o644)
}

// MakePhantoms calls MakePhantomsFunc.
func (f Trainer) MakePhantoms(_ context.Context, dir string, n int) error {
	return f.MakePhantomsFunc(dir, n)
}

// WritePool writes n pool cases of blank images (distinct widths), each
// patient holding perPatient cases, and returns the truth by width.
func WritePool(t *testing.T, pool string, n, perPatient int, truth Truth) {
	t.Helper()
	side := dogheart.Sidecar{}
	for i := range n {
		w := 400 + len(truth)
		l := Plausible(float64(w), float64(i%7))
		truth[w] = l
		stem := fmt.Sprintf("case-%03d", i)
		if err := dogheart.WriteCase(pool, stem, blankPNG(t, w, 300), dogheart.SixPoints(l)); err != nil {
			t.Fatal(err)
		}
		vp := [2]float64{l[cardiac.VLASPoint].X, l[cardiac.VLASPoint].Y}
		vhs := cardiac.Measure(l).VHS
		side.Cases = append(side.Cases, dogheart.Provenance{Case: stem, Patient: fmt.Sprintf("p%03d", i/perPatient),
			Kind: []string{"edited", "manual"}[i%2], VLASPoint: &vp, VHS: &vhs})
	}
	if err := dogheart.WriteSidecar(pool, side); err != nil {
		t.Fatal(err)
	}
}

// Plausible is a heart of about 10 v in a w-wide image.
func Plausible(w, d float64) cardiac.Landmarks {
	x := w / 2
	return cardiac.Landmarks{{X: x, Y: 80}, {X: x + 20, Y: 200 + d}, {X: x - 50, Y: 150}, {X: x + 60, Y: 140},
		{X: x + 30, Y: 90}, {X: x - 40, Y: 40}, {X: x + 20, Y: 40}}
}

func blankPNG(t testing.TB, w, h int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 90
	}
	var b strings.Builder
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// Phantoms writes n blank phantoms (widths from 2000 up) with their
// truth.json, recording their truth.
func Phantoms(truth Truth) func(dir string, n int) error {
	return func(dir string, n int) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		type item struct {
			File       string                `json:"file"`
			Radiograph bool                  `json:"radiograph"`
			VHS        float64               `json:"vhs"`
			Landmarks  map[string][2]float64 `json:"landmarks"`
		}
		var items []item
		for i := range n {
			w := 2000 + i
			l := Plausible(float64(w), 3)
			truth[w] = l
			name := fmt.Sprintf("pos_%04d.png", i)
			img := image.NewGray(image.Rect(0, 0, w, 300))
			img.Set(0, 0, color.Gray{Y: 1})
			f, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			png.Encode(f, img)
			f.Close()
			it := item{File: name, Radiograph: true, VHS: cardiac.Measure(l).VHS, Landmarks: map[string][2]float64{}}
			for k, nm := range cardiac.ClassNames {
				it.Landmarks[nm] = [2]float64{l[k].X, l[k].Y}
			}
			items = append(items, it)
		}
		items = append(items, item{File: "neg_0000.jpg"})
		b, _ := json.Marshal(map[string]any{"items": items})
		return os.WriteFile(filepath.Join(dir, "truth.json"), b, 0o644)
	}
}

// Engine is a live engine (learn.Engine) that records being closed;
// Predict waits on Gate when it is set, after closing Entered if set.
type Engine struct {
	Version string
	Closed  atomic.Bool
	Gate    chan struct{}
	Entered chan struct{}
}

// Predict returns an empty result (an error once closed).
func (e *Engine) Predict(ctx context.Context, _ image.Image, _ cardiac.PredictOptions) (*cardiac.Result, error) {
	if e.Closed.Load() {
		return nil, errors.New("closed engine used")
	}
	if e.Entered != nil {
		close(e.Entered)
	}
	if e.Gate != nil {
		<-e.Gate
	}
	return &cardiac.Result{}, nil
}

// ModelVersion is Version.
func (e *Engine) ModelVersion() string { return e.Version }

// LandmarkModels is 5.
func (e *Engine) LandmarkModels() int { return 5 }

// Close marks the engine closed.
func (e *Engine) Close() error { e.Closed.Store(true); return nil }

// Loader loads an Engine of the version in dir.
func Loader(dir string) (learn.Engine, error) {
	v, err := learn.FamilyVersion(dir)
	if err != nil {
		return nil, err
	}
	return &Engine{Version: v}, nil
}

// Rig is a learn.Service on a temporary data directory with the
// doubles: shipped models of version v3.1.0-synthetic-xraysim.1, a pool
// of 48 cases (2 per patient) and a 5-image phantom set; its live engine
// is attached.
type Rig struct {
	Svc     *learn.Service
	Live    *learn.Live
	Layout  learn.Layout
	Shipped string
	Truth   Truth
	Models  Models
	// Registry records the active version (nil: a FileRegistry in
	// Layout).
	Registry learn.Registry
}

// NewRig builds a Rig with the trainer and models doubles.
func NewRig(t *testing.T, tr Trainer, m Models) *Rig {
	t.Helper()
	return NewRigOn(t, tr, m, nil)
}

// NewRigOn is NewRig recording the active version in reg (nil: a
// FileRegistry).
func NewRigOn(t *testing.T, tr Trainer, m Models, reg learn.Registry) *Rig {
	t.Helper()
	root := t.TempDir()
	r := &Rig{Layout: learn.Layout{Dir: filepath.Join(root, "learn")}, Shipped: filepath.Join(root, "models"), Truth: Truth{}, Registry: reg}
	if r.Registry == nil {
		r.Registry = learn.FileRegistry{Path: r.Layout.ActiveFile(), Versions: r.Layout.Versions()}
	}
	if err := WriteModelsDir(r.Shipped, "v3.1.0-synthetic-xraysim.1"); err != nil {
		t.Fatal(err)
	}
	WritePool(t, r.Layout.Pool(), 48, 2, r.Truth)
	m.Truth = r.Truth
	if m.Offset == 0 {
		m.Offset = 15
	}
	r.Models = m
	r.Live = learn.NewLive(&Engine{Version: "v3.1.0-synthetic-xraysim.1"}, r.Shipped)
	r.Svc = r.With(t, tr)
	return r
}

// With builds another Service on the rig's directories and live engine
// with the trainer tr (as another process would).
func (r *Rig) With(t *testing.T, tr Trainer) *learn.Service {
	t.Helper()
	if tr.MakePhantomsFunc == nil {
		tr.MakePhantomsFunc = Phantoms(r.Truth)
	}
	svc, err := learn.New(learn.Config{Layout: r.Layout, Shipped: r.Shipped, Trainer: tr, Models: r.Models, Phantoms: 5, Registry: r.Registry})
	if err != nil {
		t.Fatal(err)
	}
	svc.Attach(r.Live, Loader)
	return svc
}
