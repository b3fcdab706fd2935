package cardiac

import "math"

// Thresholds. Every number the result code and confidence depend on is here;
// docs/cardiac.md explains each.
const (
	// ValidityThreshold: p_radiograph below it rejects the image (code 6).
	ValidityThreshold = 0.05
	// ValidityConfident: from ValidityThreshold up to below this the image
	// is measured but no number is returned (code 5, radiograph_uncertain):
	// the classifier is unsure it is a lateral thorax, so a clinician
	// reviews it. Validation negatives reach 0.05 in fewer than 1 % of
	// cases (docs/cardiac.md, "Validity bands").
	ValidityConfident = 0.5
	// ValidityTrusted: below it the image must also look like a thorax to
	// the landmark members: where their heart points, over the column's v,
	// scatter by more than MaxThoraxHeartVHSSD the image is rejected (code
	// 6), as no radiograph of the validation sets does (spreadsheets' rows
	// and ultrasound's bands repeat like a column; docs/cardiac.md, "Not a
	// thorax").
	ValidityTrusted = 0.9
	// MaxThoraxHeartVHSSD is that scatter's bound in v: the largest of any
	// radiograph in the four validation sets (2.27 v), rounded up to 0.5 v.
	MaxThoraxHeartVHSSD = 2.5
	// MaxLongAxisSD: where the silhouette gives the short axis (the
	// column route with a silhouette model), the members' long axes over
	// the column's v scattering more than this withhold the number
	// (heart_points_disagree) in place of MaxHeartVHSSD: the largest of
	// 0.05, 0.10 and 0.15 v at which phantom.py's development set kept a
	// heart MAE of at most 0.45 v with none over 1.5 v
	// (experiments/2026-11-29-third-generator.md).
	MaxLongAxisSD = 0.10

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

	// MinVLASPeak: the VLAS landmark's own peak below this makes VLAS
	// unreliable (code 4).
	MinVLASPeak = 0.08
	// MaxVLASDispersion: the VLAS landmark's ensemble dispersion (RMS
	// distance from the ensemble mean over max(W,H)) above this makes VLAS
	// unreliable (code 4). It is 2.5x the review bound of the mean spread.
	MaxVLASDispersion = 0.02

	// PerpendicularToleranceDeg: axes are perpendicular when they meet at
	// 90 degrees plus or minus this.
	PerpendicularToleranceDeg = 10.0

	// RejectionReason is the spec's rejection_reason value for code 6.
	RejectionReason = "not_a_valid_radiograph"
)

