package cardiac

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// phantomTruth is testdata/phantoms/truth.json: held-out phantoms from the
// trainer's generator (models/train/phantom.py, heldout=True, seeds never
// used in training) with their exact landmarks in pixels.
type phantomTruth struct {
	Phantoms []struct {
		File      string                `json:"file"`
		Width     int                   `json:"width"`
		Height    int                   `json:"height"`
		VHS       float64               `json:"vhs"`
		VLAS      float64               `json:"vlas"`
		Landmarks map[string][2]float64 `json:"landmarks"`
	} `json:"phantoms"`
}

func loadPhantoms(t *testing.T) phantomTruth {
	t.Helper()
	b, err := os.ReadFile("testdata/phantoms/truth.json")
	if err != nil {
		t.Fatal(err)
	}
	var pt phantomTruth
	if err := json.Unmarshal(b, &pt); err != nil {
		t.Fatal(err)
	}
	if len(pt.Phantoms) == 0 {
		t.Fatal("no phantoms")
	}
	return pt
}

func truthLandmarks(t *testing.T, m map[string][2]float64) Landmarks {
	t.Helper()
	var l Landmarks
	for k, name := range ClassNames {
		p, ok := m[name]
		if !ok {
			t.Fatalf("truth lacks %s", name)
		}
		l[k] = Point{p[0], p[1]}
	}
	return l
}

// TestPhantomTruthGeometry: the engine's geometry on the generator's exact
// landmarks reproduces the generator's own VHS and VLAS, so trainer and
// engine agree on the landmark convention.
func TestPhantomTruthGeometry(t *testing.T) {
	for _, p := range loadPhantoms(t).Phantoms {
		g := Measure(truthLandmarks(t, p.Landmarks))
		if math.Abs(g.VHS-p.VHS) > 1e-6 || math.Abs(g.VLAS-p.VLAS) > 1e-6 {
			t.Errorf("%s: VHS %v VLAS %v, generator says %v %v", p.File, g.VHS, g.VLAS, p.VHS, p.VLAS)
		}
	}
}

// Phantom sanity bounds for the shipped models. They are looser than the
// acceptance figures (VHS MAE <= 0.25 on 300+ phantoms, `make eval`): this
// catches convention errors (axes swapped, wrong landmark order, letterbox
// mapping), not small accuracy regressions.
const (
	phantomMaxVHSError  = 1.5
	phantomMeanVHSError = 0.6
)

// TestPhantomAccuracy measures the held-out phantoms end to end (decode,
// validity, ensemble, geometry) with the shipped models.
func TestPhantomAccuracy(t *testing.T) {
	e := testEngine(t)
	if strings.HasPrefix(e.ModelVersion(), "test-double") {
		t.Skip("untrained test double models: accuracy is meaningless")
	}
	var sum float64
	pt := loadPhantoms(t)
	for _, p := range pt.Phantoms {
		b, err := os.ReadFile(filepath.Join("testdata", "phantoms", p.File))
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.PredictBytes(context.Background(), b, PredictOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.File, err)
		}
		checkConsistent(t, r)
		if !r.Code.HasVHS() {
			t.Errorf("%s: code %d (p_radiograph %.3f), want a VHS", p.File, r.Code, r.ClassifierConfidence)
			sum += phantomMaxVHSError
			continue
		}
		truth := truthLandmarks(t, p.Landmarks)
		var lmErr float64
		for k := range truth {
			lmErr += r.Landmarks[k].Dist(truth[k]) / float64(max(p.Width, p.Height)) / NumLandmarks
		}
		d := math.Abs(r.Geometry.VHS - p.VHS)
		sum += d
		t.Logf("%s: VHS %.2f (truth %.2f) VLAS %.2f (truth %.2f) code %d spread %.4f mean landmark error %.4f",
			p.File, r.Geometry.VHS, p.VHS, r.Geometry.VLAS, p.VLAS, r.Code, r.Spread, lmErr)
		if d > phantomMaxVHSError {
			t.Errorf("%s: VHS error %.2f", p.File, d)
		}
	}
	if mean := sum / float64(len(pt.Phantoms)); mean > phantomMeanVHSError {
		t.Errorf("mean VHS error %.2f over %d phantoms", mean, len(pt.Phantoms))
	}
}
