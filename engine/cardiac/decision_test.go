package cardiac

import (
	"math"
	"testing"
)

func TestConfidenceBoundaries(t *testing.T) {
	cases := []struct {
		spread float64
		want   Confidence
	}{
		{0, ConfidenceOptimal},
		{0.00499, ConfidenceOptimal},
		{math.Nextafter(0.005, 0), ConfidenceOptimal},
		{0.005, ConfidenceGood},
		{0.00799, ConfidenceGood},
		{math.Nextafter(0.008, 0), ConfidenceGood},
		{0.008, ConfidenceReview},
		{0.5, ConfidenceReview},
		{math.NaN(), ConfidenceReview},
		{math.Inf(1), ConfidenceReview},
	}
	for _, tc := range cases {
		if got := ConfidenceFor(tc.spread); got != tc.want {
			t.Errorf("ConfidenceFor(%v) = %s, want %s", tc.spread, got, tc.want)
		}
	}
}

// good is evidence that yields code 1; each case changes one thing.
var good = Evidence{
	PRadiograph: 0.97, Finite: true, CorePeak: 0.6, VLASPeak: 0.5, VLASDispersion: 0.003,
	Vertebra: 0.07, VHS: 10.1, VLAS: 2.1, Spread: 0.003,
}

func TestDecide(t *testing.T) {
	with := func(f func(*Evidence)) Evidence { e := good; f(&e); return e }
	cases := []struct {
		name string
		e    Evidence
		want Code
	}{
		{"all good", good, CodeHighConfidence},
		{"spread at 0.005", with(func(e *Evidence) { e.Spread = 0.005 }), CodeModerate},
		{"spread just under 0.005", with(func(e *Evidence) { e.Spread = 0.00499 }), CodeHighConfidence},
		{"spread at 0.008", with(func(e *Evidence) { e.Spread = 0.008 }), CodeReview},
		{"spread just under 0.008", with(func(e *Evidence) { e.Spread = 0.00799 }), CodeModerate},
		{"validity NaN", with(func(e *Evidence) { e.PRadiograph = math.NaN() }), CodeUnexpected},
		{"validity just under 0.5", with(func(e *Evidence) { e.PRadiograph = 0.4999 }), CodeRejected},
		{"validity at 0.5", with(func(e *Evidence) { e.PRadiograph = 0.5 }), CodeHighConfidence},
		{"rejected wins over NaN landmarks", with(func(e *Evidence) { e.PRadiograph = 0.1; e.Finite = false }), CodeRejected},
		{"non-finite landmarks", with(func(e *Evidence) { e.Finite = false }), CodeUnexpected},
		{"core peak low", with(func(e *Evidence) { e.CorePeak = MinCorePeak - 0.001 }), CodeNoLandmarks},
		{"core peak at threshold", with(func(e *Evidence) { e.CorePeak = MinCorePeak }), CodeHighConfidence},
		{"vertebra degenerate", with(func(e *Evidence) { e.Vertebra = 0.005 }), CodeNoLandmarks},
		{"VHS below 4", with(func(e *Evidence) { e.VHS = 3.99 }), CodeNoLandmarks},
		{"VHS at 4", with(func(e *Evidence) { e.VHS = 4 }), CodeHighConfidence},
		{"VHS above 20", with(func(e *Evidence) { e.VHS = 20.01 }), CodeNoLandmarks},
		{"VHS infinite", with(func(e *Evidence) { e.VHS = math.Inf(1) }), CodeNoLandmarks},
		{"VHS NaN", with(func(e *Evidence) { e.VHS = math.NaN() }), CodeNoLandmarks},
		{"landmarks missing beats VLAS missing", with(func(e *Evidence) { e.CorePeak = 0.01; e.VLASPeak = 0.01 }), CodeNoLandmarks},
		{"VLAS peak low", with(func(e *Evidence) { e.VLASPeak = MinVLASPeak - 0.001 }), CodeNoVLAS},
		{"VLAS dispersion high", with(func(e *Evidence) { e.VLASDispersion = MaxVLASDispersion + 0.001 }), CodeNoVLAS},
		{"VLAS dispersion at limit", with(func(e *Evidence) { e.VLASDispersion = MaxVLASDispersion }), CodeHighConfidence},
		{"VLAS below 0.5", with(func(e *Evidence) { e.VLAS = 0.49 }), CodeNoVLAS},
		{"VLAS above 6", with(func(e *Evidence) { e.VLAS = 6.01 }), CodeNoVLAS},
		{"VLAS NaN", with(func(e *Evidence) { e.VLAS = math.NaN() }), CodeNoVLAS},
		{"VLAS missing beats review", with(func(e *Evidence) { e.VLAS = 7; e.Spread = 0.02 }), CodeNoVLAS},
	}
	for _, tc := range cases {
		if got := Decide(tc.e); got != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCodeProperties(t *testing.T) {
	want := map[Code]struct{ vhs, vlas bool }{
		0: {false, false}, 1: {true, true}, 2: {true, true}, 3: {true, true},
		4: {true, false}, 5: {false, false}, 6: {false, false}, 7: {false, false},
	}
	for c, w := range want {
		if c.HasVHS() != w.vhs || c.HasVLAS() != w.vlas {
			t.Errorf("code %d: HasVHS %v HasVLAS %v", c, c.HasVHS(), c.HasVLAS())
		}
		if c.Description() == "" {
			t.Errorf("code %d has no description", c)
		}
	}
	if Code(6).Description() != "Image rejected, not a valid radiograph" || Code(99).Description() != Code(0).Description() {
		t.Error("descriptions do not follow the spec")
	}
}
