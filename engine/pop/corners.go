package pop

import (
	"image"
	"math"

	"gocv.io/x/gocv"
)

// Detection parameters. They were set by measurement on training
// composites (models/train/pop/composites.py, seeds POP_TRAIN_SEED_BASE);
// docs/pop.md has the method, experiments/2026-pop-journal.md the figures.
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
func DetectCorners(frame gocv.Mat) (Corners, error) { return detectCorners(frame, nil, 0) }

// detectCorners is DetectCorners; with a prior quad (frame pixels) only
// candidates whose mean corner distance to it is within tol (a share of
// the frame diagonal) are considered: the learned finder's coarse quad
// picks the screen among the edges, the classical fit places it exactly.
func detectCorners(frame gocv.Mat, prior *Quad, tol float64) (Corners, error) {
	sc, err := newScene(frame)
	defer sc.close()
	if err != nil {
		return Corners{Width: frame.Cols(), Height: frame.Rows()}, err
	}
	return sc.detect(prior, tol), nil
}

// scene is a frame prepared for the classical search: the grey frame
// blurred 3 x 3 (full, fg), a copy of long side workSide blurred 5 x 5
// (small, sg), the colour field (cf) and the candidate quads, found once
// and searched again with a prior (the learned finder's guided search)
// without preparing the frame twice. close releases its Mats.
type scene struct {
	// colour is the colour frame blurred 3 x 3 (empty for a grey frame).
	// sg, fg and cf view the Mats' memory (grayView): valid until close.
	full, small, colour gocv.Mat
	sg, fg              gray
	cf                  field
	w, h                int
	// s is small's scale; sx, sy map small pixels to frame pixels.
	s, sx, sy float64
	cands     []Quad
	lines     []Quad
	linesDone bool
}

// newScene prepares frame (8-bit BGR or grey) for detect. The caller
// closes the scene, also on error.
func newScene(frame gocv.Mat) (*scene, error) {
	sc := &scene{full: gocv.NewMat(), small: gocv.NewMat(), colour: gocv.NewMat(), w: frame.Cols(), h: frame.Rows()}
	if frame.Channels() == 3 {
		gocv.CvtColor(frame, &sc.full, gocv.ColorBGRToGray)
	} else {
		frame.CopyTo(&sc.full)
	}
	W, H := sc.w, sc.h
	sc.s = math.Min(1, workSide/float64(max(W, H)))
	if sc.s < 1 {
		gocv.Resize(sc.full, &sc.small, image.Point{int(math.Round(float64(W) * sc.s)), int(math.Round(float64(H) * sc.s))}, 0, 0, gocv.InterpolationArea)
	} else {
		sc.full.CopyTo(&sc.small)
	}
	gocv.GaussianBlur(sc.small, &sc.small, image.Point{5, 5}, 0, 0, gocv.BorderDefault)
	var err error
	if sc.sg, err = grayView(sc.small); err != nil {
		return sc, err
	}
	gocv.GaussianBlur(sc.full, &sc.full, image.Point{3, 3}, 0, 0, gocv.BorderDefault)
	if sc.fg, err = grayView(sc.full); err != nil {
		return sc, err
	}
	sc.sx, sc.sy = float64(W)/float64(sc.sg.w), float64(H)/float64(sc.sg.h)
	sc.cf = sc.fg
	if frame.Channels() == 3 {
		gocv.GaussianBlur(frame, &sc.colour, image.Point{3, 3}, 0, 0, gocv.BorderDefault)
		c, err := colourView(sc.colour)
		if err != nil {
			return sc, err
		}
		sc.cf = c
	}
	sc.cands = candidates(sc.small)
	return sc, nil
}

// close releases the scene's Mats (nil-safe).
func (sc *scene) close() {
	if sc == nil {
		return
	}
	sc.full.Close()
	sc.small.Close()
	sc.colour.Close()
}

// lineCands returns the quads of straight edge segments, found on first
// use.
func (sc *scene) lineCands() []Quad {
	if !sc.linesDone {
		sc.lines, sc.linesDone = lineCandidates(sc.small, sc.sg), true
	}
	return sc.lines
}