// Plausibility guards: anatomical checks on the ensemble-mean landmarks and
// the spread before a VHS is returned (CheckPlausibility, guards.go;
// docs/cardiac.md, "Plausibility guards", numbers them 1-9 and gives the
// reasoning; guard 8, MinVertebralPeriodScore in period.go, looks at the
// image and is checked by Predict after Decide). A failed guard gives code 5, except guard 5 and the VLAS half
// of guard 6, which withhold VLAS only (code 4). Every guard is written in
// terms of the landmarks' relative positions (vectors, distances, the sign
// of one point's side relative to another's), so it gives the same answer
// for a head-left or head-right image at any rotation and scale.
//
// "vertebral units" (v) below: v = |Vertebra A - Vertebra B| / 6.
// The phantom figures quoted are the generator's exact landmarks
// (models/train/sim/phantom.py, 3,000 training and 3,000 held-out anatomies).
const (
	// MaxSpineToShortAxisDeg (guard 1, vertebrae_not_along_spine): the
	// angle between Vertebra A -> B (cranial to caudal along the column)
	// and heart_right -> heart_left (the heart's cranial to caudal short
	// axis) is at most this. A reversed A-B gives about 180 degrees. On
	// phantoms the angle is 7-48 degrees (the short axis tilts with the
	// heart); 75 leaves a wide margin for real hearts and rotated spines.
	MaxSpineToShortAxisDeg = 75.0
	// MinCarinaAlongSpine and MaxCarinaAlongSpine (guard 1,
	// vertebrae_not_dorsal): the foot of heart_top (the carina) on the
	// A-B line, as a fraction of |A-B| from A, lies within these, i.e. the
	// carina is ventral to the T4-T9 span and not caudal of T9 or more
	// than 1.5 vertebrae cranial of T4. Phantoms: 0.15-0.43. The same guard
	// requires all four heart points on one side of the A-B line.
	MinCarinaAlongSpine = -0.25
	MaxCarinaAlongSpine = 1.0

	// MinLongAxisV, MaxLongAxisV, MinShortAxisV and MaxShortAxisV (guard
	// 2, axes_out_of_scale): the long axis (heart_top - heart_bottom) and
	// the short axis (heart_right - heart_left) in vertebral units. Dogs
	// and cats: long axis about 4-8 v, short axis 3-6.5 v (Buchanan and
	// Bucheler 1995, Litster and Buchanan 2000, breed studies);
	// held-out phantoms: long 3.8-8.2 v, short 3.2-7.4 v. A vertebral span
	// of 1-2.5 vertebrae instead of 6 puts both axes at 2.4-6 times their
	// true size in v and fails here.
	MinLongAxisV  = 3.0
	MaxLongAxisV  = 9.5
	MinShortAxisV = 2.2
	MaxShortAxisV = 8.0
	// MinLongToShort (guard 2, long_axis_too_short): the long axis is at
	// least this times the short axis. Hearts are longer than wide (long /
	// short about 1.1-1.3); held-out phantoms reach 0.79 (the widest chord
	// over the left-atrial bulge), so 0.7, not the 0.8 first proposed. A
	// heart_bottom that stops mid-heart halves the long axis (ratio about
	// 0.6) and fails.
	MinLongToShort = 0.7

	// MaxAxisSkewDeg (guard 3, short_axis_skewed): the long and short
	// axes meet at 90 plus or minus this. Looser than
	// PerpendicularToleranceDeg (10), which only sets the reported
	// axes_perpendicular flag and keeps the spec's meaning; a short axis
	// running along the long axis fails here. Phantoms: exactly 90.
	MaxAxisSkewDeg = 25.0
	// MinAxisCrossing and MaxAxisCrossing (guard 3,
	// short_axis_not_crossing): where the two axes' lines cross, as a
	// fraction of each axis from heart_top and from heart_right, lies
	// within these, so the short axis crosses the long axis segment away
	// from its ends and the long axis divides the short one, rather than
	// one lying beside the other. Phantoms: 0.30-0.56 along the long axis,
	// 0.39-0.62 along the short.
	MinAxisCrossing = 0.1
	MaxAxisCrossing = 0.9

	// MinLongAxisFromSpineDeg (guard 4, heart_top_not_dorsal): heart_top
	// (the carina, at the heart base) is nearer the A-B line (the spine,
	// dorsal) than heart_bottom (the apex, ventral), and the long axis
	// leaves the spine line at this angle or more. Phantoms: 42-83
	// degrees. Top and bottom swapped, or an apex stopped beside the
	// carina, fail.
	MinLongAxisFromSpineDeg = 15.0

	// MinVLASAngleDeg and MaxVLASAngleDeg (guard 5, vlas_misplaced, code
	// 4): seen from heart_top, the VLAS point lies on the caudal side of
	// the long axis (the heart_left side) at an angle from the long axis
	// (towards the apex = 0, perpendicular caudal = 90) within these. The
	// VLAS point (caudal border of the left atrium where it meets the
	// caudal vena cava, Malcolm et al. 2018) is caudal and somewhat
	// ventral of the carina; phantoms: 44-62 degrees.
	MinVLASAngleDeg = 10.0
	MaxVLASAngleDeg = 110.0
	// MaxVLASAlongLongAxis (guard 5, vlas_misplaced): the VLAS point's
	// projection on the long axis, as a fraction of it from heart_top, is
	// at most this: the left atrium is in the heart's basal (dorsal) half.
	// Phantoms: 0.08-0.45.
	MaxVLASAlongLongAxis = 0.6

	// MinVHS and MaxVHS (guard 6, vhs_out_of_range): a clinically possible
	// VHS for dogs and cats. Cats 7.5 +/- 0.3 (Litster and Buchanan 2000),
	// healthy dogs 9.7 +/- 0.5 (Buchanan and Bucheler 1995) with breed
	// means up to about 12.7 (English Bulldog) and severe cardiomegaly
	// rarely above 14. Held-out phantoms: 7.6-14.5. Outside: code 5.
	MinVHS = 6.0
	MaxVHS = 15.0
	// MinVLAS and MaxVLAS (guard 6, vlas_out_of_range, code 4): the spec's
	// normal range is below 2.5, with 2.5 or more suggesting left atrial
	// enlargement; 4.5 is nearly twice that bound. Held-out phantoms:
	// 1.1-3.9.
	MinVLAS = 0.8
	MaxVLAS = 4.5

	// MaxSpreadForVHS (guard 7, spread_too_high): a reported spread above
	// this gives code 5. Calibrated on the generalisation world, the
	// first generator's phantoms (sim/phantom.py, validation seeds), which the
	// models never trained on: the largest round cut under which no
	// returned VHS errs by more than 1.5 v. Re-derived in session 10 for
	// the v3.2 landmarks with the three-member validity classifier (which
	// lets more of those phantoms through): 0.009 would return 14 of 200
	// with one error of 1.69 v; 0.0085 returns 12 (MAE 0.42, max 0.96).
	// On the simulator's own validation radiographs it keeps all 73 that
	// 0.009 kept (their largest spread is 0.0081); the three real
	// radiographs in shared/realref gave 0.020-0.032.
	// models/train/cardiac/calibrate_spread.py, model card.
	MaxSpreadForVHS = 0.0085
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
	// Guards is CheckPlausibility of the reported landmarks and spread.
	// Decide also checks the VHS and VLAS ranges and the spread itself, so
	// evidence built without it still meets guards 6 and 7.
	Guards GuardResult
	// Column is the column route's evidence (nil on the span route):
	// then Spread (the heart points' spread, HeartSpread) sets the
	// confidence level only, the members' VHS must agree within
	// MaxHeartVHSSD and the column must be found with a score of at
	// least MinColumnScore.
	Column *ColumnEvidence
	// SpreadBound is the bound on the route's spread: guard 7's on the
	// span route (Spread), heart_points_disagree's on the column route
	// (Column.HeartVHSSD). 0 means the default, MaxSpreadForVHS or
	// MaxHeartVHSSD; a model version may name its own (Engine.SpreadBound);
	// +Inf leaves the bound out (Options.NoSpreadBound).
	SpreadBound float64
}

