package pop

import (
	"math"
	"sort"

	"gocv.io/x/gocv"
)

// Line-segment candidates: the second candidate source, for monitors whose
// outline merges with the background or with the image's own edges, so
// that no closed four-sided contour survives. Straight edge segments
// (probabilistic Hough transform on a Canny map) are grouped into lines,
// and quads are formed from two mostly horizontal and two mostly vertical
// lines. Parameters were set on development composites (seeds
// 31,000,000+; docs/pop.md).
const (
	// houghVotes is the accumulator threshold of HoughLinesP (edge pixels
	// on a segment).
	houghVotes = 30
	// minSegShare is the shortest segment, as a share of the work image's
	// shorter side.
	minSegShare = 0.05
	// houghGap is the largest gap (pixels) bridged within one segment.
	houghGap = 6
	// segAngleTol (degrees) and segDistTol (pixels): segments this close
	// in direction and offset belong to one line.
	segAngleTol, segDistTol = 3.0, 3.0
	// linesPerClass is how many lines, longest first, of each class
	// (mostly horizontal, mostly vertical) are combined into quads.
	linesPerClass = 10
	// minSideCover is the least share of each quad side that its line's
	// segments must cover.
	minSideCover = 0.25
	// maxLineQuads is how many line quads, best covered first, go on to
	// the support score.
	maxLineQuads = 30
	// maxFrameSpread is the largest difference (grey levels) between the
	// four sides' median grey just inside or just outside a line quad:
	// one of the two is a bezel, one flat colour all round. A quad mixing
	// a monitor's sides with a desk or furniture edge has neither.
	maxFrameSpread = 10.0
	// frameOff is the strip, in work-image pixels from the side, where
	// that grey is sampled.
	frameOff0, frameOff1 = 2.0, 5.0
)

// segLine is a group of collinear segments: the fitted line, its unit
// direction, the segments as intervals of the projection on the
// direction (merged, sorted) and their total length.
type segLine struct {
	l      line
	dx, dy float64
	iv     [][2]float64
	length float64
}

// proj is the position of p along the line's direction.
func (s *segLine) proj(p Point) float64 { return p.X*s.dx + p.Y*s.dy }

// cover is the length of [t0, t1] covered by the line's segments.
func (s *segLine) cover(t0, t1 float64) float64 {
	if t0 > t1 {
		t0, t1 = t1, t0
	}
	c := 0.0
	for _, v := range s.iv {
		if lo, hi := math.Max(v[0], t0), math.Min(v[1], t1); hi > lo {
			c += hi - lo
		}
	}
	return c
}

