package pop

import (
	"image"
	"math"

	"gocv.io/x/gocv"
)

// Detection parameters. They were set by measurement on training
// composites (models/train/pop_composites.py, seeds POP_TRAIN_SEED_BASE);
// docs/pop.md has the figures.
const (
	// workSide is the long side, in pixels, of the copy candidates are
	// searched on.
	workSide = 800
	// minQuadShare is the smallest quad area, as a share of the frame, that
	// counts as a screen.
	minQuadShare = 0.04
	// minQuadAngle is the smallest interior angle (degrees) of a plausible
	// screen quad; 35 degrees of camera tilt keeps angles well above it.
	minQuadAngle = 40
	// edgeStep is the intensity step (grey levels across 2 pixels) an edge
	// sample needs to support a side.
	edgeStep = 8.0
	// FoundConfidence is the confidence at which corners count as found:
	// the API answers 422 below it.
	FoundConfidence = 0.6
	// SuspectConfidence is the confidence from which a colour photo counts
	// as showing a screen (PoP detected) even when the corners are not
	// found confidently; correction then fails with result code 7.
	SuspectConfidence = 0.3
)

// Corners is the result of corner detection.
type Corners struct {
	// Quad is the displayed image area, TL, TR, BR, BL, in pixels of the
	// frame. For a viewer window it is the image viewport inside it.
	Quad Quad
	// Screen is the monitor's whole active area (equal to Quad in full
	// screen mode).
	Screen Quad
	// Confidence is the share of edge samples along the screen's four sides
	// that found a clear edge on the fitted line (0..1).
	Confidence float64
	// Found is Confidence >= FoundConfidence.
	Found bool
	// Viewer is true when a viewer window's viewport was found inside the
	// screen.
	Viewer bool
	// Width and Height are the frame's size in pixels.
	Width, Height int
}

// DetectCorners finds the display area in a frame (8-bit BGR or grey Mat).
// It never fails on a valid Mat: no screen gives Found false and a low
// Confidence.
func DetectCorners(frame gocv.Mat) (Corners, error) {
	full := gocv.NewMat()
	defer full.Close()
	if frame.Channels() == 3 {
		gocv.CvtColor(frame, &full, gocv.ColorBGRToGray)
	} else {
		frame.CopyTo(&full)
	}
	W, H := full.Cols(), full.Rows()
	out := Corners{Width: W, Height: H}
	s := math.Min(1, workSide/float64(max(W, H)))
	small := gocv.NewMat()
	defer small.Close()
	if s < 1 {
		gocv.Resize(full, &small, image.Point{int(math.Round(float64(W) * s)), int(math.Round(float64(H) * s))}, 0, 0, gocv.InterpolationArea)
	} else {
		full.CopyTo(&small)
	}
	gocv.GaussianBlur(small, &small, image.Point{5, 5}, 0, 0, gocv.BorderDefault)
	sg, err := grayOf(small)
	if err != nil {
		return out, err
	}
	gocv.GaussianBlur(full, &full, image.Point{3, 3}, 0, 0, gocv.BorderDefault)
	fg, err := grayOf(full)
	if err != nil {
		return out, err
	}
	sx, sy := float64(W)/float64(sg.w), float64(H)/float64(sg.h)

	best, bestScore := Quad{}, 0.0
	for _, q := range candidates(small) {
		sup, _ := support(sg, q, 2.5, 0.5)
		score := sup * math.Sqrt(q.Area()/float64(sg.w*sg.h))
		if score > bestScore {
			best, bestScore = q, score
		}
	}
	if bestScore == 0 {
		return out, nil
	}
	for i := range best {
		best[i].X *= sx
		best[i].Y *= sy
	}
	q, conf := refine(fg, best, 1.5*math.Max(sx, sy)+2)
	q, conf = refine(fg, q, 2)
	if inner, ic, ok := insideBezel(fg, q); ok {
		q, conf = inner, ic
	}
	out.Screen, out.Quad, out.Confidence = q, q, conf
	out.Found = conf >= FoundConfidence && q.Convex() && q.minAngle() >= minQuadAngle
	if out.Found {
		if vp, ok := viewport(full, q); ok {
			out.Quad, out.Viewer = vp, true
		}
	}
	return out, nil
}

