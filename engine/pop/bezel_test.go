package pop

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gocv.io/x/gocv"
)

// sceneSeed seeds the synthetic scenes' noise (the tests passed with seeds
// 0-9 when written).
const sceneSeed = 1

// monitorScene renders a synthetic monitor photo: a background, the
// monitor's bezel (colour bezel), the active area (colour active) with an
// optional flat margin (colour margin, share of the active width) around a
// bright rectangle, warped by a mild perspective into a 960x720 frame. It
// returns the frame (BGR) and the active area's quad in frame pixels.
func monitorScene(t *testing.T, bg, bezel, active, margin color.RGBA, marginShare float64) (gocv.Mat, Quad) {
	t.Helper()
	return renderMonitor(t, bg, bezel, func(fill func(x0, y0, x1, y1 int, c color.RGBA)) {
		fill(0, 0, 800, 500, active)
		m := int(marginShare * 800)
		if m > 0 {
			fill(0, 0, 800, 500, margin)
		}
		// A bright plate with a darker "heart", inside the margin.
		fill(m+20, m+20, 800-m-20, 500-m-20, color.RGBA{170, 170, 170, 0})
		fill(800/3, 500/3, 800/2, 2*500/3, color.RGBA{90, 90, 90, 0})
	}, Rect(800, 500))
}

// renderMonitor draws an 800x500 active area with draw (rectangles in
// active-area pixels) inside a bezel on a background, warps it into a
// 960x720 frame with a mild perspective, blurs and adds noise. It returns
// the frame and area (a quad in active-area pixels) mapped into the frame.
func renderMonitor(t *testing.T, bg, bezel color.RGBA, draw func(fill func(x0, y0, x1, y1 int, c color.RGBA)), area Quad) (gocv.Mat, Quad) {
	t.Helper()
	const pw, ph, b, bb = 800, 500, 30, 50 // plane, bezel, bottom bezel
	plane := gocv.NewMatWithSizeFromScalar(gocv.NewScalar(float64(bezel.B), float64(bezel.G), float64(bezel.R), 0), ph+b+bb, pw+2*b, gocv.MatTypeCV8UC3)
	defer plane.Close()
	draw(func(x0, y0, x1, y1 int, c color.RGBA) {
		gocv.Rectangle(&plane, image.Rect(b+x0, b+y0, b+x1, b+y1), c, -1)
	})
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
	// Sensor noise, sigma 3, from a fixed seed (OpenCV's RNG is per
	// thread, so gocv.RandN would differ between runs).
	px := frame.ToBytes()
	rng := rand.New(rand.NewPCG(sceneSeed, 1))
	for i, v := range px {
		px[i] = uint8(min(255, max(0, float64(v)+3*rng.NormFloat64()+0.5)))
	}
	noisy, err := gocv.NewMatFromBytes(720, 960, gocv.MatTypeCV8UC3, px)
	if err != nil {
		t.Fatal(err)
	}
	frame.Close()
	frame = noisy
	for i := range area {
		area[i].X += b
		area[i].Y += b
	}
	return frame, hm.ApplyQuad(area)
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
			assertActiveArea(t, frame, want, 3)
		})
	}
}

// viewerScene draws a viewer window: toolbar with icons, an optional
// thumbnail strip (thumbnails of various greys) and information panel,
// and a radiograph with a light margin in the viewport [vx0, vx1) x
// [vy0, vy1).
func viewerScene(t *testing.T, thumbs, info bool) (gocv.Mat, Quad) {
	t.Helper()
	const top, status = 45, 20
	vx0, vx1 := 0, 800
	if thumbs {
		vx0 = 120
	}
	if info {
		vx1 = 660
	}
	vy0, vy1 := top, 500-status
	base := color.RGBA{45, 45, 50, 0}
	draw := func(fill func(x0, y0, x1, y1 int, c color.RGBA)) {
		fill(0, 0, 800, 500, base)
		fill(0, 0, 800, top, color.RGBA{60, 60, 66, 0})
		for x := 10; x < 520; x += 40 {
			fill(x, 12, x+22, 34, color.RGBA{170, 175, 180, 0})
		}
		fill(0, 500-status, 800, 500, color.RGBA{35, 35, 40, 0})
		if thumbs {
			for i, y := 0, top+8; y+80 < vy1; i, y = i+1, y+90 {
				g := uint8(50 + 30*(i%3))
				fill(6, y, vx0-6, y+80, color.RGBA{150, 150, 160, 0})
				fill(7, y+1, vx0-7, y+79, color.RGBA{g, g, g, 0})
			}
		}
		if info {
			for y := top + 10; y < 300; y += 18 {
				fill(vx1+8, y, vx1+100, y+6, color.RGBA{150, 150, 150, 0})
			}
		}
		// The radiograph: a light margin around a dark film with a plate.
		fill(vx0, vy0, vx1, vy1, color.RGBA{190, 190, 190, 0})
		fill(vx0+25, vy0+25, vx1-25, vy1-25, color.RGBA{20, 20, 20, 0})
		fill(vx0+80, vy0+70, vx1-90, vy1-60, color.RGBA{140, 140, 140, 0})
	}
	return renderMonitor(t, color.RGBA{150, 140, 120, 0}, color.RGBA{30, 30, 30, 0}, draw,
		Quad{{float64(vx0), float64(vy0)}, {float64(vx1), float64(vy0)}, {float64(vx1), float64(vy1)}, {float64(vx0), float64(vy1)}})
}

