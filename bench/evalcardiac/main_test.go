package main

import (
	"math"
	"testing"

	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
)

// TestColumnRatio: the column's v is compared with the labels' |A-B| / 6,
// and nothing is compared without a column or without both labels.
func TestColumnRatio(t *testing.T) {
	labels := map[string][2]float64{"Vertebra A": {100, 50}, "Vertebra B": {700, 50}} // v = 100 px
	cases := []struct {
		name   string
		col    *cardiac.Column
		labels map[string][2]float64
		want   float64
		ok     bool
	}{
		{"column 10 % long", &cardiac.Column{V: 110}, labels, 1.1, true},
		{"column exact", &cardiac.Column{V: 100}, labels, 1, true},
		{"span route: no column", nil, labels, 0, false},
		{"column of zero v", &cardiac.Column{}, labels, 0, false},
		{"no Vertebra B label", &cardiac.Column{V: 100}, map[string][2]float64{"Vertebra A": {1, 2}}, 0, false},
		{"A and B on one point", &cardiac.Column{V: 100}, map[string][2]float64{"Vertebra A": {1, 2}, "Vertebra B": {1, 2}}, 0, false},
	}
	for _, tc := range cases {
		got, ok := columnRatio(tc.col, heldout.Item{Landmarks: tc.labels})
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: columnRatio = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