// spreadBound is e.SpreadBound, or the route's default where it is 0.
func (e Evidence) spreadBound() float64 {
	switch {
	case e.SpreadBound != 0:
		return e.SpreadBound
	case e.Column != nil:
		return MaxHeartVHSSD
	}
	return MaxSpreadForVHS
}

// ColumnEvidence is what the column route measured.
type ColumnEvidence struct {
	Found      bool    // a column was found dorsal to the heart
	Score      float64 // its repeat's score (Column.Score)
	HeartVHSSD float64 // the members' VHS disagreement (HeartVHSSD), vertebrae
	SpanRatio  float64 // the column's v over the members' |A-B| / 6
	// PeriodRatio is the column's period over MeasureColumnPeriod's along
	// the members' A-B: 0 or NaN where that was not found or scored under
	// MinLinePeriodScore (then not checked).
	PeriodRatio float64
	// Silhouette is whether a silhouette model gave the short axis; then
	// LongAxisSD (the members' long-axis scatter, LongAxisSD, vertebrae)
	// is checked against MaxLongAxisSD in place of HeartVHSSD.
	Silhouette bool
	LongAxisSD float64
}

// Decide returns the result code for the evidence and, for codes 4 and 5,
// the guard that decided it, checking in this order:
//
//	0  p_radiograph is NaN, or (for a valid image) Finite is false
//	6  p_radiograph < ValidityThreshold
//	5  PRadiograph < ValidityConfident (radiograph_uncertain),
//	   CorePeak < MinCorePeak (landmarks_not_found), Vertebra < MinVertebra
//	   (vertebra_degenerate), Guards.VHS set (plausibility guards 1-4, 6, 7),
//	   VHS outside [MinVHS, MaxVHS], or Spread > MaxSpreadForVHS
//	4  VLASPeak < MinVLASPeak (vlas_peak_low), VLASDispersion >
//	   MaxVLASDispersion (vlas_dispersion_high), Guards.VLAS set (guards 5
//	   and 6), or VLAS outside [MinVLAS, MaxVLAS]
//	1, 2, 3  ConfidenceFor(Spread) is optimal, good, review
//
// The guard is GuardNone for codes 0-3 and 6. Code 7 is never decided
// here; see Result.MarkPoPCorrectionFailed. Guard 8
// (vertebral_period_mismatch) needs the image, so Predict checks it after
// Decide on codes 1-4.
func Decide(e Evidence) (Code, Guard) {
	if math.IsNaN(e.PRadiograph) {
		return CodeUnexpected, GuardNone
	}
	if e.PRadiograph < ValidityThreshold {
		return CodeRejected, GuardNone
	}
	if !e.Finite {
		return CodeUnexpected, GuardNone
	}
	if g := e.vhsGuard(); g != GuardNone {
		return CodeNoLandmarks, g
	}
	if g := e.vlasGuard(); g != GuardNone {
		return CodeNoVLAS, g
	}
	switch ConfidenceFor(e.Spread) {
	case ConfidenceOptimal:
		return CodeHighConfidence, GuardNone
	case ConfidenceGood:
		return CodeModerate, GuardNone
	}
	return CodeReview, GuardNone
}