// candidates returns convex quads from the contours of the edge map and of
// an Otsu threshold of the blurred small grey image, in its pixel
// coordinates.
func candidates(small gocv.Mat) []Quad {
	var quads []Quad
	area := float64(small.Cols() * small.Rows())
	edges := gocv.NewMat()
	defer edges.Close()
	gocv.Canny(small, &edges, 20, 60)
	k := gocv.GetStructuringElement(gocv.MorphRect, image.Point{3, 3})
	defer k.Close()
	gocv.Dilate(edges, &edges, k)
	bin := gocv.NewMat()
	defer bin.Close()
	gocv.Threshold(small, &bin, 0, 255, gocv.ThresholdBinary|gocv.ThresholdOtsu)
	for _, src := range []gocv.Mat{edges, bin} {
		cs := gocv.FindContours(src, gocv.RetrievalList, gocv.ChainApproxSimple)
		for i := range cs.Size() {
			c := cs.At(i)
			if gocv.ContourArea(c) < minQuadShare*area {
				continue
			}
			peri := gocv.ArcLength(c, true)
			for _, eps := range []float64{0.02, 0.04} {
				if q, ok := quadOf(c, eps*peri); ok {
					quads = append(quads, q)
					break
				}
			}
			// A contour whose corners are broken by glare or clutter:
			// fall back to its convex hull.
			hull := gocv.NewMat()
			gocv.ConvexHull(c, &hull, true, true)
			hpts := gocv.NewPointVectorFromMat(hull)
			if q, ok := quadOf(hpts, 0.03*peri); ok {
				quads = append(quads, q)
			}
			hpts.Close()
			hull.Close()
		}
		cs.Close()
	}
	return quads
}

func quadOf(c gocv.PointVector, eps float64) (Quad, bool) {
	ap := gocv.ApproxPolyDP(c, eps, true)
	defer ap.Close()
	if ap.Size() != 4 {
		return Quad{}, false
	}
	var p [4]Point
	for i, v := range ap.ToPoints() {
		p[i] = Point{float64(v.X) + 0.5, float64(v.Y) + 0.5}
	}
	q := orderCorners(p)
	if !q.Convex() || q.minAngle() < minQuadAngle {
		return Quad{}, false
	}
	return q, true
}

// sideSamples is how many points each side is probed at.
const sideSamples = 40

// support probes each side of q at sideSamples points (the middle 80 % of
// the side), searching along the normal within +-r pixels (step st) for the
// strongest intensity step. It returns the share of probes with a step of
// at least edgeStep and, per side, the edge points found.
func support(g gray, q Quad, r, st float64) (float64, [4][]Point) {
	var pts [4][]Point
	n := 0
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		l := dist(a, b)
		if l < 1 {
			continue
		}
		dx, dy := (b.X-a.X)/l, (b.Y-a.Y)/l
		nx, ny := dy, -dx
		for k := range sideSamples {
			t := 0.1 + 0.8*(float64(k)+0.5)/sideSamples
			px, py := a.X+t*(b.X-a.X), a.Y+t*(b.Y-a.Y)
			bestO, bestG := 0.0, 0.0
			var gs []float64
			for o := -r; o <= r+1e-9; o += st {
				d := g.sample(px+(o+1)*nx, py+(o+1)*ny) - g.sample(px+(o-1)*nx, py+(o-1)*ny)
				gs = append(gs, math.Abs(d))
				if math.Abs(d) > bestG {
					bestO, bestG = o, math.Abs(d)
				}
			}
			if bestG < edgeStep {
				continue
			}
			// Parabolic sub-step peak.
			j := int(math.Round((bestO + r) / st))
			if j > 0 && j < len(gs)-1 {
				den := gs[j-1] - 2*gs[j] + gs[j+1]
				if den < 0 {
					bestO += st * 0.5 * (gs[j-1] - gs[j+1]) / den
				}
			}
			n++
			pts[i] = append(pts[i], Point{px + bestO*nx, py + bestO*ny})
		}
	}
	return float64(n) / (4 * sideSamples), pts
}