// lineCandidates returns convex quads, in the pixel coordinates of the
// blurred small grey image, whose four sides lie on straight edge
// segments covering at least minSideCover of each side; the best covered
// maxLineQuads.
func lineCandidates(small gocv.Mat, g gray) []Quad {
	w, h := float64(small.Cols()), float64(small.Rows())
	edges := gocv.NewMat()
	defer edges.Close()
	gocv.Canny(small, &edges, 20, 60)
	segs := gocv.NewMat()
	defer segs.Close()
	gocv.HoughLinesPWithParams(edges, &segs, 1, math.Pi/180, houghVotes, float32(minSegShare*math.Min(w, h)), houghGap)
	type seg struct{ a, b Point }
	var ss []seg
	for i := range segs.Rows() {
		v := segs.GetVeciAt(i, 0)
		if len(v) < 4 {
			continue
		}
		ss = append(ss, seg{Point{float64(v[0]) + 0.5, float64(v[1]) + 0.5}, Point{float64(v[2]) + 0.5, float64(v[3]) + 0.5}})
	}
	sort.Slice(ss, func(i, j int) bool { return dist(ss[i].a, ss[i].b) > dist(ss[j].a, ss[j].b) })
	// Group: each segment joins the first (longest-seeded) group whose
	// line it follows, else seeds a new one.
	type group struct {
		l    line
		segs []seg
	}
	var gs []*group
	cosTol := math.Cos(segAngleTol * math.Pi / 180)
	for _, s := range ss {
		l := dist(s.a, s.b)
		dx, dy := (s.b.X-s.a.X)/l, (s.b.Y-s.a.Y)/l
		joined := false
		for _, g := range gs {
			// The group line's direction is (b, -a).
			if math.Abs(dx*g.l.b-dy*g.l.a) >= cosTol && g.l.dist(s.a) <= segDistTol && g.l.dist(s.b) <= segDistTol {
				g.segs = append(g.segs, s)
				joined = true
				break
			}
		}
		if !joined {
			fl, _ := fitLine([]Point{s.a, s.b})
			gs = append(gs, &group{l: fl, segs: []seg{s}})
		}
	}
	var horiz, vert []*segLine
	for _, g := range gs {
		// Refit on points along the segments (weighted by length).
		var pts []Point
		for _, s := range g.segs {
			n := max(2, int(dist(s.a, s.b)/8))
			for k := range n {
				t := float64(k) / float64(n-1)
				pts = append(pts, Point{s.a.X + t*(s.b.X-s.a.X), s.a.Y + t*(s.b.Y-s.a.Y)})
			}
		}
		fl, ok := fitLine(pts)
		if !ok {
			continue
		}
		sl := &segLine{l: fl, dx: fl.b, dy: -fl.a}
		for _, s := range g.segs {
			t0, t1 := sl.proj(s.a), sl.proj(s.b)
			if t0 > t1 {
				t0, t1 = t1, t0
			}
			sl.iv = append(sl.iv, [2]float64{t0, t1})
		}
		sort.Slice(sl.iv, func(i, j int) bool { return sl.iv[i][0] < sl.iv[j][0] })
		merged := sl.iv[:1]
		for _, v := range sl.iv[1:] {
			if last := &merged[len(merged)-1]; v[0] <= last[1] {
				last[1] = math.Max(last[1], v[1])
			} else {
				merged = append(merged, v)
			}
		}
		sl.iv = merged
		for _, v := range sl.iv {
			sl.length += v[1] - v[0]
		}
		if math.Abs(sl.dx) >= math.Abs(sl.dy) {
			horiz = append(horiz, sl)
		} else {
			vert = append(vert, sl)
		}
	}
	keep := func(ls []*segLine) []*segLine {
		sort.Slice(ls, func(i, j int) bool { return ls[i].length > ls[j].length })
		return ls[:min(len(ls), linesPerClass)]
	}
	horiz, vert = keep(horiz), keep(vert)
	// Position of a horizontal line at the centre column, of a vertical
	// one at the centre row: which of a pair is top (left).
	yAt := func(s *segLine) float64 { return (s.l.c - s.l.a*w/2) / s.l.b }
	xAt := func(s *segLine) float64 { return (s.l.c - s.l.b*h/2) / s.l.a }
	type scored struct {
		q Quad
		s float64
	}
	var out []scored
	area := w * h
	mx, my := 0.02*w, 0.02*h
	for i := range horiz {
		for j := i + 1; j < len(horiz); j++ {
			top, bot := horiz[i], horiz[j]
			if yAt(top) > yAt(bot) {
				top, bot = bot, top
			}
			for k := range vert {
				for m := k + 1; m < len(vert); m++ {
					left, right := vert[k], vert[m]
					if xAt(left) > xAt(right) {
						left, right = right, left
					}
					sides := [4]*segLine{top, right, bot, left}
					var q Quad
					ok := true
					for c := range 4 {
						p, good := intersect(sides[(c+3)%4].l, sides[c].l)
						if !good || p.X < -mx || p.X > w+mx || p.Y < -my || p.Y > h+my {
							ok = false
							break
						}
						q[c] = p
					}
					if !ok || q.Area() < minQuadShare*area || !q.Convex() || q.minAngle() < minQuadAngle {
						continue
					}
					cov, minCov := 0.0, 1.0
					for c := range 4 {
						a, b := q[c], q[(c+1)%4]
						f := sides[c].cover(sides[c].proj(a), sides[c].proj(b)) / dist(a, b)
						cov += f / 4
						minCov = math.Min(minCov, f)
					}
					if minCov < minSideCover || !framed(g, q) {
						continue
					}
					out = append(out, scored{q, cov * math.Sqrt(q.Area()/area)})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].s > out[j].s })
	quads := make([]Quad, 0, min(len(out), maxLineQuads))
	for _, s := range out[:min(len(out), maxLineQuads)] {
		quads = append(quads, s.q)
	}
	return quads
}

// framed reports whether the strip just inside q, or the one just
// outside, has about the same median grey on all four sides (a bezel).
func framed(g gray, q Quad) bool {
	in, out := frameSpread(g, q)
	return math.Min(in, out) <= maxFrameSpread
}

// frameSpread is the spread (max - min) of the four sides' median grey in
// the strip just inside q and in the strip just outside.
func frameSpread(g gray, q Quad) (float64, float64) {
	var in, out [4]float64
	vs := make([]float64, 0, 4*sideSamples)
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		l := dist(a, b)
		// Inward normal for a clockwise (image coordinates) quad.
		nx, ny := -(b.Y-a.Y)/l, (b.X-a.X)/l
		for d, m := range []*[4]float64{&in, &out} {
			sgn := 1.0 - 2*float64(d)
			vs = vs[:0]
			for k := range sideSamples {
				t := 0.1 + 0.8*(float64(k)+0.5)/sideSamples
				px, py := a.X+t*(b.X-a.X), a.Y+t*(b.Y-a.Y)
				for o := frameOff0; o <= frameOff1; o++ {
					vs = append(vs, g.sample(px+sgn*o*nx, py+sgn*o*ny))
				}
			}
			m[i] = median(vs)
		}
	}
	spread := func(v [4]float64) float64 {
		lo, hi := v[0], v[0]
		for _, x := range v[1:] {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		return hi - lo
	}
	return spread(in), spread(out)
}
