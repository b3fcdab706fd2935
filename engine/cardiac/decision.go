package cardiac

import "math"

// Thresholds. Every number the result code and confidence depend on is here;
// docs/cardiac.md explains each.
const (
	// ValidityThreshold: p_radiograph below it rejects the image (code 6).
	ValidityThreshold = 0.5

	// SpreadOptimalBelow and SpreadGoodBelow are the spec's confidence
	// bounds: optimal < 0.005 <= good < 0.008 <= review.
	SpreadOptimalBelow = 0.005
	SpreadGoodBelow    = 0.008

	// MinCorePeak: the mean `peak` of the six heart and vertebra landmarks
	// (all but VLAS) below this means the landmarks were not found (code 5).
	// A sharp heatmap puts 0.3-0.9 of its mass within 2 cells of its
	// centre; a flat one over a 56-64 cell map about 0.005.
	MinCorePeak = 0.10
	// MinVertebra: v (one vertebral body) shorter than this fraction of
	// the image's longer side is degenerate (code 5).
	MinVertebra = 0.01
	// MinVHS and MaxVHS bound a plausible VHS; outside them the
	// measurement is treated as failed (code 5).
	MinVHS = 4.0
	MaxVHS = 20.0

	// MinVLASPeak: the VLAS landmark's own peak below this makes VLAS
	// unreliable (code 4).
	MinVLASPeak = 0.08
	// MaxVLASDispersion: the VLAS landmark's ensemble dispersion (RMS
	// distance from the ensemble mean over max(W,H)) above this makes VLAS
	// unreliable (code 4). It is 2.5x the review bound of the mean spread.
	MaxVLASDispersion = 0.02
	// MinVLAS and MaxVLAS bound a plausible VLAS (code 4 outside).
	MinVLAS = 0.5
	MaxVLAS = 6.0

	// PerpendicularToleranceDeg: axes are perpendicular when they meet at
	// 90 degrees plus or minus this.
	PerpendicularToleranceDeg = 10.0

	// RejectionReason is the spec's rejection_reason value for code 6.
	RejectionReason = "not_a_valid_radiograph"
)

// Rounding of reported values (decimals). Decisions use unrounded values,
// except the confidence level, which uses the reported (rounded) spread so
// that the number and the level a client sees always agree.
const (
	DecimalsScore      = 2 // vhs, vlas
	DecimalsCoordinate = 4 // normalized landmark x, y
	DecimalsSpread     = 5 // spread
	DecimalsClassifier = 4 // classifier_confidence
)

// Code is a spec result code (0-7).
type Code int

// The spec's result codes.
const (
	CodeUnexpected     Code = 0 // abnormal, unexpected prediction state (NaN, Inf)
	CodeHighConfidence Code = 1 // VHS and VLAS, confidence optimal
	CodeModerate       Code = 2 // VHS and VLAS, confidence good
	CodeReview         Code = 3 // VHS and VLAS, confidence review
	CodeNoVLAS         Code = 4 // VHS only, VLAS unreliable
	CodeNoLandmarks    Code = 5 // neither VHS nor VLAS
	CodeRejected       Code = 6 // not a valid radiograph
	CodePoPFailed      Code = 7 // picture-of-picture correction failed (set by the caller)
)

var codeDescriptions = [...]string{
	CodeUnexpected:     "Abnormal result, unexpected prediction state",
	CodeHighConfidence: "VHS and VLAS predicted with high confidence",
	CodeModerate:       "VHS and VLAS predicted with moderate confidence",
	CodeReview:         "VHS and VLAS predicted, confidence low, review recommended",
	CodeNoVLAS:         "VHS predicted, VLAS could not be calculated",
	CodeNoLandmarks:    "Neither VHS nor VLAS could be calculated",
	CodeRejected:       "Image rejected, not a valid radiograph",
	CodePoPFailed:      "PoP image detected but perspective correction failed",
}

// Description returns the spec's human-readable text for the code.
func (c Code) Description() string {
	if c < 0 || int(c) >= len(codeDescriptions) {
		return codeDescriptions[CodeUnexpected]
	}
	return codeDescriptions[c]
}

// HasVHS reports whether the code carries a valid VHS (codes 1-4, the
// billable ones).
func (c Code) HasVHS() bool { return c >= CodeHighConfidence && c <= CodeNoVLAS }

// HasVLAS reports whether the code carries a valid VLAS (codes 1-3).
func (c Code) HasVLAS() bool { return c >= CodeHighConfidence && c <= CodeReview }

// Confidence is the spec's model_confidence level.
type Confidence string

// The spec's confidence levels.
const (
	ConfidenceOptimal Confidence = "optimal"
	ConfidenceGood    Confidence = "good"
	ConfidenceReview  Confidence = "review"
)

// ConfidenceFor maps a spread to its level: optimal below 0.005, good from
// 0.005 to below 0.008, review from 0.008 (and for NaN).
func ConfidenceFor(spread float64) Confidence {
	switch {
	case spread < SpreadOptimalBelow:
		return ConfidenceOptimal
	case spread < SpreadGoodBelow:
		return ConfidenceGood
	}
	return ConfidenceReview
}

// Evidence is everything the result code depends on.
type Evidence struct {
	PRadiograph    float64 // validity classifier output
	Finite         bool    // all model landmarks, peaks and the spread are finite
	CorePeak       float64 // mean peak of the ensemble over the 6 non-VLAS landmarks
	VLASPeak       float64 // mean peak of the ensemble for the VLAS landmark
	VLASDispersion float64 // Dispersion of the VLAS landmark, normalized
	Vertebra       float64 // v / max(W,H)
	VHS, VLAS      float64 // unrounded
	Spread         float64 // as reported (rounded)
}

// Decide returns the result code for the evidence, checking in this order:
//
//	0  p_radiograph is NaN, or (for a valid image) Finite is false
//	6  p_radiograph < ValidityThreshold
//	5  CorePeak < MinCorePeak, Vertebra < MinVertebra, or VHS outside [MinVHS, MaxVHS]
//	4  VLASPeak < MinVLASPeak, VLASDispersion > MaxVLASDispersion, or VLAS outside [MinVLAS, MaxVLAS]
//	1, 2, 3  ConfidenceFor(Spread) is optimal, good, review
//
// Code 7 is never decided here; see Result.MarkPoPCorrectionFailed.
func Decide(e Evidence) Code {
	if math.IsNaN(e.PRadiograph) {
		return CodeUnexpected
	}
	if e.PRadiograph < ValidityThreshold {
		return CodeRejected
	}
	if !e.Finite {
		return CodeUnexpected
	}
	if e.CorePeak < MinCorePeak || e.Vertebra < MinVertebra || !(e.VHS >= MinVHS && e.VHS <= MaxVHS) {
		return CodeNoLandmarks
	}
	if e.VLASPeak < MinVLASPeak || e.VLASDispersion > MaxVLASDispersion || !(e.VLAS >= MinVLAS && e.VLAS <= MaxVLAS) {
		return CodeNoVLAS
	}
	switch ConfidenceFor(e.Spread) {
	case ConfidenceOptimal:
		return CodeHighConfidence
	case ConfidenceGood:
		return CodeModerate
	}
	return CodeReview
}
