package pop

import (
	"math"
)

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
