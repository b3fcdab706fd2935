package usg

import (
	"math"
	"reflect"
	"testing"
)

func TestTierBoundaries(t *testing.T) {
	tiers := Tiers{Bounds: [3]float64{0.20, 0.535, 0.75}}
	tests := []struct {
		p          float64
		tier, clas string
	}{
		{0, TierLow, LabelAdequate},
		{0.1999, TierLow, LabelAdequate},
		{math.Nextafter(0.20, 0), TierLow, LabelAdequate},
		{0.20, TierModerateLow, LabelAdequate},
		{0.5349, TierModerateLow, LabelAdequate},
		{math.Nextafter(0.535, 0), TierModerateLow, LabelAdequate},
		{0.535, TierModerateHigh, LabelImpaired},
		{0.7499, TierModerateHigh, LabelImpaired},
		{math.Nextafter(0.75, 0), TierModerateHigh, LabelImpaired},
		{0.75, TierHigh, LabelImpaired},
		{1, TierHigh, LabelImpaired},
	}
	for _, tc := range tests {
		tier, label := tiers.Tier(tc.p)
		if tier != tc.tier || label == "" {
			t.Errorf("Tier(%v) = %s %q, want %s", tc.p, tier, label, tc.tier)
		}
		if c := Classify(tc.p, 0.535); c != tc.clas {
			t.Errorf("Classify(%v) = %s, want %s", tc.p, c, tc.clas)
		}
	}
}

func TestConformalSet(t *testing.T) {
	tests := []struct {
		p, qhat float64
		set     []string
		class   string
	}{
		{0.10, 0.78, []string{LabelAdequate}, LabelAdequate},
		{0.2199, 0.78, []string{LabelAdequate}, LabelAdequate},
		{0.22, 0.78, []string{LabelAdequate, LabelImpaired}, LabelUncertain}, // 1-p = qhat exactly
		{0.23, 0.78, []string{LabelAdequate, LabelImpaired}, LabelUncertain}, // 1-p = 0.77 <= qhat
		{0.78, 0.78, []string{LabelAdequate, LabelImpaired}, LabelUncertain},
		{0.7801, 0.78, []string{LabelImpaired}, LabelImpaired},
		{0.95, 0.78, []string{LabelImpaired}, LabelImpaired},
		// qhat below 0.5: the raw set can be empty; it becomes the classification.
		{0.45, 0.40, []string{LabelAdequate}, LabelAdequate},
		{0.55, 0.40, []string{LabelImpaired}, LabelImpaired},
		{0.52, 0.40, []string{LabelAdequate}, LabelAdequate},
		{0.30, 0.40, []string{LabelAdequate}, LabelAdequate},
	}
	for _, tc := range tests {
		set, class := ConformalSet(tc.p, tc.qhat, 0.535)
		if !reflect.DeepEqual(set, tc.set) || class != tc.class {
			t.Errorf("ConformalSet(%v, %v) = %v %s, want %v %s", tc.p, tc.qhat, set, class, tc.set, tc.class)
		}
	}
}

func TestEnsembleStd(t *testing.T) {
	if s := EnsembleStd([]float64{1.3, 1.3, 1.3}); s > 1e-12 {
		t.Errorf("equal members: %v", s)
	}
	// probabilities 0.5 and sigmoid(ln 3) = 0.75: population std 0.125
	if s := EnsembleStd([]float64{0, math.Log(3)}); math.Abs(s-0.125) > 1e-12 {
		t.Errorf("std %v, want 0.125", s)
	}
}
