package stats

import (
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
