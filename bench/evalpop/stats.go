package main

import (
	"math"
	"sort"
)

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(len(s)-1, i))]
}

// absAll is |x| of each value of v, in a new slice.
func absAll(v []float64) []float64 {
	a := make([]float64, len(v))
	for i, x := range v {
		a[i] = math.Abs(x)
	}
	return a
}

// countOver counts the values of v above limit.
func countOver(v []float64, limit float64) int {
	n := 0
	for _, x := range v {
		if x > limit {
			n++
		}
	}
	return n
}

// correlation is Pearson's r of the pairs (x[i], y[i]) where both are
// finite; NaN under three pairs.
func correlation(x, y []float64) float64 {
	var xs, ys []float64
	for i := range min(len(x), len(y)) {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	if len(xs) < 3 {
		return math.NaN()
	}
	mx, my := mean(xs), mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func sortedFams(m map[string]int) []string {
	var k []string
	for f := range m {
		k = append(k, f)
	}
	sort.Strings(k)
	return k
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
