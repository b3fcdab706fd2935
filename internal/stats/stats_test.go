package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		name string
		v    []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{4}, 4},
		{"odd, unsorted", []float64{9, 1, 5}, 5},
		{"even: mean of the middle pair", []float64{10, 2, 4, 8}, 6},
		{"even with ties", []float64{3, 3, 1, 7}, 3},
		{"negative", []float64{-2, -8, -4, -6}, -5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.v)
			if got := Median(tc.v); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.v, got, tc.want)
			}
			if !slices.Equal(in, tc.v) {
				t.Errorf("input modified: %v", tc.v)
			}
		})
	}
}

// TestMedianMatchesSort: selection gives the sorted median on random
// slices of every length up to 200, with many ties, negative zeros and
// infinities, and with NaN.
func TestMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sorted := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		n := len(s)
		if n%2 == 1 {
			return s[n/2]
		}
		return (s[n/2-1] + s[n/2]) / 2
	}
	for n := 1; n <= 200; n++ {
		for range 20 {
			v := make([]float64, n)
			for i := range v {
				switch rng.IntN(10) {
				case 0:
					v[i] = math.Copysign(0, -1)
				case 1:
					v[i] = math.Inf(1 - 2*rng.IntN(2))
				case 2, 3, 4:
					v[i] = float64(rng.IntN(5))
				default:
					v[i] = rng.NormFloat64() * 100
				}
			}
			if got, want := Median(v), sorted(v); got != want {
				t.Fatalf("n=%d: Median = %v, sort gives %v (%v)", n, got, want, v)
			}
		}
	}
	v := []float64{3, math.NaN(), 1, 2}
	if got, want := Median(v), sorted(v); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
		t.Fatalf("with NaN: %v, sort gives %v", got, want)
	}
}
