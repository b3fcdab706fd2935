package pop

import (
	"image/color"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// edgeFieldsOf is the fields the edge searches sample, from the classical
// scene itself (newScene): the grey frame and the colour frame, each
// blurred 3 x 3. They view the scene's Mats, closed when the test ends.
func edgeFieldsOf(t *testing.T, frame gocv.Mat) (gray, field) {
	t.Helper()
	sc, err := newScene(frame)
	t.Cleanup(sc.close)
	if err != nil {
		t.Fatal(err)
	}
	return sc.fg, sc.cf
}

// TestSeededFit: started from a learned screen quad a few per cent of the
// diagonal off (the learned corners' typical error), the seeded edge fit
// lands on the active area within 1.5 pixels (as the classical fit
// does from its own candidate); started on a flat background
// it finds no supported quad. The scene: a silver bezel around a black
// active area showing a bright plate.
func TestSeededFit(t *testing.T) {
	frame, truth := monitorScene(t, color.RGBA{200, 190, 170, 0}, color.RGBA{150, 150, 155, 0}, color.RGBA{20, 20, 20, 0}, color.RGBA{}, 0)
	defer frame.Close()
	fg, cf := edgeFieldsOf(t, frame)
	diag := math.Hypot(float64(frame.Cols()), float64(frame.Rows()))
	move := func(q Quad, d [4]Point) Quad {
		for i := range q {
			q[i].X += d[i].X
			q[i].Y += d[i].Y
		}
		return q
	}
	for _, tc := range []struct {
		name  string
		prior Quad
		found bool
	}{
		{"exact prior", truth, true},
		{"shifted 2 % of the diagonal", move(truth, [4]Point{{20, -14}, {20, -14}, {20, -14}, {20, -14}}), true},
		{"corners off 1-3.5 % each way", move(truth, [4]Point{{-30, 12}, {14, 25}, {-20, -38}, {9, -16}}), true},
		{"no screen there: flat background", Quad{{10, 650}, {100, 650}, {100, 710}, {10, 710}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, conf := seeded(fg, cf, tc.prior, diag)
			if !tc.found {
				if conf >= FoundConfidence {
					t.Fatalf("found a quad with support %.2f on a flat background: %v", conf, q)
				}
				return
			}
			if conf < FoundConfidence {
				t.Fatalf("support %.2f < %.2f", conf, FoundConfidence)
			}
			if e := meanQuadDist(q, truth); e > 1.5 {
				t.Fatalf("mean corner error %.2f px: got %v, want %v", e, q, truth)
			}
		})
	}
}

// TestSeededKeepsOneSide: one side of the screen without any edge (a
// bright image running into an equally bright band) keeps the learned
// side when that lies inside the frame, and the other three are fitted;
// a side that would be kept at the frame's edge, or two sides without an
// edge, give no fit.
func TestSeededKeepsOneSide(t *testing.T) {
	const w, h = 800, 600
	// A bright screen (200) on a dark room (40) spanning x 200-600,
	// y 150-450; band is the part of the frame left of the screen that is
	// as bright as the screen (no left edge), from x = bandFrom.
	scene := func(bandFrom, bottomTo int) gray {
		g := gray{w: w, h: h, pix: make([]uint8, w*h)}
		for y := range h {
			for x := range w {
				v := uint8(40)
				if (x >= 200 && x < 600 || x >= bandFrom && x < 200) && y >= 150 && y < bottomTo {
					v = 200
				}
				g.pix[y*w+x] = v
			}
		}
		return g
	}
	truth := Quad{{200, 150}, {600, 150}, {600, 450}, {200, 450}}
	diag := math.Hypot(w, h)
	off := func(q Quad, dx, dy float64) Quad {
		for i := range q {
			q[i].X += dx
			q[i].Y += dy
		}
		return q
	}
	for _, tc := range []struct {
		name     string
		g        gray
		prior    Quad
		found    bool
		wantLeft float64 // the left side's x (kept from the prior)
	}{
		{"left edge missing, prior inside: kept", scene(100, 450), off(truth, 12, -9), true, 212},
		{"all four edges: fitted", scene(200, 450), off(truth, 12, -9), true, 200},
		{"left side kept at the frame's edge: no fit", scene(0, 450), Quad{{10, 141}, {612, 141}, {612, 441}, {10, 441}}, false, 0},
		{"left and bottom edges missing: no fit", scene(100, h), off(truth, 12, -9), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, conf := seeded(tc.g, tc.g, tc.prior, diag)
			if !tc.found {
				if conf > 0 {
					t.Fatalf("fitted %v with support %.2f", q, conf)
				}
				return
			}
			if conf < FoundConfidence {
				t.Fatalf("support %.2f < %.2f (%v)", conf, FoundConfidence, q)
			}
			want := truth
			want[0].X, want[3].X = tc.wantLeft, tc.wantLeft
			if e := meanQuadDist(q, want); e > 1 {
				t.Fatalf("got %v, want %v (mean corner error %.2f px)", q, want, e)
			}
		})
	}
}
