package pop

import (
	"image"
	"image/color"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// edgeFieldsOf builds the fields the edge searches sample, as
// detectCorners does: the grey frame and the colour frame, each blurred
// 3 x 3.
func edgeFieldsOf(t *testing.T, frame gocv.Mat) (gray, field) {
	t.Helper()
	fg, err := blurredGrayOf(frame)
	if err != nil {
		t.Fatal(err)
	}
	c := gocv.NewMat()
	defer c.Close()
	gocv.GaussianBlur(frame, &c, image.Point{3, 3}, 0, 0, gocv.BorderDefault)
	cf, err := colourOf(c)
	if err != nil {
		t.Fatal(err)
	}
	return fg, cf
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
