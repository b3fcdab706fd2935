package learn_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"vetlens/app/learn"
)

// powerRuns are finished runs (newest first: the last count is the
// newest) whose held-out VHS MAE is a n^-b times the factor of each.
func powerRuns(base string, a, b float64, counts []int, factors []float64) []learn.Run {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var out []learn.Run
	for i, n := range counts {
		f := 1.0
		if factors != nil {
			f = factors[i]
		}
		r := learn.Run{ID: n2s(i), Status: learn.StatusDone, Started: t0.Add(time.Duration(i) * time.Hour), Base: base, Train: n,
			After: &learn.Eval{Cases: 12, VHSMAE: a * math.Pow(float64(n), -b) * f}}
		out = append([]learn.Run{r}, out...)
	}
	return out
}

func n2s(i int) string { return string(rune('a' + i)) }

// TestEstimateCases: the power-law rule on runs whose truth is known.
// Exact runs give the law's own answer with no spread; noisy runs an
// interval around it that holds the truth; runs that do not show the
// error falling, too few case counts, a gain beyond the fit and an
// answer far beyond the runs give no number but the reason.
func TestEstimateCases(t *testing.T) {
	const a, b = 3.0, 0.5
	law := func(n float64) float64 { return a * math.Pow(n, -b) }
	need := func(newest int, gain float64) float64 { return math.Pow((law(float64(newest))-gain)/a, -1/b) }
	noisy := []float64{1.06, 0.95, 1.03, 0.97, 1.0}
	others := append(powerRuns("v3.1.0", a, b, []int{30, 60}, nil), // the newest two runs fit ...
		learn.Run{Status: learn.StatusDone, Base: "v3.1.0", Train: 90, After: &learn.Eval{Cases: 12, VHSMAE: law(90)}, Options: learn.Options{ShuffleLabels: true}},
		learn.Run{Status: learn.StatusFailed, Base: "v3.1.0", Train: 100},
		learn.Run{Status: learn.StatusDone, Base: "v3.1.0", Train: 110},                                                  // never evaluated
		learn.Run{Status: learn.StatusDone, Base: "v3.0.0", Train: 120, After: &learn.Eval{Cases: 12, VHSMAE: law(120)}}, // another base
	)
	tests := []struct {
		name       string
		runs       []learn.Run
		gain       float64
		ok         bool
		counts     int
		reason     string
		exact      bool
		wantNeed   float64 // the truth (0: not checked)
		wantNewest int
	}{
		{"no runs", nil, 0.1, false, 0, "Not enough runs yet", false, 0, 0},
		{"two case counts", powerRuns("v", a, b, []int{40, 80, 80}, nil), 0.05, false, 2, "Not enough runs yet", false, 0, 0},
		{"exact law", powerRuns("v", a, b, []int{30, 60, 120}, nil), 0.05, true, 3, "", true, need(120, 0.05), 120},
		{"noisy law", powerRuns("v", a, b, []int{40, 60, 90, 135, 200}, noisy), 0.02, true, 5, "", false, need(200, 0.02), 200},
		{"flat", powerRuns("v", a, 0, []int{40, 60, 90, 135}, noisy), 0.05, false, 4, "does not fall clearly", false, 0, 0},
		{"rising", powerRuns("v", a, -0.3, []int{40, 60, 90}, nil), 0.05, false, 3, "does not fall clearly", false, 0, 0},
		{"gain beyond the fit", powerRuns("v", a, b, []int{30, 60, 120}, nil), 0.5, false, 3, "0 or below", false, 0, 0},
		{"far beyond the runs", powerRuns("v", a, 0.1, []int{30, 60, 120}, nil), 0.3, false, 3, "beyond 4 times the largest run", false, 0, 0},
		{"no gain", powerRuns("v", a, b, []int{30, 60, 120}, nil), 0, false, 0, "above 0", false, 0, 0},
		{"only runs like the newest count", others, 0.05, false, 2, "Not enough runs yet", false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := learn.EstimateCases(tc.runs, tc.gain)
			t.Log(e)
			if e.OK != tc.ok || e.Counts != tc.counts || !strings.Contains(e.String(), tc.reason) {
				t.Fatalf("ok %v counts %d, want %v %d %q: %s", e.OK, e.Counts, tc.ok, tc.counts, tc.reason, e)
			}
			if !tc.ok {
				if strings.Contains(e.String(), "needs about") {
					t.Errorf("a number without an estimate: %s", e)
				}
				return
			}
			if e.Cases != tc.wantNewest || !(e.Lo <= e.Need && e.Need <= e.Hi) || !(e.Lo <= tc.wantNeed && tc.wantNeed <= e.Hi) {
				t.Errorf("need %.1f [%.1f, %.1f] from %d cases, the law needs %.1f", e.Need, e.Lo, e.Hi, e.Cases, tc.wantNeed)
			}
			if math.Abs(e.More-(e.Need-float64(e.Cases))) > 1e-9 || math.Abs(e.MorePool*(1-learn.HoldOut)-e.More) > 1e-9 {
				t.Errorf("more %.1f, pool %.1f", e.More, e.MorePool)
			}
			if !strings.Contains(e.String(), "needs about") {
				t.Errorf("text %s", e)
			}
			if tc.exact {
				if math.Abs(e.Need-tc.wantNeed) > 1e-6*tc.wantNeed || e.Hi-e.Lo > 1e-6*e.Need || math.Abs(e.A-a) > 1e-9 || math.Abs(e.B-b) > 1e-9 {
					t.Errorf("exact law: need %.3f [%.3f, %.3f], A %.4f B %.4f; want %.3f", e.Need, e.Lo, e.Hi, e.A, e.B, tc.wantNeed)
				}
			} else if !(e.Hi-e.Lo > 0) {
				t.Errorf("noisy runs, no spread: [%.1f, %.1f]", e.Lo, e.Hi)
			}
		})
	}
}
