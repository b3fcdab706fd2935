// Package stats holds the small statistics more than one layer uses, so
// each rule is written once: the median of the batch summaries (app) and
// of the PoP pipeline's grey-level tests (engine/pop).
package stats

import (
	"math"
	"slices"
)

// Median is the middle value of v, the mean of the two middle values for
// an even count, and 0 for none. v is not modified. It selects the middle
// values (quickselect) rather than sorting, with the sort's result; a v
// holding NaN is sorted, as before.
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	s := slices.Clone(v)
	var lo, hi float64 // the middle values, equal for an odd count
	if slices.ContainsFunc(s, math.IsNaN) {
		slices.Sort(s)
		lo, hi = s[(n-1)/2], s[n/2]
	} else {
		hi = selectK(s, n/2)
		lo = hi
		if n%2 == 0 {
			// After selection every value left of n/2 is at most
			// s[n/2]: the lower middle value is their largest.
			lo = slices.Max(s[:n/2])
		}
	}
	if n%2 == 1 {
		return hi
	}
	return (lo + hi) / 2
}

// selectK reorders s so that s[k] is the value a sort would put there,
// with no larger value before it and no smaller one after, and returns it.
func selectK(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}