// detect is the classical search on the scene (see detectCorners).
func (sc *scene) detect(prior *Quad, tol float64) Corners {
	W, H := sc.w, sc.h
	sg, fg, cf, sx, sy := sc.sg, sc.fg, sc.cf, sc.sx, sc.sy
	out := Corners{Width: W, Height: H}
	// locate scores candidates (small-image pixels) by edge support times
	// the square root of their area share, refines the best one at full
	// resolution and places the active area around it.
	near := func(q Quad) bool {
		if prior == nil {
			return true
		}
		var d float64
		for i := range 4 {
			d += math.Hypot(q[i].X*sx-prior[i].X, q[i].Y*sy-prior[i].Y) / 4
		}
		return d <= tol*math.Hypot(float64(W), float64(H))
	}
	locate := func(cands []Quad) (Quad, float64) {
		best, bestScore := Quad{}, 0.0
		for _, q := range cands {
			if !near(q) {
				continue
			}
			sup, _ := support(sg, q, 2.5, 0.5, edgeStep)
			score := sup * math.Sqrt(q.Area()/float64(sg.w*sg.h))
			if score > bestScore {
				best, bestScore = q, score
			}
		}
		if bestScore == 0 {
			return Quad{}, 0
		}
		for i := range best {
			best[i].X *= sx
			best[i].Y *= sy
		}
		q, conf := refine(fg, best, 1.5*math.Max(sx, sy)+2, edgeStep)
		q, conf = refine(fg, q, 2, edgeStep)
		return activeArea(cf, q, conf)
	}
	found := func(q Quad, conf float64) bool {
		return conf >= FoundConfidence && q.Convex() && q.minAngle() >= minQuadAngle
	}
	q, conf := locate(sc.cands)
	if !found(q, conf) {
		// No closed contour made it: try quads of straight edge segments.
		if lq, lc := locate(sc.lineCands()); lc > conf {
			q, conf = lq, lc
		}
	}
	if prior != nil && !found(q, conf) {
		// No candidate near the learned quad made it (a dark bezel on a
		// dark room, a stand or a desk edge joined to the screen's
		// contour): fit the screen's edges starting from the learned
		// quad itself.
		if sq, c := seeded(fg, cf, *prior, math.Hypot(float64(W), float64(H))); c > conf && near(sq.Scale(sc.s)) {
			q, conf = sq, c
		}
	}
	if conf == 0 {
		return out
	}
	out.Screen, out.Quad, out.Confidence = q, q, conf
	out.Found = found(q, conf)
	if out.Found {
		if vp, ok := viewport(sc.full, q); ok {
			out.Quad, out.Viewer = vp, true
		}
	}
	return out
}

// seedReach is how far (share of the frame diagonal) the seeded fit
// looks for each side's edge around the learned quad: about twice the
// learned screen corners' typical error. keepMargin is how far inside the
// frame (share of the diagonal) a learned side must lie for the seeded
// fit to keep it when that side shows no edge.
const seedReach, keepMargin = 0.04, 0.02

// seeded fits the screen's edges at full resolution starting from the
// learned screen quad prior (frame pixels): coarse to fine (within
// seedReach of the diagonal, then 1.5 % of it, then 2 pixels), and then
// places the active area among the nested quads around it (activeArea),
// as the classical search does with its best candidate. One side without
// an edge keeps the learned side when it lies inside the frame. It
// returns the quad and its edge support (0 when no fit).
func seeded(fg gray, cf field, prior Quad, diag float64) (Quad, float64) {
	q, conf := prior, 0.0
	// One side with no edge (a black letterbox bar on a black room)
	// keeps the learned side, when that lies inside the frame by
	// keepMargin: a side at the frame's edge may be the screen running
	// out of the picture.
	m := keepMargin * diag
	inside := func(p Point) bool {
		return p.X > m && p.Y > m && p.X < float64(fg.w)-m && p.Y < float64(fg.h)-m
	}
	canKeep := func(a, b Point) bool { return inside(a) && inside(b) }
	for _, r := range []float64{seedReach * diag, 0.015 * diag, 2} {
		if q, conf = refineKeeping(fg, q, r, edgeStep, canKeep); conf == 0 {
			return prior, 0
		}
	}
	return activeArea(cf, q, conf)
}

// candidates returns convex quads from the contours of two edge maps (weak
// and strong Canny thresholds) and of an Otsu threshold of the blurred small grey image, in its pixel
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
	strong := gocv.NewMat()
	defer strong.Close()
	gocv.Canny(small, &strong, 50, 150)
	gocv.Dilate(strong, &strong, k)
	bin := gocv.NewMat()
	defer bin.Close()
	gocv.Threshold(small, &bin, 0, 255, gocv.ThresholdBinary|gocv.ThresholdOtsu)
	for _, src := range []gocv.Mat{edges, strong, bin} {
		cs := gocv.FindContours(src, gocv.RetrievalList, gocv.ChainApproxSimple)
		for i := range cs.Size() {
			c := cs.At(i)
			if gocv.ContourArea(c) < minQuadShare*area {
				continue
			}
			peri := gocv.ArcLength(c, true)
			for _, eps := range []float64{0.02, 0.04, 0.07} {
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
