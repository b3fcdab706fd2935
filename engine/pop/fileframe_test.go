package pop

import (
	"image/color"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// rotQuad is a w x h rectangle centred at (cx, cy), rotated by deg degrees.
func rotQuad(cx, cy, w, h, deg float64) Quad {
	s, c := math.Sincos(deg * math.Pi / 180)
	var q Quad
	for i, p := range Rect(w, h) {
		x, y := p.X-w/2, p.Y-h/2
		q[i] = Point{cx + c*x - s*y, cy + s*x + c*y}
	}
	return q
}

func TestFrameSides(t *testing.T) {
	const W, H = 1000, 800
	cases := []struct {
		name string
		q    Quad
		want int
		file bool
	}{
		{"border 10 px", Quad{{10, 10}, {990, 10}, {990, 790}, {10, 790}}, 4, true},
		{"fitted border, 0.1 degree off", Quad{{10.2, 10}, {990, 11.5}, {990.5, 790}, {9.5, 789.4}}, 4, true},
		{"collimation 12 %", Quad{{120, 90}, {880, 90}, {880, 710}, {120, 710}}, 4, true},
		{"border on three sides, an edge inside the image on the fourth", Quad{{10, 10}, {990, 10}, {990, 790}, {10, 500}}, 3, true},
		{"border on two sides", Quad{{10, 120}, {990, 80}, {990, 700}, {10, 650}}, 2, false},
		{"on the grid, far from the edges (a small frontal screen)", Quad{{300, 250}, {700, 250}, {700, 550}, {300, 550}}, 0, false},
		{"near the edges, rolled 1 degree", rotQuad(500, 400, 900, 700, 1), 0, false},
		{"photographed with perspective", Quad{{60, 40}, {950, 80}, {930, 760}, {40, 790}}, 0, false},
	}
	for _, tc := range cases {
		c := Corners{Screen: tc.q, Quad: tc.q, Confidence: 1, Width: W, Height: H}
		if got := c.FrameSides(); got != tc.want || c.FileFrame() != tc.file {
			t.Errorf("%s: FrameSides %d, FileFrame %v; want %d, %v", tc.name, got, c.FileFrame(), tc.want, tc.file)
		}
	}
	if n := (Corners{Width: W, Height: H}).FrameSides(); n != 0 {
		t.Errorf("no quad: FrameSides %d", n)
	}
}

// A plain radiograph file as viewers export it is not a screen photo:
// testdata/tinted_radiograph.png (make_fixtures.sh: a phantom cropped
// tight through the body, a blue display tint, a 3 px dark border), as
// PNG, re-saved as JPEG, and framed by a 10 px light border. The tint
// passes the colour gate and the border's inner edge is a confident quad,
// so the file-frame rule is what must stop it.
func TestTintedRadiographFile(t *testing.T) {
	src, err := DecodeFrame(readFrame(t, "testdata/tinted_radiograph.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	jpg, err := EncodeJPEG(src, 75)
	if err != nil {
		t.Fatal(err)
	}
	fromJPEG, err := DecodeFrame(jpg)
	if err != nil {
		t.Fatal(err)
	}
	defer fromJPEG.Close()
	light := gocv.NewMat()
	defer light.Close()
	gocv.CopyMakeBorder(src, &light, 10, 10, 10, 10, gocv.BorderConstant, color.RGBA{255, 255, 255, 0})
	for _, tc := range []struct {
		name string
		m    gocv.Mat
	}{{"png", src}, {"jpeg 75", fromJPEG}, {"light border", light}} {
		a, err := Analyze(tc.m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: chroma %.1f, confidence %.2f, frame sides %d", tc.name, a.Chroma, a.Corners.Confidence, a.Corners.FrameSides())
		if a.Chroma < MinChroma {
			t.Errorf("%s: chroma %.2f under MinChroma: the fixture no longer tests the file-frame rule", tc.name, a.Chroma)
		}
		if a.PoPDetected || a.Corrected {
			t.Errorf("%s: tinted radiograph file read as a screen photo (confidence %.2f, quad %v)", tc.name, a.Corners.Confidence, a.Corners.Screen)
		}
		if a.Corners.Confidence >= SuspectConfidence && !a.FileFrame {
			t.Errorf("%s: a screen candidate (confidence %.2f) that is not the file's frame", tc.name, a.Corners.Confidence)
		}
	}
}
