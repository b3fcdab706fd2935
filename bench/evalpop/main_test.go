package main

import (
	"math"
	"testing"

	"vetlens/engine/pop"
)

func TestQuadErr(t *testing.T) {
	q := pop.Quad{{X: 0, Y: 0}, {X: 30, Y: 0}, {X: 30, Y: 40}, {X: 0, Y: 40}}
	it := item{Width: 30, Height: 40} // diagonal 50
	cases := []struct {
		name  string
		truth [][2]float64
		want  float64
	}{
		{"exact", [][2]float64{{0, 0}, {30, 0}, {30, 40}, {0, 40}}, 0},
		{"every corner 5 px off", [][2]float64{{3, 4}, {33, 4}, {33, 44}, {3, 44}}, 0.1},
		{"one corner 10 px off", [][2]float64{{0, 0}, {30, 0}, {30, 40}, {10, 40}}, 0.05},
		{"no truth quad (no screen in the frame)", nil, math.NaN()},
		{"truth cut short", [][2]float64{{0, 0}, {30, 0}}, math.NaN()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := quadErr(q, tc.truth, it)
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) {
					t.Fatalf("got %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
