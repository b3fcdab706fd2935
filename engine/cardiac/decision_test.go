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
		name  string
		e     Evidence
		want  Code
		guard Guard
	}{
		{"all good", good, CodeHighConfidence, GuardNone},
		{"spread at 0.005", with(func(e *Evidence) { e.Spread = 0.005 }), CodeModerate, GuardNone},
		{"spread just under 0.005", with(func(e *Evidence) { e.Spread = 0.00499 }), CodeHighConfidence, GuardNone},
		{"spread at 0.008", with(func(e *Evidence) { e.Spread = 0.008 }), CodeReview, GuardNone},
		{"spread just under 0.008", with(func(e *Evidence) { e.Spread = 0.00799 }), CodeModerate, GuardNone},
		{"spread at MaxSpreadForVHS", with(func(e *Evidence) { e.Spread = MaxSpreadForVHS }), CodeReview, GuardNone},
		{"spread above MaxSpreadForVHS", with(func(e *Evidence) { e.Spread = 0.03001 }), CodeNoLandmarks, GuardSpreadTooHigh},
		{"validity NaN", with(func(e *Evidence) { e.PRadiograph = math.NaN() }), CodeUnexpected, GuardNone},
		{"validity just under 0.05", with(func(e *Evidence) { e.PRadiograph = 0.0499 }), CodeRejected, GuardNone},
		{"validity at 0.05: measured, withheld", with(func(e *Evidence) { e.PRadiograph = 0.05 }), CodeNoLandmarks, GuardRadiographUncertain},
		{"validity just under 0.5: withheld", with(func(e *Evidence) { e.PRadiograph = 0.4999 }), CodeNoLandmarks, GuardRadiographUncertain},
		{"uncertain validity named before a failed guard", with(func(e *Evidence) { e.PRadiograph = 0.3; e.Guards.VHS = GuardSpreadTooHigh }), CodeNoLandmarks, GuardRadiographUncertain},
		{"uncertain validity withholds VLAS too", with(func(e *Evidence) { e.PRadiograph = 0.3; e.VLASPeak = 0.01 }), CodeNoLandmarks, GuardRadiographUncertain},
		{"validity at 0.5", with(func(e *Evidence) { e.PRadiograph = 0.5 }), CodeHighConfidence, GuardNone},
		{"rejected wins over NaN landmarks", with(func(e *Evidence) { e.PRadiograph = 0.01; e.Finite = false }), CodeRejected, GuardNone},
		{"rejected wins over a failed guard", with(func(e *Evidence) { e.PRadiograph = 0.01; e.Guards.VHS = GuardVertebraeNotDorsal }), CodeRejected, GuardNone},
		{"non-finite landmarks", with(func(e *Evidence) { e.Finite = false }), CodeUnexpected, GuardNone},
		{"non-finite wins over a failed guard", with(func(e *Evidence) { e.Finite = false; e.Guards.VHS = GuardAxesOutOfScale }), CodeUnexpected, GuardNone},
		{"core peak low", with(func(e *Evidence) { e.CorePeak = MinCorePeak - 0.001 }), CodeNoLandmarks, GuardLandmarksNotFound},
		{"core peak at threshold", with(func(e *Evidence) { e.CorePeak = MinCorePeak }), CodeHighConfidence, GuardNone},
		{"vertebra degenerate", with(func(e *Evidence) { e.Vertebra = 0.005 }), CodeNoLandmarks, GuardVertebraDegenerate},
		{"core peak named before a guard", with(func(e *Evidence) { e.CorePeak = 0.01; e.Guards.VHS = GuardShortAxisSkewed }), CodeNoLandmarks, GuardLandmarksNotFound},
		{"plausibility guard", with(func(e *Evidence) { e.Guards.VHS = GuardVertebraeNotAlongSpine }), CodeNoLandmarks, GuardVertebraeNotAlongSpine},
		{"plausibility guard beats VLAS guard", with(func(e *Evidence) { e.Guards = GuardResult{GuardHeartTopNotDorsal, GuardVLASMisplaced} }), CodeNoLandmarks, GuardHeartTopNotDorsal},
		{"VHS below MinVHS", with(func(e *Evidence) { e.VHS = MinVHS - 0.01 }), CodeNoLandmarks, GuardVHSOutOfRange},
		{"VHS at MinVHS", with(func(e *Evidence) { e.VHS = MinVHS }), CodeHighConfidence, GuardNone},
		{"VHS at MaxVHS", with(func(e *Evidence) { e.VHS = MaxVHS }), CodeHighConfidence, GuardNone},
		{"VHS above MaxVHS", with(func(e *Evidence) { e.VHS = MaxVHS + 0.01 }), CodeNoLandmarks, GuardVHSOutOfRange},
		{"VHS 19.4", with(func(e *Evidence) { e.VHS = 19.4 }), CodeNoLandmarks, GuardVHSOutOfRange},
		{"VHS infinite", with(func(e *Evidence) { e.VHS = math.Inf(1) }), CodeNoLandmarks, GuardVHSOutOfRange},
		{"VHS NaN", with(func(e *Evidence) { e.VHS = math.NaN() }), CodeNoLandmarks, GuardVHSOutOfRange},
		{"landmarks missing beats VLAS missing", with(func(e *Evidence) { e.CorePeak = 0.01; e.VLASPeak = 0.01 }), CodeNoLandmarks, GuardLandmarksNotFound},
		{"VLAS peak low", with(func(e *Evidence) { e.VLASPeak = MinVLASPeak - 0.001 }), CodeNoVLAS, GuardVLASPeakLow},
		{"VLAS dispersion high", with(func(e *Evidence) { e.VLASDispersion = MaxVLASDispersion + 0.001 }), CodeNoVLAS, GuardVLASDispersed},
		{"VLAS dispersion at limit", with(func(e *Evidence) { e.VLASDispersion = MaxVLASDispersion }), CodeHighConfidence, GuardNone},
		{"VLAS guard", with(func(e *Evidence) { e.Guards.VLAS = GuardVLASMisplaced }), CodeNoVLAS, GuardVLASMisplaced},
		{"VLAS below MinVLAS", with(func(e *Evidence) { e.VLAS = MinVLAS - 0.01 }), CodeNoVLAS, GuardVLASOutOfRange},
		{"VLAS at MinVLAS", with(func(e *Evidence) { e.VLAS = MinVLAS }), CodeHighConfidence, GuardNone},
		{"VLAS at MaxVLAS", with(func(e *Evidence) { e.VLAS = MaxVLAS }), CodeHighConfidence, GuardNone},
		{"VLAS above MaxVLAS", with(func(e *Evidence) { e.VLAS = MaxVLAS + 0.01 }), CodeNoVLAS, GuardVLASOutOfRange},
		{"VLAS NaN", with(func(e *Evidence) { e.VLAS = math.NaN() }), CodeNoVLAS, GuardVLASOutOfRange},
		{"VLAS missing beats review", with(func(e *Evidence) { e.VLAS = 7; e.Spread = (SpreadGoodBelow + MaxSpreadForVHS) / 2 }), CodeNoVLAS, GuardVLASOutOfRange},
	}
	for _, tc := range cases {
		if got, guard := Decide(tc.e); got != tc.want || guard != tc.guard {
			t.Errorf("%s: code %d guard %q, want %d %q", tc.name, got, guard, tc.want, tc.guard)
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
