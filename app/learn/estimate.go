package learn

import (
	"context"
	"fmt"
	"math"
)

// The cases-for-a-gain estimate (docs/learning.md, "How many more
// cases"): the runs' held-out clinic VHS MAE against their training
// cases, fitted as a power law.
const (
	// MinEstimateRuns is how many distinct training case counts the fit
	// needs: two points always lie on a power law, a third is the first
	// that can disagree with it.
	MinEstimateRuns = 3
	// MaxExtrapolation is how far beyond the largest run (a factor on its
	// training cases) an estimate may reach before it is withheld.
	MaxExtrapolation = 4.0
)

// Estimate is how many training cases a gain in held-out VHS MAE needs,
// from the runs recorded so far.
type Estimate struct {
	// OK says an estimate was made; Reason says why not.
	OK     bool
	Reason string
	// Gain is the gain asked for (vertebrae).
	Gain float64
	// Runs are the runs fitted: distinct case counts and all runs (a
	// count measured twice is two points).
	Counts, Runs int
	// A and B are the fit MAE = A n^-B over n training cases; BLo and BHi
	// B's 95 % interval.
	A, B, BLo, BHi float64
	// Cases is the newest fitted run's training cases and Now the fit's
	// MAE there; Target = Now - Gain.
	Cases       int
	Now, Target float64
	// Need is the training cases at which the fitted MAE reaches Target,
	// with the 95 % interval [Lo, Hi] of the n where the fit's confidence
	// band reaches it (Fieller's interval of the inverse prediction).
	Need, Lo, Hi float64
	// More is Need - Cases; MorePool the pool cases that means, since a
	// run holds out about HoldOut of the pool.
	More, MorePool float64
}

// String says the estimate in a sentence for the clinic.
func (e Estimate) String() string {
	if !e.OK {
		return e.Reason
	}
	return fmt.Sprintf("A further %.2f v (held-out VHS MAE %.2f -> %.2f v) needs about %.0f training cases (95 %% interval %.0f to %.0f): "+
		"about %.0f more than the last run's %d, so about %.0f more cases in the pool. From %d runs on %d case counts, MAE = %.2f n^-%.2f (exponent 95 %% interval %.2f to %.2f); "+
		"it assumes the error keeps falling as it has, which real curves stop doing at some point.",
		e.Gain, e.Now, e.Target, e.Need, e.Lo, e.Hi, e.More, e.Cases, e.MorePool, e.Runs, e.Counts, e.A, e.B, e.BLo, e.BHi)
}

// estimateRuns are the runs an estimate fits: finished and evaluated,
// not a shuffled-label control, fine-tuned from the same base as the
// newest of them (another base starts from another model: its case
// counts do not add up with these). runs are newest first.
func estimateRuns(runs []Run) []Run {
	var out []Run
	base := ""
	for _, r := range runs {
		if r.Status != StatusDone || r.After == nil || r.After.Cases == 0 || r.Train <= 0 || r.Options.ShuffleLabels ||
			!(r.After.VHSMAE > 0) || math.IsInf(r.After.VHSMAE, 0) {
			continue
		}
		if base == "" {
			base = r.Base
		}
		if r.Base == base {
			out = append(out, r)
		}
	}
	return out
}

