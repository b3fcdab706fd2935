package cardiactest

import (
	"math"
	"os"
	"testing"

	"vetlens/engine/cardiac"
)

// TestPhantoms: both generators' phantoms are listed with files that
// exist, and the engine's geometry on each phantom's landmarks gives the
// generator's own VHS and VLAS (so the landmark order was read right).
func TestPhantoms(t *testing.T) {
	byGen := map[string]int{}
	for _, p := range Phantoms(t) {
		byGen[p.Generator]++
		if _, err := os.Stat(p.Path); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		g := cardiac.Measure(p.Landmarks)
		if math.Abs(g.VHS-p.VHS) > 1e-6 || math.Abs(g.VLAS-p.VLAS) > 1e-6 {
			t.Errorf("%s: VHS %v VLAS %v from the landmarks, truth says %v %v", p.Name, g.VHS, g.VLAS, p.VHS, p.VLAS)
		}
	}
	if byGen["xraysim"] == 0 || byGen[""] == 0 {
		t.Errorf("phantoms per generator %v, want both", byGen)
	}
	if p := Find(t, "xraysim_1_640x480.png"); p.Image(t).Bounds().Dx() != 640 {
		t.Errorf("xraysim_1_640x480.png decodes to %v", p.Image(t).Bounds())
	}
}
