package learn

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Bootstrap settings of the promotion rule (docs/learning.md).
const (
	// Resamples is the number of paired bootstrap resamples.
	Resamples = 4000
	// Confidence is the percentile interval's coverage.
	Confidence = 0.95
)

// Interval is a bootstrap percentile interval of a mean.
type Interval struct {
	// Mean is the observed mean; Lo and Hi the interval's ends.
	Mean, Lo, Hi float64
	Resamples    int
	Seed         uint64
}

// PairedBootstrap returns the percentile interval of the mean of
// after[i] - before[i] over resamples resamples of the cases (with
// replacement), seeded. before and after must have the same length (one
// value per case); with no cases the interval is NaN.
func PairedBootstrap(before, after []float64, resamples int, seed uint64) Interval {
	n := len(before)
	iv := Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Resamples: resamples, Seed: seed}
	if n == 0 || len(after) != n || resamples < 1 {
		return iv
	}
	d := make([]float64, n)
	var sum float64
	for i := range d {
		d[i] = after[i] - before[i]
		sum += d[i]
	}
	iv.Mean = sum / float64(n)
	r := rand.New(rand.NewPCG(seed, 0x626f6f74))
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for range n {
			s += d[r.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - Confidence) / 2
	iv.Lo = percentile(means, alpha)
	iv.Hi = percentile(means, 1-alpha)
	return iv
}

// percentile is the q-quantile of sorted xs by linear interpolation.
func percentile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(math.Floor(pos))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i]*(1-f) + xs[i+1]*f
}
