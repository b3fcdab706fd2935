package learn

import (
	"math"
	"testing"

	"vetlens/engine/cardiac"
)

// TestReadingVHS: a reading's VHS is the product's route's (the column
// route's heart axes over the column's v) where the route measured one,
// else the raw landmarks' own over their |A-B| / 6, so a promotion is
// judged on the number the product would give.
func TestReadingVHS(t *testing.T) {
	// Raw landmarks of VHS 10 over their own span: axes 60 + 40 px, A-B 60 px.
	var raw cardiac.Landmarks
	raw[cardiac.HeartTop], raw[cardiac.HeartBottom] = cardiac.Point{X: 100, Y: 100}, cardiac.Point{X: 100, Y: 160}
	raw[cardiac.HeartRight], raw[cardiac.HeartLeft] = cardiac.Point{X: 80, Y: 130}, cardiac.Point{X: 120, Y: 130}
	raw[cardiac.VertebraA], raw[cardiac.VertebraB] = cardiac.Point{X: 60, Y: 40}, cardiac.Point{X: 120, Y: 40}
	cases := []struct {
		name  string
		route float64
		want  float64
	}{
		{"the route's VHS", 11.5, 11.5},
		{"no column: the raw span's", math.NaN(), 10},
		{"a measurer that does not say", 0, 10},
		{"a degenerate route value", math.Inf(1), 10},
	}
	for _, tc := range cases {
		if got := (Reading{Raw: raw, RouteVHS: tc.route}).VHS(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: VHS %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}

// TestCaseVHSError: a case's error counts at most the whole score, so a
// reading far off (or not a number) weighs as much as a degenerate one,
// whatever its size.
func TestCaseVHSError(t *testing.T) {
	cases := []struct {
		name            string
		measured, truth float64
		want            float64
	}{
		{"close", 10.4, 10, 0.4},
		{"under", 8.5, 10, 1.5},
		{"off by the whole score", 20, 10, 10},
		{"wild: capped at the score", 40.5, 11.3, 11.3},
		{"not a number", math.NaN(), 9, 9},
		{"infinite", math.Inf(1), 9, 9},
	}
	for _, tc := range cases {
		if got := caseVHSError(tc.measured, tc.truth); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}