// refine moves each side of q onto the strongest nearby edge of g (within
// +-r pixels), fits a line to each side's edge points with one round of
// outlier rejection, and intersects adjacent lines. It returns the refined
// quad and its support on g.
func refine(g gray, q Quad, r float64) (Quad, float64) {
	_, pts := support(g, q, r, 0.5)
	var lines [4]line
	for i := range 4 {
		l, n := robustLine(pts[i], 1.5)
		if n < sideSamples/4 {
			return q, 0
		}
		lines[i] = l
	}
	var out Quad
	for i := range 4 {
		p, ok := intersect(lines[(i+3)%4], lines[i])
		if !ok {
			return q, 0
		}
		out[i] = p
	}
	if !out.Convex() {
		return q, 0
	}
	conf, _ := support(g, out, 1.5, 0.5)
	return out, conf
}

// Bezel search bounds: the active area's edge lies at most maxBezel (share
// of the quad's shorter side) inside the monitor's outline.
const (
	maxBezel = 0.18
	// maxBezelSpread is the largest grey-level spread (median absolute
	// deviation) of a bezel ring: a bezel is one flat colour.
	maxBezelSpread = 10.0
)

// insideBezel checks whether q is a monitor's outline with a flat bezel
// inside it, and if so returns the active area's quad: each side's first
// strong edge inward from q, fitted and refined like q, with its support.
func insideBezel(g gray, q Quad) (Quad, float64, bool) {
	short := math.Min(math.Min(dist(q[0], q[1]), dist(q[3], q[2])), math.Min(dist(q[0], q[3]), dist(q[1], q[2])))
	D := maxBezel * short
	var lines [4]line
	var ring []float64
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		l := dist(a, b)
		dx, dy := (b.X-a.X)/l, (b.Y-a.Y)/l
		nx, ny := -dy, dx // inward
		var pts []Point
		for k := range sideSamples {
			t := 0.1 + 0.8*(float64(k)+0.5)/sideSamples
			px, py := a.X+t*(b.X-a.X), a.Y+t*(b.Y-a.Y)
			// Leave the outline's own edge, then take the peak of the
			// first strong edge after it.
			left, peakO, peak := false, 0.0, 0.0
			for o := 1.0; o <= D; o += 0.5 {
				d := math.Abs(g.sample(px+(o+1)*nx, py+(o+1)*ny) - g.sample(px+(o-1)*nx, py+(o-1)*ny))
				if !left {
					left = d < edgeStep/2
					continue
				}
				if d >= edgeStep && d > peak {
					peakO, peak = o, d
				} else if peak > 0 && d < peak {
					break
				}
			}
			if peak > 0 {
				pts = append(pts, Point{px + peakO*nx, py + peakO*ny})
				ring = append(ring, g.sample(px+peakO/2*nx, py+peakO/2*ny))
			}
		}
		if len(pts) < sideSamples/3 {
			return q, 0, false
		}
		ln, n := robustLine(pts, 1.5)
		if n < sideSamples/3 {
			return q, 0, false
		}
		lines[i] = ln
	}
	m := median(ring)
	dev := make([]float64, len(ring))
	for i, v := range ring {
		dev[i] = math.Abs(v - m)
	}
	if median(dev) > maxBezelSpread {
		return q, 0, false
	}
	var in Quad
	for i := range 4 {
		p, ok := intersect(lines[(i+3)%4], lines[i])
		if !ok {
			return q, 0, false
		}
		in[i] = p
	}
	if !in.Convex() || in.minAngle() < minQuadAngle || in.Area() < 0.5*q.Area() {
		return q, 0, false
	}
	in, conf := refine(g, in, 1.5)
	if conf < FoundConfidence {
		return q, 0, false
	}
	return in, conf, true
}

// robustLine fits a line to points with outliers: of the lines through
// pairs of points it keeps the one with the most points within tol pixels,
// then refits those inliers by total least squares. It returns the line and
// the inlier count.
func robustLine(pts []Point, tol float64) (line, int) {
	best, bestN := line{}, 0
	step := max(1, len(pts)/20)
	for i := 0; i < len(pts); i += step {
		for j := i + 1; j < len(pts); j += step {
			l, ok := fitLine([]Point{pts[i], pts[j]})
			if !ok || dist(pts[i], pts[j]) < 1 {
				continue
			}
			n := 0
			for _, p := range pts {
				if l.dist(p) <= tol {
					n++
				}
			}
			if n > bestN {
				best, bestN = l, n
			}
		}
	}
	if bestN < 2 {
		return best, bestN
	}
	var in []Point
	for _, p := range pts {
		if best.dist(p) <= tol {
			in = append(in, p)
		}
	}
	l, _ := fitLine(in)
	return l, len(in)
}