// vhsGuard is the first reason to withhold VHS and VLAS (code 5).
func (e Evidence) vhsGuard() Guard {
	switch {
	case e.PRadiograph < ValidityConfident:
		return GuardRadiographUncertain
	case e.CorePeak < MinCorePeak:
		return GuardLandmarksNotFound
	case e.Column != nil && !e.Column.Found:
		return GuardColumnNotFound
	case e.Vertebra < MinVertebra:
		return GuardVertebraDegenerate
	case e.Guards.VHS != GuardNone:
		return e.Guards.VHS
	}
	if g := guardVHSRange(e.VHS); g != GuardNone {
		return g
	}
	if e.Column == nil {
		return guardSpread(e.Spread, e.spreadBound())
	}
	switch {
	case e.Column.Silhouette && !(e.Column.LongAxisSD <= MaxLongAxisSD):
		return GuardHeartPointsDisagree
	case !e.Column.Silhouette && !(e.Column.HeartVHSSD <= e.spreadBound()):
		return GuardHeartPointsDisagree
	case !(e.Column.Score >= MinColumnScore):
		return GuardColumnWeak
	case !(e.Column.SpanRatio < MaxColumnSpanRatio && e.Column.SpanRatio > 1/MaxColumnSpanRatio):
		return GuardColumnSpanDisagree
	case e.Column.PeriodRatio > 0 && (e.Column.PeriodRatio > MaxColumnPeriodRatio || e.Column.PeriodRatio < 1/MaxColumnPeriodRatio):
		return GuardColumnPeriodDisagree
	}
	return GuardNone
}

// vlasGuard is the first reason to withhold VLAS only (code 4).
func (e Evidence) vlasGuard() Guard {
	switch {
	case e.VLASPeak < MinVLASPeak:
		return GuardVLASPeakLow
	case e.VLASDispersion > MaxVLASDispersion:
		return GuardVLASDispersed
	case e.Guards.VLAS != GuardNone:
		return e.Guards.VLAS
	}
	return guardVLASRange(e.VLAS)
}
