package pop

import (
	"math"
)

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
