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

// sideSamples is how many points each side is probed at.
const sideSamples = 40

// support probes each side of q at sideSamples points (the middle 80 % of
// the side), searching along the normal within +-r pixels (step st) for the
// strongest intensity step. It returns the share of probes with a step of
// at least minStep and, per side, the edge points found.
func support(g field, q Quad, r, st, minStep float64) (float64, [4][]Point) {
	var pts [4][]Point
	var buf stepBuf
	var gs []float64
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
			gs = stepProfile(g, px, py, nx, ny, -r, r+1e-9, st, 1, gs[:0], &buf)
			for j, d := range gs {
				if d > bestG {
					bestO, bestG = buf.offs[j], d
				}
			}
			if bestG < minStep {
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
// outlier rejection, and intersects adjacent lines; edge samples need a
// step of minStep. It returns the refined
// quad and its support on g.
func refine(g field, q Quad, r, minStep float64) (Quad, float64) {
	return refineKeeping(g, q, r, minStep, nil)
}

// refineKeeping is refine, except that one side without a supported edge
// may keep q's side when canKeep (non-nil) allows that side.
func refineKeeping(g field, q Quad, r, minStep float64, canKeep func(a, b Point) bool) (Quad, float64) {
	_, pts := support(g, q, r, 0.5, minStep)
	var lines [4]line
	kept := 0
	for i := range 4 {
		l, n := robustLine(pts[i], 1.5)
		if n < sideSamples/4 {
			a, b := q[i], q[(i+1)%4]
			if kept++; kept > 1 || canKeep == nil || !canKeep(a, b) {
				return q, 0
			}
			l, _ = fitLine([]Point{a, b})
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
	conf, _ := support(g, out, 1.5, 0.5, minStep)
	return out, conf
}

// Bezel search bounds: the active area's edge lies at most maxBezel (share
// of the quad's shorter side) inside the monitor's outline.
const (
	maxBezel = 0.18
	// maxBezelSpread is the largest spread (median absolute deviation, grey
	// levels, in any channel) of a bezel ring: a bezel is one flat colour.
	maxBezelSpread = 10.0
	// innerStep is the intensity step that marks the active area's edge
	// inside a bezel; lower than edgeStep because the bezel is flat, and a
	// dark radiograph on a dark bezel leaves only a faint edge.
	innerStep = 4.0
	// profHalf is the half-width, in profile samples (st = 0.5 px), of
	// the step taken on a side's averaged profile: 2 px, wide enough for
	// an edge smeared by the perspective's change of bezel width along
	// the side.
	profHalf = 4
	// probeHalf and probeWin: each probe measures the step between points
	// probeHalf pixels either side, within probeWin pixels of the
	// averaged edge offset.
	probeHalf, probeWin = 1.0, 3.0
	// maxRingSteps is how many flat rings activeArea walks outward from
	// the best quad: an edge inside the image (a dark margin), the active
	// area, the monitor's outline.
	maxRingSteps = 2
)

// activeArea places the monitor's active area among the nested quads
// around the best-supported quad q (support conf). Displays are nested
// rectangles: the monitor's outline, a flat bezel, the active area, and
// often a flat dark margin of the image inside it. The outline is the
// outermost quad with a flat ring inside it, and the active area is the
// first edge inside that ring. So: walk outward from q while a flat ring
// with another edge around it exists; if q had such a ring around it, the
// quad just inside the outermost one is the active area; if not, q is the
// outline (or the bezel is not visible) and the active area is the next
// edge inward when a flat ring separates it from q.
func activeArea(f field, q Quad, conf float64) (Quad, float64) {
	chain, confs := []Quad{q}, []float64{conf}
	for range maxRingSteps {
		o, oc, ok := ringEdge(f, chain[len(chain)-1], -1)
		if !ok {
			break
		}
		chain, confs = append(chain, o), append(confs, oc)
	}
	if n := len(chain); n > 1 {
		return chain[n-2], confs[n-2]
	}
	if inner, ic, ok := ringEdge(f, q, 1); ok {
		return inner, ic
	}
	return q, conf
}

// ringEdge looks from each side of q in direction dir (+1 inward, -1
// outward) for the next edge parallel to it, at most maxBezel of q's
// shorter side away, with a flat ring of one colour between (a bezel). It
// returns the quad of those edges, fitted and refined like q, with its
// support, when at least three sides show the edge, the ring is flat and
// the quad is plausible.
func ringEdge(f field, q Quad, dir float64) (Quad, float64, bool) {
	short := math.Min(math.Min(dist(q[0], q[1]), dist(q[3], q[2])), math.Min(dist(q[0], q[3]), dist(q[1], q[2])))
	D := maxBezel * short
	const st = 0.5
	nc := f.nch()
	type side struct {
		a, b   Point
		nx, ny float64 // normal in the search direction
		o0     float64 // edge offset; -1 when not seen
	}
	var sides [4]side
	at := func(sd side, k int) (float64, float64) {
		t := 0.1 + 0.8*(float64(k)+0.5)/sideSamples
		return sd.a.X + t*(sd.b.X-sd.a.X), sd.a.Y + t*(sd.b.Y-sd.a.Y)
	}
	var v [3]float64
	seen := 0
	nProf := int(D/st) + 3
	prof := make([][3]float64, nProf)
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		l := dist(a, b)
		sd := side{a: a, b: b, nx: -dir * (b.Y - a.Y) / l, ny: dir * (b.X - a.X) / l, o0: -1}
		// The next edge runs parallel to the side: average the profile
		// along the side to find its offset.
		clear(prof)
		for k := range sideSamples {
			px, py := at(sd, k)
			for j := range nProf {
				o := float64(j) * st
				f.values(px+o*sd.nx, py+o*sd.ny, &v)
				for c := range nc {
					prof[j][c] += v[c] / sideSamples
				}
			}
		}
		stepAt := func(j int) float64 {
			hi, lo := prof[min(j+profHalf, nProf-1)], prof[max(j-profHalf, 0)]
			d := 0.0
			for c := range nc {
				d = math.Max(d, math.Abs(hi[c]-lo[c]))
			}
			return d
		}
		// Find q's own edge peak (within 2 pixels of the profile step's
		// reach), walk down it past half its height (the step's plateau
		// can be bumpy with noise) to the first local minimum, then take
		// the next peak.
		j, pk := 0, 0.0
		for k := 0; k <= profHalf+4 && k < nProf; k++ {
			if d := stepAt(k); d > pk {
				j, pk = k, d
			}
		}
		for j < nProf-3 && stepAt(j) > pk/2 {
			j++
		}
		for j < nProf-3 && stepAt(j+1) <= stepAt(j) {
			j++
		}
		peakJ, peak := -1, 0.0
		for ; j < nProf-2; j++ {
			if d := stepAt(j); d >= innerStep && d > peak {
				peakJ, peak = j, d
			} else if peak > 0 && d < peak {
				break
			}
		}
		if peakJ >= 0 {
			sd.o0 = float64(peakJ) * st
			seen++
		}
		sides[i] = sd
	}
	if seen < 3 {
		return q, 0, false
	}
	// A side whose edge is invisible (a black image on a black bezel):
	// left and right bezels are alike, the top one is like the sides, and
	// the bottom one is usually thicker, so it takes the top's width as
	// the least it can be.
	off := func(i int) float64 { return sides[i].o0 }
	for i := range sides {
		if sides[i].o0 >= 0 {
			continue
		}
		switch i {
		case 0: // top: the mean of left and right (both seen: seen >= 3)
			sides[0].o0 = (off(1) + off(3)) / 2
		case 2: // bottom: the top
			sides[2].o0 = off(0)
		case 1, 3:
			sides[i].o0 = sides[4-i].o0
		}
	}
	var lines [4]line
	var ring [3][]float64
	var buf stepBuf
	var ds []float64
	measured := 0
	for i, sd := range sides {
		var pts []Point
		for k := range sideSamples {
			px, py := at(sd, k)
			bestO, bestD := 0.0, 0.0
			ds = stepProfile(f, px, py, sd.nx, sd.ny, sd.o0-probeWin, sd.o0+probeWin, st, probeHalf, ds[:0], &buf)
			for j, d := range ds {
				if d > bestD {
					bestO, bestD = buf.offs[j], d
				}
			}
			if bestD >= innerStep {
				pts = append(pts, Point{px + bestO*sd.nx, py + bestO*sd.ny})
			}
			f.values(px+sd.o0/2*sd.nx, py+sd.o0/2*sd.ny, &v)
			for c := range nc {
				ring[c] = append(ring[c], v[c])
			}
		}
		if ln, n := robustLine(pts, 1.5); n >= sideSamples/3 {
			lines[i] = ln
			measured++
			continue
		}
		// Not measurable: q's side shifted by the offset.
		ln, _ := fitLine([]Point{{sd.a.X + sd.o0*sd.nx, sd.a.Y + sd.o0*sd.ny}, {sd.b.X + sd.o0*sd.nx, sd.b.Y + sd.o0*sd.ny}})
		lines[i] = ln
	}
	if measured < 3 {
		return q, 0, false
	}
	for c := range nc {
		m := median(ring[c])
		dev := make([]float64, len(ring[c]))
		for i, v := range ring[c] {
			dev[i] = math.Abs(v - m)
		}
		if median(dev) > maxBezelSpread {
			return q, 0, false
		}
	}
	var e Quad
	for i := range 4 {
		p, ok := intersect(lines[(i+3)%4], lines[i])
		if !ok {
			return q, 0, false
		}
		e[i] = p
	}
	inner, outer := e, q
	if dir < 0 {
		inner, outer = q, e
	}
	if !e.Convex() || e.minAngle() < minQuadAngle || inner.Area() < 0.5*outer.Area() {
		return q, 0, false
	}
	if measured == 4 {
		r, conf := refine(f, e, 1.5, innerStep)
		if conf < FoundConfidence {
			return q, 0, false
		}
		return r, conf, true
	}
	conf, _ := support(f, e, 1.5, 0.5, innerStep)
	return e, conf, conf >= FoundConfidence
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