// EstimateCases says how many training cases a gain (vertebrae of
// held-out clinic VHS MAE) needs, from runs (newest first, as Runs
// returns them): log MAE against log training cases by least squares
// over estimateRuns (a power law MAE = A n^-B), the target the fit's
// MAE at the newest run's cases less gain, and the interval where the
// fit's 95 % confidence band reaches the target. No estimate, with the
// reason, from fewer than MinEstimateRuns case counts, when the fit
// does not show the error falling with more cases (B's interval reaches
// 0), when the target is not above 0, or when the interval reaches
// beyond MaxExtrapolation times the largest run.
func EstimateCases(runs []Run, gain float64) Estimate {
	e := Estimate{Gain: gain}
	if !(gain > 0) {
		e.Reason = "Give a gain above 0 v."
		return e
	}
	fit := estimateRuns(runs)
	counts := map[int]bool{}
	maxN := 0
	for _, r := range fit {
		counts[r.Train] = true
		maxN = max(maxN, r.Train)
	}
	e.Counts, e.Runs = len(counts), len(fit)
	if e.Counts < MinEstimateRuns {
		e.Reason = fmt.Sprintf("Not enough runs yet to estimate how many cases a gain needs: it takes finished runs from the same version on at least %d different case counts (there are %d). "+
			"Run learning again as the pool grows.", MinEstimateRuns, e.Counts)
		return e
	}
	m := float64(len(fit))
	var sx, sy float64
	for _, r := range fit {
		sx += math.Log(float64(r.Train))
		sy += math.Log(r.After.VHSMAE)
	}
	xm, ym := sx/m, sy/m
	var sxx, sxy float64
	for _, r := range fit {
		dx := math.Log(float64(r.Train)) - xm
		sxx += dx * dx
		sxy += dx * (math.Log(r.After.VHSMAE) - ym)
	}
	beta := sxy / sxx
	alpha := ym - beta*xm
	var sse float64
	for _, r := range fit {
		d := math.Log(r.After.VHSMAE) - (alpha + beta*math.Log(float64(r.Train)))
		sse += d * d
	}
	dof := len(fit) - 2
	s2 := sse / float64(dof)
	t := tQuantile975(dof)
	se := math.Sqrt(s2 / sxx)
	e.A, e.B = math.Exp(alpha), -beta
	e.BLo, e.BHi = -beta-t*se, -beta+t*se
	e.Cases = fit[0].Train
	e.Now = math.Exp(alpha + beta*math.Log(float64(e.Cases)))
	e.Target = e.Now - gain
	if !(e.BLo > 0) {
		e.Reason = fmt.Sprintf("Not enough runs yet to estimate: over %d runs the held-out VHS MAE does not fall clearly with more cases (MAE = %.2f n^-%.2f, exponent 95 %% interval %.2f to %.2f).",
			e.Runs, e.A, e.B, e.BLo, e.BHi)
		return e
	}
	if !(e.Target > 0) {
		e.Reason = fmt.Sprintf("A gain of %.2f v would take the held-out VHS MAE (%.2f v now, on the fit) to 0 or below: no number of cases can promise that.", gain, e.Now)
		return e
	}
	// Fieller: the u = ln n - xm where |beta u - d| <= t sqrt(s2 (1/m + u^2/sxx)),
	// d = ln Target - ym: A u^2 + B u + C <= 0, bounded since beta^2 > t^2 se^2.
	d := math.Log(e.Target) - ym
	g := t * t * s2 / sxx
	qa, qb, qc := beta*beta-g, -2*beta*d, d*d-t*t*s2/m
	disc := math.Sqrt(math.Max(0, qb*qb-4*qa*qc))
	u1, u2 := (-qb-disc)/(2*qa), (-qb+disc)/(2*qa)
	e.Need = math.Exp((math.Log(e.Target) - alpha) / beta)
	e.Lo, e.Hi = math.Exp(xm+u1), math.Exp(xm+u2)
	e.More = e.Need - float64(e.Cases)
	e.MorePool = e.More / (1 - HoldOut)
	if e.Hi > MaxExtrapolation*float64(maxN) {
		e.OK = false
		e.Reason = fmt.Sprintf("Not enough runs yet to estimate a gain of %.2f v: it would take at least %.0f training cases, and the interval reaches %.0f, beyond %.0f times the largest run (%d cases), further than %d runs can tell.",
			gain, e.Lo, e.Hi, MaxExtrapolation, maxN, e.Runs)
		return e
	}
	e.OK = true
	return e
}

// tQuantile975 is Student's t 0.975 quantile with dof degrees of
// freedom (a 95 % two-sided interval).
func tQuantile975(dof int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case dof < 1:
		return math.Inf(1)
	case dof < len(table):
		return table[dof]
	case dof < 60:
		return 2.021
	default:
		return 1.96
	}
}

// CasesForGain estimates from the runs recorded here how many training
// cases a gain of held-out VHS MAE needs (EstimateCases).
func (s *Service) CasesForGain(ctx context.Context, gain float64) (Estimate, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return Estimate{}, err
	}
	return EstimateCases(runs, gain), nil
}
