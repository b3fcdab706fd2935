// Package cardiac measures the Vertebral Heart Score (VHS) and VLAS on a
// canine lateral thoracic radiograph with a validity classifier and a
// five-model landmark ensemble, and builds the single-image responses of
// the cardiac v3 specification.
//
// docs/cardiac.md documents the formulas, thresholds and result codes.
package cardiac

import "math"

// The landmark indices, in the order the landmark models emit them
// (docs/model-contract.md).
const (
	HeartTop = iota
	HeartBottom
	HeartRight
	HeartLeft
	VLASPoint
	VertebraA
	VertebraB
	// NumLandmarks is the number of landmarks per image.
	NumLandmarks
)

// ClassNames are the spec's landmark class names, indexed like the models' output.
var ClassNames = [NumLandmarks]string{"heart_top", "heart_bottom", "heart_right", "heart_left", "VLAS", "Vertebra A", "Vertebra B"}

// Point is a position in pixels of the original image (continuous
// coordinates: the image spans [0,W] x [0,H]).
type Point struct{ X, Y float64 }

// Dist returns the Euclidean distance between p and q.
func (p Point) Dist(q Point) float64 { return math.Hypot(p.X-q.X, p.Y-q.Y) }

// Landmarks is one set of the 7 landmarks in original-image pixels.
type Landmarks [NumLandmarks]Point

// Geometry holds the measurements derived from one landmark set, all
// distances in pixels of the original image.
type Geometry struct {
	LongAxis  float64 // |heart_top - heart_bottom|
	ShortAxis float64 // |heart_right - heart_left|
	Vertebra  float64 // v = |Vertebra A - Vertebra B| / 6, one vertebral body
	VLASDist  float64 // |heart_top - VLAS|
	VHS       float64 // (LongAxis + ShortAxis) / v; +Inf or NaN when v is 0
	VLAS      float64 // VLASDist / v
	// AxisAngle is the acute angle between the long and short axes in
	// degrees (0..90); NaN when an axis has zero length.
	AxisAngle float64
}

// Measure computes VHS, VLAS and the axis angle from landmarks in pixels.
// Working in pixels (not normalized coordinates) keeps distances right on
// non-square images.
func Measure(l Landmarks) Geometry {
	g := Geometry{
		LongAxis:  l[HeartTop].Dist(l[HeartBottom]),
		ShortAxis: l[HeartRight].Dist(l[HeartLeft]),
		Vertebra:  l[VertebraA].Dist(l[VertebraB]) / 6,
		VLASDist:  l[HeartTop].Dist(l[VLASPoint]),
	}
	g.VHS = (g.LongAxis + g.ShortAxis) / g.Vertebra
	g.VLAS = g.VLASDist / g.Vertebra
	ax, ay := l[HeartBottom].X-l[HeartTop].X, l[HeartBottom].Y-l[HeartTop].Y
	bx, by := l[HeartLeft].X-l[HeartRight].X, l[HeartLeft].Y-l[HeartRight].Y
	if n := g.LongAxis * g.ShortAxis; n > 0 {
		c := math.Min(1, math.Abs(ax*bx+ay*by)/n)
		g.AxisAngle = math.Acos(c) * 180 / math.Pi
	} else {
		g.AxisAngle = math.NaN()
	}
	return g
}

// AxesPerpendicular reports whether the long and short axes meet at
// 90 +/- PerpendicularToleranceDeg degrees.
func (g Geometry) AxesPerpendicular() bool {
	return g.AxisAngle >= 90-PerpendicularToleranceDeg // false for NaN
}

// EnsembleMean returns the per-landmark mean of the models' landmarks.
func EnsembleMean(models []Landmarks) Landmarks {
	var m Landmarks
	if len(models) == 0 {
		for i := range m {
			m[i] = Point{math.NaN(), math.NaN()}
		}
		return m
	}
	for _, l := range models {
		for i, p := range l {
			m[i].X += p.X
			m[i].Y += p.Y
		}
	}
	n := float64(len(models))
	for i := range m {
		m[i].X /= n
		m[i].Y /= n
	}
	return m
}

// Dispersion returns, for one landmark, the RMS distance of the models'
// points from their mean, divided by scale (pass max(W,H) to get
// normalized units).
func Dispersion(models []Landmarks, landmark int, scale float64) float64 {
	if len(models) == 0 {
		return math.NaN()
	}
	var mx, my float64
	for _, l := range models {
		mx += l[landmark].X
		my += l[landmark].Y
	}
	n := float64(len(models))
	mx /= n
	my /= n
	var ss float64
	for _, l := range models {
		dx, dy := l[landmark].X-mx, l[landmark].Y-my
		ss += dx*dx + dy*dy
	}
	return math.Sqrt(ss/n) / scale
}

// Spread is the ensemble's disagreement: the mean over the 7 landmarks of
// Dispersion with scale max(W,H), i.e.
//
//	spread = 1/7 * sum_k sqrt( 1/M * sum_m |p_mk - mean_k|^2 ) / max(W,H)
//
// for M models. 0 means all models agree; 0.005 is an RMS disagreement of
// 0.5 % of the image's longer side (5 px on a 1000 px image).
func Spread(models []Landmarks, w, h int) float64 {
	return meanDispersion(models, w, h, allLandmarks[:])
}

// allLandmarks are the landmark indices in order.
var allLandmarks = [NumLandmarks]int{0, 1, 2, 3, 4, 5, 6}

// meanDispersion is the mean of Dispersion with scale max(W,H) over the
// landmarks ks.
func meanDispersion(models []Landmarks, w, h int, ks []int) float64 {
	scale := float64(max(w, h))
	var s float64
	for _, k := range ks {
		s += Dispersion(models, k, scale)
	}
	return s / float64(len(ks))
}

// stdDev is the population standard deviation of x (0 for fewer than
// two values).
func stdDev(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	n := float64(len(x))
	mean := sum / n
	return math.Sqrt(max(0, sq/n-mean*mean))
}

// clampTo returns l with every point moved into [0,w] x [0,h].
func clampTo(l Landmarks, w, h int) Landmarks {
	for i, p := range l {
		l[i] = Point{math.Min(math.Max(p.X, 0), float64(w)), math.Min(math.Max(p.Y, 0), float64(h))}
	}
	return l
}

// Round returns v rounded half away from zero to the given decimals.
func Round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}
