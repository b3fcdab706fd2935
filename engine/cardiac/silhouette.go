package cardiac

import "math"

// Silhouette measurement: the heart's axes from a probability map of its
// projected silhouette, by the rule the simulator applies to the exact
// silhouette (models/train/sim/xraysim.py heart_landmarks; mirrored by
// models/train/cardiac/train_silhouette.py axes_from_mask, which these functions
// must keep equal to).
const (
	// silhouetteUpsample is how many samples per map pixel the edge is
	// found at (bilinear, as PyTorch's align_corners=False upsampling).
	silhouetteUpsample = 2
	// silhouetteThreshold is the probability at which a sample is heart.
	silhouetteThreshold = 0.5
	// silhouetteMinSamples is the least number of heart samples a map
	// needs to be measured.
	silhouetteMinSamples = 50
	// silhouetteMinBand is the least number of heart samples the short
	// axis' band needs.
	silhouetteMinBand = 20
	// shortAxisFrom and shortAxisTo bound where along the long axis the
	// widest perpendicular chord is looked for (shares of its length).
	shortAxisFrom, shortAxisTo = 0.25, 0.8
	// doubtLow and doubtHigh bound a soft probability for SilhouetteDoubt.
	doubtLow, doubtHigh = 0.2, 0.8
)

// HeartAxes are the silhouette's long-axis end and short-axis ends, and
// how sure its map was of the heart.
type HeartAxes struct {
	Bottom, Right, Left Point
	// Doubt is the map's SilhouetteDoubt (0 where not measured).
	Doubt float64
}

// SilhouetteDoubt is the silhouette map's own doubt U: the share of its
// heart pixels (p > 0.2) that are soft (0.2 < p < 0.8); 0 for a crisp
// map, and 1 for an empty one (no silhouette is no certainty). It
// mirrors models/train/cardiac/train_silhouette.py soft_share.
func SilhouetteDoubt(prob []float32) float64 {
	var heart, soft int
	for _, p := range prob {
		if p > doubtLow {
			heart++
			if p < doubtHigh {
				soft++
			}
		}
	}
	if heart == 0 {
		return 1
	}
	return float64(soft) / float64(heart)
}

// SilhouetteAxes measures the heart on prob, a size x size map of the
// heart's probability at pixel centres (row-major), given the carina top
// in the map's pixels: the apex is the silhouette's point farthest from
// top, and the short axis the widest chord perpendicular to the long axis
// between 25 % and 80 % of its length. ok is false for a map with too
// little heart, a long axis under 4 pixels or no chord in the band.
func SilhouetteAxes(prob []float32, size int, top Point) (HeartAxes, bool) {
	if size <= 0 || len(prob) != size*size {
		return HeartAxes{}, false
	}
	up := silhouetteUpsample
	n := size * up
	src := make([]struct {
		i0, i1 int
		w      float64
	}, n)
	for j := range src {
		s := (float64(j)+0.5)/float64(up) - 0.5
		if s < 0 {
			s = 0
		}
		i0 := int(s)
		i1 := min(i0+1, size-1)
		src[j].i0, src[j].i1, src[j].w = i0, i1, s-float64(i0)
	}
	var xs, ys []float64
	for r := 0; r < n; r++ {
		sy := src[r]
		row0, row1 := prob[sy.i0*size:(sy.i0+1)*size], prob[sy.i1*size:(sy.i1+1)*size]
		for c := 0; c < n; c++ {
			sx := src[c]
			a := float64(row0[sx.i0])*(1-sx.w) + float64(row0[sx.i1])*sx.w
			b := float64(row1[sx.i0])*(1-sx.w) + float64(row1[sx.i1])*sx.w
			if a*(1-sy.w)+b*sy.w > silhouetteThreshold {
				xs = append(xs, (float64(c)+0.5)/float64(up))
				ys = append(ys, (float64(r)+0.5)/float64(up))
			}
		}
	}
	if len(xs) < silhouetteMinSamples {
		return HeartAxes{}, false
	}
	far, best := 0, -1.0
	for i := range xs {
		if d := (xs[i]-top.X)*(xs[i]-top.X) + (ys[i]-top.Y)*(ys[i]-top.Y); d > best {
			far, best = i, d
		}
	}
	bottom := Point{xs[far], ys[far]}
	long := top.Dist(bottom)
	if long < 4 {
		return HeartAxes{}, false
	}
	u := Point{(bottom.X - top.X) / long, (bottom.Y - top.Y) / long}
	nrm := Point{-u.Y, u.X}
	if nrm.X > 0 { // the normal points cranially (x decreasing), as the simulator's
		nrm = Point{-nrm.X, -nrm.Y}
	}
	res := 1 / float64(up)
	// The widest chord's extents per bin of res along the long axis; the
	// first widest bin wins, as numpy's argmax does.
	first := int(math.Floor(shortAxisFrom * long / res))
	lo := make([]float64, int(math.Floor(shortAxisTo*long/res))-first+1)
	hi := make([]float64, len(lo))
	seen := make([]bool, len(lo))
	inBand := 0
	for i := range xs {
		dx, dy := xs[i]-top.X, ys[i]-top.Y
		a := dx*u.X + dy*u.Y
		if a <= shortAxisFrom*long || a >= shortAxisTo*long {
			continue
		}
		inBand++
		b := dx*nrm.X + dy*nrm.Y
		k := int(math.Floor(a/res)) - first
		if seen[k] {
			lo[k], hi[k] = math.Min(lo[k], b), math.Max(hi[k], b)
		} else {
			lo[k], hi[k], seen[k] = b, b, true
		}
	}
	if inBand < silhouetteMinBand {
		return HeartAxes{}, false
	}
	bk, bw := -1, -1.0
	for k := range lo {
		if seen[k] && hi[k]-lo[k] > bw {
			bk, bw = k, hi[k]-lo[k]
		}
	}
	am := (float64(bk+first) + 0.5) * res
	mid := Point{top.X + u.X*am, top.Y + u.Y*am}
	return HeartAxes{
		Bottom: bottom,
		Right:  Point{mid.X + nrm.X*hi[bk], mid.Y + nrm.Y*hi[bk]},
		Left:   Point{mid.X + nrm.X*lo[bk], mid.Y + nrm.Y*lo[bk]},
	}, true
}
