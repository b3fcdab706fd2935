package usg

import "math"

// Class labels.
const (
	LabelAdequate  = "adequate"
	LabelImpaired  = "impaired"
	LabelUncertain = "uncertain"
)

// Risk tiers.
const (
	TierLow          = "low"
	TierModerateLow  = "moderate_low"
	TierModerateHigh = "moderate_high"
	TierHigh         = "high"
)

// Tiers holds the three probability bounds between the four risk tiers:
// low below Bounds[0], moderate_low below Bounds[1] (= threshold_impaired),
// moderate_high below Bounds[2], high from Bounds[2] up.
type Tiers struct {
	Bounds [3]float64
}

// Tier returns the risk tier and its display label for probability_impaired p.
func (t Tiers) Tier(p float64) (tier, label string) {
	switch {
	case p < t.Bounds[0]:
		return TierLow, "Low risk of poorly concentrated urine"
	case p < t.Bounds[1]:
		return TierModerateLow, "Moderate-low risk of poorly concentrated urine"
	case p < t.Bounds[2]:
		return TierModerateHigh, "Moderate-high risk of poorly concentrated urine; consider a urinalysis"
	default:
		return TierHigh, "High risk of poorly concentrated urine; urinalysis recommended"
	}
}

// Classify returns impaired when p is at or above the threshold, else adequate.
func Classify(p, threshold float64) string {
	if p >= threshold {
		return LabelImpaired
	}
	return LabelAdequate
}

// ConformalSet is the split-conformal prediction set for probability_impaired
// p with calibrated quantile qhat of the score 1 - p(true label): a label is
// in the set when 1 - p(label) <= qhat. When that leaves the set empty
// (possible only when qhat < 0.5) the set is the classification's label at
// threshold, so it is never empty. The second result is the spec's
// conformal_classification: the single label, or uncertain for both.
func ConformalSet(p, qhat, threshold float64) ([]string, string) {
	var set []string
	if p <= qhat {
		set = append(set, LabelAdequate)
	}
	if 1-p <= qhat {
		set = append(set, LabelImpaired)
	}
	switch len(set) {
	case 0:
		c := Classify(p, threshold)
		return []string{c}, c
	case 1:
		return set, set[0]
	default:
		return set, LabelUncertain
	}
}

// EnsembleStd is the population standard deviation of the members'
// calibrated probabilities, given their calibrated log-odds.
func EnsembleStd(memberLogits []float64) float64 {
	if len(memberLogits) == 0 {
		return 0
	}
	var mean float64
	ps := make([]float64, len(memberLogits))
	for i, l := range memberLogits {
		ps[i] = sigmoid(l)
		mean += ps[i]
	}
	mean /= float64(len(ps))
	var ss float64
	for _, p := range ps {
		ss += (p - mean) * (p - mean)
	}
	return math.Sqrt(ss / float64(len(ps)))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Logit is the log-odds of probability p.
func Logit(p float64) float64 { return math.Log(p / (1 - p)) }
