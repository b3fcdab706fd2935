package learn

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/engine/cardiac"
	"vetlens/internal/dogheart"
)

// writeModelsDir writes a models directory whose manifest names only the
// cardiac family's version (enough for the fake models below).
func writeModelsDir(dir, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	man := fmt.Sprintf(`{"families":{"cardiac":{"model_version":%q,"params":{}}},"models":[]}`, version)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(man), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, cardFile), []byte("# card\n"), 0o644)
}

// truthBySize maps an image's width to its truth, for the fake models:
// every test image has its own width.
type truthBySize map[int]cardiac.Landmarks

// fakeModels measures the truth exactly with a clinic version and the
// truth shifted by Offset pixels with any other version; Broken versions
// fail the reference check.
type fakeModels struct {
	truth  truthBySize
	offset float64
	// better says whether a version measures exactly (default: a
	// version with "-clinic." does).
	better func(version string) bool
	broken string
	// phantomWorse makes the better versions worse on the phantom set.
	phantomWorse bool
}

func (f fakeModels) Open(dir string) (Measurer, error) {
	v, err := familyVersion(dir)
	if err != nil {
		return nil, err
	}
	better := strings.Contains(v, "-clinic.")
	if f.better != nil {
		better = f.better(v)
	}
	return fakeMeasurer{f: f, version: v, better: better}, nil
}

func (f fakeModels) VerifyReference(_ context.Context, dir string) (float64, error) {
	v, err := familyVersion(dir)
	if err != nil {
		return 0, err
	}
	if v == f.broken {
		return 0.5, fmt.Errorf("reference check: cardiac_landmark_1.onnx output landmarks differs by 0.5")
	}
	return 1e-7, nil
}

type fakeMeasurer struct {
	f       fakeModels
	version string
	better  bool
}

func (m fakeMeasurer) Measure(_ context.Context, img image.Image) (Reading, error) {
	l, ok := m.f.truth[img.Bounds().Dx()]
	if !ok {
		return Reading{}, fmt.Errorf("no truth for width %d", img.Bounds().Dx())
	}
	if m.better && m.f.phantomWorse && img.Bounds().Dx() >= 2000 {
		l[cardiac.HeartBottom].Y += 3 * m.f.offset
	}
	if !m.better {
		// Shift the heart's bottom: the long axis, so the VHS, changes.
		l[cardiac.HeartBottom].Y += m.f.offset
	}
	return Reading{Raw: l, Code: cardiac.CodeHighConfidence}, nil
}
func (m fakeMeasurer) ModelVersion() string { return m.version }
func (m fakeMeasurer) Close() error         { return nil }

// fakeTrainer is a test double of the trainer port: it writes OUTDIR as
// a models directory of version VERSION (the fake models' layout), or
// blocks until cancelled, or fails, as configured.
type fakeTrainer struct {
	block    bool // wait for ctx, leaving Out.partial behind as a crash would
	fail     bool
	noTorch  bool
	phantoms func(dir string, n int) error
	specs    *[]TrainSpec
	started  chan struct{}
}

func (f fakeTrainer) Check(context.Context) (string, error) {
	if f.noTorch {
		return "", &TrainerError{Code: CodeMissingTorch, Message: "apt install python3-torch python3-scipy python3-onnx"}
	}
	return "fake", nil
}

func (f fakeTrainer) Train(ctx context.Context, s TrainSpec, progress func(Progress)) error {
	if f.specs != nil {
		*f.specs = append(*f.specs, s)
	}
	if _, err := os.Stat(s.Out); err == nil {
		return fmt.Errorf("out %s exists", s.Out)
	}
	progress(Progress{Stage: "train", Member: 1, Step: 1, Steps: 2, Fraction: 0.5})
	if f.block {
		os.MkdirAll(s.Out+".partial", 0o755)
		if f.started != nil {
			close(f.started)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	if f.fail {
		return &TrainerError{Code: "train_failed", Message: "loss is NaN"}
	}
	var b []byte
	if b, _ = os.ReadFile(s.CasesFile); len(b) == 0 {
		return fmt.Errorf("no cases file")
	}
	return writeModelsDir(s.Out, s.Version)
}

func (f fakeTrainer) MakePhantoms(_ context.Context, dir string, n int) error { return f.phantoms(dir, n) }

// testPool writes n pool cases of blank images (distinct widths), each
// patient holding perPatient cases, and returns the truth by width.
func testPool(t *testing.T, pool string, n, perPatient int, truth truthBySize) {
	t.Helper()
	side := dogheart.Sidecar{}
	for i := range n {
		w := 400 + len(truth)
		l := plausible(float64(w), float64(i%7))
		truth[w] = l
		stem := fmt.Sprintf("case-%03d", i)
		var six [6][2]float64
		for j, k := range dogheart.SpecOrder {
			six[j] = [2]float64{l[k].X, l[k].Y}
		}
		if err := dogheart.WriteCase(pool, stem, blankPNG(t, w, 300), six); err != nil {
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

// plausible is a heart of about 10 v in a w-wide image.
func plausible(w, d float64) cardiac.Landmarks {
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

// fakePhantoms writes n blank phantoms (widths from 2000 up) with their
// truth.json, recording their truth.
func fakePhantoms(truth truthBySize) func(dir string, n int) error {
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
			l := plausible(float64(w), 3)
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
