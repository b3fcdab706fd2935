// Package cardiactest gives other packages' tests the cardiac engine's
// test phantoms: rendered radiographs from both generators
// (engine/cardiac/testdata/phantoms, made by make_phantoms.py) with their
// exact landmarks. It reads the files beside its own source, so it serves
// `go test` in a checkout, not a built binary.
package cardiactest

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

// Phantom is one test phantom and its truth.
type Phantom struct {
	// Name is the file's name in the phantom folder, e.g.
	// "xraysim_1_640x480.png"; Path is its full path.
	Name, Path string
	// Generator is "xraysim" (the simulator the models train on, seeds
	// never trained on) or "" (the first 2D generator, sim/phantom.py).
	Generator string
	// VHS and VLAS are the generator's own values for Landmarks.
	VHS, VLAS float64
	Landmarks cardiac.Landmarks
}

// Dir is the folder of the test phantoms and their truth.json.
func Dir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "testdata", "phantoms")
}

// Phantoms reads every test phantom's truth; the test fails if it cannot.
func Phantoms(t testing.TB) []Phantom {
	t.Helper()
	ps, err := read(Dir())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// Find is the phantom named name (e.g. "xraysim_1_640x480.png").
func Find(t testing.TB, name string) Phantom {
	t.Helper()
	for _, p := range Phantoms(t) {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no test phantom %s in %s", name, Dir())
	return Phantom{}
}

// Image decodes p's file.
func (p Phantom) Image(t testing.TB) image.Image {
	t.Helper()
	raw, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := imageproc.Decode(raw)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	return img
}

// Tilted writes p turned deg degrees counter-clockwise on screen
// (imageproc.RotateGray at full resolution, on a grown canvas) as a PNG
// in a temporary folder of t's and returns its path: a radiograph whose
// spine is tilted beyond what the models trained on.
func (p Phantom) Tilted(t testing.TB, deg float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("tilted_%+.0f_%s.png", deg, strings.TrimSuffix(p.Name, filepath.Ext(p.Name))))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, imageproc.RotateGray(p.Image(t), deg, 0).Image); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func read(dir string) ([]Phantom, error) {
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		return nil, fmt.Errorf("test phantoms: %w", err)
	}
	var truth struct {
		Phantoms []struct {
			File      string                `json:"file"`
			Generator string                `json:"generator"`
			VHS       float64               `json:"vhs"`
			VLAS      float64               `json:"vlas"`
			Landmarks map[string][2]float64 `json:"landmarks"`
		} `json:"phantoms"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		return nil, fmt.Errorf("test phantoms: truth.json: %w", err)
	}
	if len(truth.Phantoms) == 0 {
		return nil, fmt.Errorf("test phantoms: truth.json lists none")
	}
	out := make([]Phantom, 0, len(truth.Phantoms))
	for _, p := range truth.Phantoms {
		q := Phantom{Name: p.File, Path: filepath.Join(dir, p.File), Generator: p.Generator, VHS: p.VHS, VLAS: p.VLAS}
		for k, name := range cardiac.ClassNames {
			xy, ok := p.Landmarks[name]
			if !ok {
				return nil, fmt.Errorf("test phantoms: %s lacks %s", p.File, name)
			}
			q.Landmarks[k] = cardiac.Point{X: xy[0], Y: xy[1]}
		}
		out = append(out, q)
	}
	return out, nil
}
