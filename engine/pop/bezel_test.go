package pop

import (
	"image"
	"image/color"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// monitorScene renders a synthetic monitor photo: a background, the
// monitor's bezel (colour bezel), the active area (colour active) with an
// optional flat margin (colour margin, share of the active width) around a
// bright rectangle, warped by a mild perspective into a 960x720 frame. It
// returns the frame (BGR) and the active area's quad in frame pixels.
func monitorScene(t *testing.T, bg, bezel, active, margin color.RGBA, marginShare float64) (gocv.Mat, Quad) {
	t.Helper()
	const pw, ph, b, bb = 800, 500, 30, 50 // plane, bezel, bottom bezel
	plane := gocv.NewMatWithSizeFromScalar(gocv.NewScalar(float64(bezel.B), float64(bezel.G), float64(bezel.R), 0), ph+b+bb, pw+2*b, gocv.MatTypeCV8UC3)
	defer plane.Close()
	fill := func(x0, y0, x1, y1 int, c color.RGBA) {
		gocv.Rectangle(&plane, image.Rect(x0, y0, x1, y1), c, -1)
	}
	fill(b, b, b+pw, b+ph, active)
	m := int(marginShare * pw)
	if m > 0 {
		fill(b, b, b+pw, b+ph, margin)
	}
	// Content: a bright plate with a darker "heart" inside, inside the margin.
	fill(b+m+20, b+m+20, b+pw-m-20, b+ph-m-20, color.RGBA{170, 170, 170, 0})
	fill(b+pw/3, b+ph/3, b+pw/2, b+2*ph/3, color.RGBA{90, 90, 90, 0})
	src := Quad{{0, 0}, {float64(plane.Cols()), 0}, {float64(plane.Cols()), float64(plane.Rows())}, {0, float64(plane.Rows())}}
	dst := Quad{{120, 110}, {840, 80}, {850, 640}, {110, 600}}
	hm, err := HomographyFrom(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	sv := gocv.NewPoint2fVectorFromPoints([]gocv.Point2f{{X: 0, Y: 0}, {X: float32(src[1].X), Y: 0}, {X: float32(src[2].X), Y: float32(src[2].Y)}, {X: 0, Y: float32(src[3].Y)}})
	defer sv.Close()
	dv := gocv.NewPoint2fVectorFromPoints([]gocv.Point2f{{X: 120, Y: 110}, {X: 840, Y: 80}, {X: 850, Y: 640}, {X: 110, Y: 600}})
	defer dv.Close()
	tm := gocv.GetPerspectiveTransform2f(sv, dv)
	defer tm.Close()
	frame := gocv.NewMatWithSizeFromScalar(gocv.NewScalar(float64(bg.B), float64(bg.G), float64(bg.R), 0), 720, 960, gocv.MatTypeCV8UC3)
	gocv.WarpPerspectiveWithParams(plane, &frame, tm, image.Point{960, 720}, gocv.InterpolationLinear, gocv.BorderTransparent, color.RGBA{})
	gocv.GaussianBlur(frame, &frame, image.Point{3, 3}, 0.8, 0.8, gocv.BorderDefault)
	noise := gocv.NewMatWithSize(720, 960, gocv.MatTypeCV8UC3)
	defer noise.Close()
	gocv.RandN(&noise, gocv.NewScalar(0, 0, 0, 0), gocv.NewScalar(3, 3, 3, 0))
	gocv.Add(frame, noise, &frame)
	return frame, hm.ApplyQuad(Quad{{b, b}, {b + pw, b}, {b + pw, b + ph}, {b, b + ph}})
}

// The active area, not the monitor's outline or an edge inside the image,
// is what DetectCorners returns.
func TestActiveAreaInsideBezel(t *testing.T) {
	cases := []struct {
		name                      string
		bg, bezel, active, margin color.RGBA
		marginShare               float64
	}{
		{"grey bezel, dark image", color.RGBA{150, 140, 120, 0}, color.RGBA{60, 60, 60, 0}, color.RGBA{15, 15, 15, 0}, color.RGBA{}, 0},
		// Same brightness, different tint: only colour parts them.
		{"tinted bezel, equally dark image", color.RGBA{150, 140, 120, 0}, color.RGBA{12, 18, 40, 0}, color.RGBA{20, 20, 20, 0}, color.RGBA{}, 0},
		// A flat dark margin inside the active area: the margin's inner
		// edge is not the active area's.
		{"dark margin inside the image", color.RGBA{150, 140, 120, 0}, color.RGBA{40, 30, 20, 0}, color.RGBA{20, 20, 20, 0}, color.RGBA{5, 5, 5, 0}, 0.06},
		{"silver bezel", color.RGBA{60, 70, 90, 0}, color.RGBA{190, 190, 195, 0}, color.RGBA{25, 25, 25, 0}, color.RGBA{}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			frame, want := monitorScene(t, tc.bg, tc.bezel, tc.active, tc.margin, tc.marginShare)
			defer frame.Close()
			c, err := DetectCorners(frame)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Found {
				t.Fatalf("not found (confidence %.2f)", c.Confidence)
			}
			var e float64
			for i := range 4 {
				e = math.Max(e, dist(c.Screen[i], want[i]))
			}
			if e > 3 {
				t.Errorf("active area %v, want %v (worst corner %.1f px off)", c.Screen, want, e)
			}
		})
	}
}