// The viewport of a viewer window, not the radiograph's own margin or a
// panel, is what DetectCorners returns.
func TestViewerViewport(t *testing.T) {
	cases := []struct {
		name         string
		thumbs, info bool
	}{
		{"toolbar and status bar only", false, false},
		{"thumbnail strip", true, false},
		{"information panel", false, true},
		{"thumbnails and information panel", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			frame, want := viewerScene(t, tc.thumbs, tc.info)
			defer frame.Close()
			c, err := DetectCorners(frame)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Found || !c.Viewer {
				t.Fatalf("found %v, viewer %v (confidence %.2f)", c.Found, c.Viewer, c.Confidence)
			}
			e := worstCorner(c.Quad, want)
			// The viewport is searched on the screen rectified to 640
			// pixels wide: about 1.4 frame pixels per rectified pixel.
			if e > 5 {
				t.Errorf("viewport %v, want %v (worst corner %.1f px off)", c.Quad, want, e)
			}
		})
	}
}

// A radiograph shown full screen with a light top margin that carries
// burned-in text (a clinic name, a side marker) is not a viewer window:
// a toolbar's icons run along most of its width, the text does not.
func TestFullScreenMarginIsNotToolbar(t *testing.T) {
	cases := []struct {
		name string
		// text blocks in the top margin: x ranges in active-area pixels
		text [][2]int
	}{
		{"clinic name at the left", [][2]int{{16, 230}}},
		{"clinic name at the right", [][2]int{{480, 720}}},
		{"clinic name and side marker", [][2]int{{16, 230}, {560, 640}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			draw := func(fill func(x0, y0, x1, y1 int, c color.RGBA)) {
				fill(0, 0, 800, 500, color.RGBA{20, 20, 20, 0})
				fill(0, 0, 800, 40, color.RGBA{200, 200, 200, 0})
				for _, r := range tc.text {
					// Letters: 9 px strokes every 14 px.
					for x := r[0]; x+9 <= r[1]; x += 14 {
						fill(x, 12, x+9, 28, color.RGBA{60, 60, 60, 0})
					}
				}
				fill(120, 110, 680, 440, color.RGBA{150, 150, 150, 0})
				fill(300, 200, 450, 360, color.RGBA{90, 90, 90, 0})
			}
			frame, want := renderMonitor(t, color.RGBA{150, 140, 120, 0}, color.RGBA{50, 50, 50, 0}, draw, Rect(800, 500))
			defer frame.Close()
			c, err := DetectCorners(frame)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Found || c.Viewer {
				t.Fatalf("found %v, viewer %v (confidence %.2f), want a full-screen image", c.Found, c.Viewer, c.Confidence)
			}
			e := worstCorner(c.Quad, want)
			if e > 3 {
				t.Errorf("display area %v, want %v (worst corner %.1f px off)", c.Quad, want, e)
			}
		})
	}
}

// assertActiveArea fails unless DetectCorners finds the monitor's active
// area in frame with every corner within tol pixels of want.
func assertActiveArea(t *testing.T, frame gocv.Mat, want Quad, tol float64) {
	t.Helper()
	c, err := DetectCorners(frame)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Found {
		t.Fatalf("not found (confidence %.2f)", c.Confidence)
	}
	if e := worstCorner(c.Screen, want); e > tol {
		t.Errorf("active area %v, want %v (worst corner %.1f px off)", c.Screen, want, e)
	}
}

// worstCorner is the largest distance between corresponding corners.
func worstCorner(got, want Quad) float64 {
	var e float64
	for i := range 4 {
		e = math.Max(e, dist(got[i], want[i]))
	}
	return e
}
