// Package stats holds the small statistics more than one layer uses, so
// each rule is written once: the median of the batch summaries (app) and
// of the PoP pipeline's grey-level tests (engine/pop).
package stats

import "slices"

// Median is the middle value of v, the mean of the two middle values for
// an even count, and 0 for none. v is not modified.
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
