package cardiac

import "math"

// Guard names the check that withheld a measurement: for code 5 why
// neither VHS nor VLAS was returned, for code 4 why VLAS was not.
// GuardNone means nothing was withheld. The names are stable identifiers
// for the UI and the CLI; the JSON response does not carry them (the spec
// fixes its fields). docs/cardiac.md, "Plausibility guards", explains each.
type Guard string

// GuardNone: no guard failed.
const GuardNone Guard = ""

// Detection checks, before the plausibility guards (code 5 / code 4).
const (
	GuardRadiographUncertain Guard = "radiograph_uncertain" // ValidityThreshold <= p_radiograph < ValidityConfident
	GuardLandmarksNotFound   Guard = "landmarks_not_found"  // mean core peak < MinCorePeak
	GuardVertebraDegenerate  Guard = "vertebra_degenerate"  // v / max(W,H) < MinVertebra
	GuardVLASPeakLow         Guard = "vlas_peak_low"        // VLAS peak < MinVLASPeak (code 4)
	GuardVLASDispersed       Guard = "vlas_dispersion_high" // VLAS dispersion > MaxVLASDispersion (code 4)
)

// Plausibility guards, numbered as in docs/cardiac.md. All give code 5
// except GuardVLASMisplaced and GuardVLASOutOfRange (code 4).
const (
	GuardVertebraeNotAlongSpine Guard = "vertebrae_not_along_spine" // 1: A->B against the heart's cranial->caudal direction
	GuardVertebraeNotDorsal     Guard = "vertebrae_not_dorsal"      // 1: heart not wholly on one side of A-B, or carina not under the span
	GuardAxesOutOfScale         Guard = "axes_out_of_scale"         // 2: long or short axis implausible in vertebral units
	GuardLongAxisTooShort       Guard = "long_axis_too_short"       // 2: long axis < MinLongToShort x short axis
	GuardShortAxisSkewed        Guard = "short_axis_skewed"         // 3: axes meet further than MaxAxisSkewDeg from 90 degrees
	GuardShortAxisNotCrossing   Guard = "short_axis_not_crossing"   // 3: the axes do not cross inside each other
	GuardHeartTopNotDorsal      Guard = "heart_top_not_dorsal"      // 4: carina not nearer the spine than the apex
	GuardVLASMisplaced          Guard = "vlas_misplaced"            // 5: VLAS point not caudal of the long axis in the heart base (code 4)
	GuardVHSOutOfRange          Guard = "vhs_out_of_range"          // 6: VHS outside [MinVHS, MaxVHS]
	GuardVLASOutOfRange         Guard = "vlas_out_of_range"         // 6: VLAS outside [MinVLAS, MaxVLAS] (code 4)
	GuardSpreadTooHigh          Guard = "spread_too_high"           // 7: spread > MaxSpreadForVHS
	// GuardVertebralPeriodMismatch (8) looks at the image, not the
	// landmarks: Predict checks it last, on results that would return a
	// VHS (VertebralPeriodScore <= MinVertebralPeriodScore).
	GuardVertebralPeriodMismatch Guard = "vertebral_period_mismatch"
	// GuardVertebralSpanNotSix (9) looks at the image too, after guard 8:
	// the column's own period along A-B (CountSpan) counts a span more
	// than SpanCountTolerance vertebrae away from six.
	GuardVertebralSpanNotSix Guard = "vertebral_span_not_six"
	// GuardColumnNotFound (column route): no band dorsal to the heart
	// repeats like a vertebral column, so v cannot be measured.
	GuardColumnNotFound Guard = "column_not_found"
	// GuardColumnWeak (column route): the column's repeat scores below
	// MinColumnScore.
	GuardColumnWeak Guard = "column_weak"
	// GuardColumnSpanDisagree (column route): the column's v and the
	// members' |A-B| / 6 differ by MaxColumnSpanRatio or more: one of
	// them is likely read at a multiple of the true vertebra.
	GuardColumnSpanDisagree Guard = "column_span_disagree"
	// GuardColumnPeriodDisagree (column route): the column's period and
	// the period the image repeats at along the members' own A-B
	// (MeasureColumnPeriod, where that repeat is plain) differ by more
	// than MaxColumnPeriodRatio: the column found is likely not the
	// vertebral bodies.
	GuardColumnPeriodDisagree Guard = "column_period_disagree"
	// GuardHeartPointsDisagree (column route): the members' heart
	// disagrees over the column's v: the VHS of their own heart points
	// spreads more than MaxHeartVHSSD, or, where the silhouette gives the
	// short axis, their long axes spread more than MaxLongAxisSD.
	GuardHeartPointsDisagree Guard = "heart_points_disagree"
	// GuardPossibleScreenPhoto is set by the PoP-aware prediction
	// (app/capture.PredictImage), not by Decide: the image was measured as
	// a file, but it may be a screen photographed at an angle
	// (pop.PossibleScreen), whose perspective would distort the numbers.
	GuardPossibleScreenPhoto Guard = "possible_screen_photo"
	// GuardScreenPhotoQuality is set by the PoP-aware prediction
	// (app/capture.PredictImage), not by Decide: a single screen photo
	// was corrected, but a capture session would not keep the frame
	// (frame quality problems, or uncertain learned corners), so the
	// rectified radiograph may be distorted (docs/pop.md, "Single
	// screen photos").
	GuardScreenPhotoQuality Guard = "screen_photo_quality"
	// GuardScreenPhotoUnstable is set by the PoP-aware prediction too: a
	// single screen photo measured mirrored (PredictOptions.Mirror) gave
	// no VHS or one more than 0.3 v away, so the models are unsure of the
	// photo though their five members agree (docs/pop.md, "Single screen
	// photos").
	GuardScreenPhotoUnstable Guard = "screen_photo_unstable"
)

var guardDescriptions = map[Guard]string{
	GuardRadiographUncertain:     "the image may not be a lateral thoracic radiograph",
	GuardLandmarksNotFound:       "the landmarks were not found",
	GuardVertebraDegenerate:      "the vertebral span is too short to measure",
	GuardVLASPeakLow:             "the VLAS landmark was not found",
	GuardVLASDispersed:           "the models disagree on the VLAS landmark",
	GuardVertebraeNotAlongSpine:  "Vertebra A to B does not run cranial to caudal like the heart",
	GuardVertebraeNotDorsal:      "Vertebra A-B does not lie dorsal to the heart",
	GuardAxesOutOfScale:          "the heart axes are implausible against the T4-T9 span",
	GuardLongAxisTooShort:        "the long axis is implausibly short against the short axis",
	GuardShortAxisSkewed:         "the short axis is far from perpendicular to the long axis",
	GuardShortAxisNotCrossing:    "the short axis does not cross the long axis",
	GuardHeartTopNotDorsal:       "heart_top is not dorsal to heart_bottom",
	GuardVLASMisplaced:           "the VLAS point is not caudal of the long axis at the heart base",
	GuardVHSOutOfRange:           "the VHS is outside the clinically possible range",
	GuardVLASOutOfRange:          "the VLAS is outside the clinically possible range",
	GuardSpreadTooHigh:           "the five models disagree too much",
	GuardVertebralPeriodMismatch: "the image does not show six vertebrae between Vertebra A and B",
	GuardVertebralSpanNotSix:     "Vertebra A-B does not cover six of the image's vertebrae",
	GuardColumnNotFound:          "no vertebral column was found dorsal to the heart",
	GuardColumnWeak:              "the vertebral column's repeat is too faint to measure the vertebra",
	GuardHeartPointsDisagree:     "the five models disagree on the heart's axes",
	GuardColumnSpanDisagree:      "the vertebral column's period and the models' vertebrae disagree by half or double",
	GuardColumnPeriodDisagree:    "the vertebral column's period and the period along the models' spine disagree",
	GuardPossibleScreenPhoto:     "the image may be a photo of a screen taken at an angle; photograph the screen square-on or open the file itself",
	GuardScreenPhotoUnstable:     "the measurement of the screen photo is not stable (it changes when the photo is mirrored); retake it, use a capture session, or open the file itself",
	GuardScreenPhotoQuality:      "the screen photo is not good enough to measure (blur, glare over the heart, tilt, a small screen or uncertain screen corners); retake it sharp and square-on, use a capture session, or open the file itself",
}

// Description is a short English sentence fragment saying why the guard
// withheld the measurement ("" for GuardNone; the name itself for an
// unknown guard).
func (g Guard) Description() string {
	if d, ok := guardDescriptions[g]; ok {
		return d
	}
	return string(g)
}

// GuardResult is what CheckPlausibility found.
type GuardResult struct {
	// VHS is the first failed guard that withholds VHS and VLAS (code 5),
	// GuardNone when guards 1-4, 6 (VHS) and 7 pass.
	VHS Guard
	// VLAS is the first failed guard that withholds VLAS only (code 4),
	// GuardNone when guard 5 and guard 6 (VLAS) pass. It is checked only
	// when VHS is GuardNone (a failed VHS guard withholds VLAS too).
	VLAS Guard
}

// CheckPlausibility checks landmarks (pixels of the original image) and the
// ensemble spread for anatomical plausibility before a VHS is returned
// (docs/cardiac.md, "Plausibility guards"). Guards are checked in number
// order and the first failure is reported; a guard whose quantity is
// undefined (a zero-length axis or span) passes and leaves the failure to
// the guard that measures it, and non-finite input fails. The answer does
// not change when the image is mirrored, rotated, scaled or shifted.
func CheckPlausibility(l Landmarks, spread float64) GuardResult {
	return checkPlausibilityBound(l, spread, MaxSpreadForVHS)
}

// checkPlausibilityBound is CheckPlausibility with guard 7's bound given
// (+Inf leaves guard 7 out).
func checkPlausibilityBound(l Landmarks, spread, bound float64) GuardResult {
	r := checkPlausibilityWith(l, Measure(l).Vertebra)
	if r.VHS == GuardNone {
		if g := guardSpread(spread, bound); g != GuardNone {
			return GuardResult{VHS: g}
		}
	}
	return r
}

func firstFailed(guards ...func() Guard) Guard {
	for _, f := range guards {
		if g := f(); g != GuardNone {
			return g
		}
	}
	return GuardNone
}

// spineFrame is the A-B line: its origin A, unit direction A->B, length.
type spineFrame struct {
	a    Point
	dir  Point
	span float64
}

func newSpineFrame(l Landmarks) (spineFrame, bool) {
	ab := sub(l[VertebraB], l[VertebraA])
	span := norm(ab)
	if !(span > 0) || math.IsInf(span, 0) {
		return spineFrame{}, false
	}
	return spineFrame{a: l[VertebraA], dir: scaled(ab, 1/span), span: span}, true
}

// side is p's signed distance from the A-B line; its sign says which side
// (which sign is which flips with mirroring, so only compare signs).
func (s spineFrame) side(p Point) float64 { return cross(s.dir, sub(p, s.a)) }

// along is the fraction of |A-B| from A of p's foot on the A-B line.
func (s spineFrame) along(p Point) float64 { return dot(s.dir, sub(p, s.a)) / s.span }

// guardSpine is guard 1: the vertebral span runs from cranial to caudal
// like the heart's short axis, and it is dorsal of the heart: all four
// heart points on one side of the A-B line, the carina's foot on that line
// within [MinCarinaAlongSpine, MaxCarinaAlongSpine] of the span.
func guardSpine(l Landmarks) Guard {
	s, ok := newSpineFrame(l)
	if !ok {
		return GuardNone // zero span: guard 2 (and MinVertebra) fail it
	}
	caudal := sub(l[HeartLeft], l[HeartRight])
	if c := norm(caudal); c > 0 {
		if !(dot(s.dir, caudal) >= math.Cos(MaxSpineToShortAxisDeg*math.Pi/180)*c) {
			return GuardVertebraeNotAlongSpine
		}
	}
	top := s.side(l[HeartTop])
	for _, k := range []int{HeartTop, HeartBottom, HeartRight, HeartLeft} {
		if !(s.side(l[k])*top > 0) {
			return GuardVertebraeNotDorsal
		}
	}
	if t := s.along(l[HeartTop]); !(t >= MinCarinaAlongSpine && t <= MaxCarinaAlongSpine) {
		return GuardVertebraeNotDorsal
	}
	return GuardNone
}

// guardScale is guard 2: both heart axes plausible in vertebral units and
// the long axis not much shorter than the short axis.
func guardScale(g Geometry) Guard {
	long, short := g.LongAxis/g.Vertebra, g.ShortAxis/g.Vertebra
	if !(long >= MinLongAxisV && long <= MaxLongAxisV && short >= MinShortAxisV && short <= MaxShortAxisV) {
		return GuardAxesOutOfScale
	}
	if !(g.LongAxis >= MinLongToShort*g.ShortAxis) {
		return GuardLongAxisTooShort
	}
	return GuardNone
}

// guardAxes is guard 3: the axes meet within MaxAxisSkewDeg of a right
// angle, and each crosses the other within [MinAxisCrossing,
// MaxAxisCrossing] of its length.
func guardAxes(l Landmarks, g Geometry) Guard {
	if g.LongAxis == 0 || g.ShortAxis == 0 {
		return GuardNone // zero-length axis: guard 2 fails it
	}
	if !(g.AxisAngle >= 90-MaxAxisSkewDeg) {
		return GuardShortAxisSkewed
	}
	long := sub(l[HeartBottom], l[HeartTop])
	short := sub(l[HeartLeft], l[HeartRight])
	w := sub(l[HeartRight], l[HeartTop])
	den := cross(long, short)
	// heart_top + s*long = heart_right + u*short
	s, u := cross(w, short)/den, cross(w, long)/den
	if !(s >= MinAxisCrossing && s <= MaxAxisCrossing && u >= MinAxisCrossing && u <= MaxAxisCrossing) {
		return GuardShortAxisNotCrossing
	}
	return GuardNone
}

// guardHeartTop is guard 4: going from heart_top to heart_bottom moves away
// from the A-B line (the spine is dorsal, the apex ventral) by at least
// sin(MinLongAxisFromSpineDeg) of the long axis.
func guardHeartTop(l Landmarks) Guard {
	s, ok := newSpineFrame(l)
	long := l[HeartTop].Dist(l[HeartBottom])
	if !ok || long == 0 {
		return GuardNone // zero span or long axis: guard 2 fails it
	}
	top, bottom := s.side(l[HeartTop]), s.side(l[HeartBottom])
	if top < 0 {
		top, bottom = -top, -bottom
	}
	if !(bottom-top >= math.Sin(MinLongAxisFromSpineDeg*math.Pi/180)*long) {
		return GuardHeartTopNotDorsal
	}
	return GuardNone
}

// guardVLASPosition is guard 5: seen from heart_top, the VLAS point is on
// the caudal (heart_left) side of the long axis at an angle from it within
// [MinVLASAngleDeg, MaxVLASAngleDeg], and its projection on the long axis
// is at most MaxVLASAlongLongAxis of it.
func guardVLASPosition(l Landmarks) Guard {
	long := sub(l[HeartBottom], l[HeartTop])
	n := norm(long)
	if !(n > 0) || math.IsInf(n, 0) {
		return GuardNone // zero long axis: guard 2 withholds everything
	}
	along := scaled(long, 1/n)
	caudal := Point{-along.Y, along.X}
	if dot(caudal, sub(l[HeartLeft], l[HeartRight])) < 0 {
		caudal = scaled(caudal, -1)
	}
	w := sub(l[VLASPoint], l[HeartTop])
	angle := math.Atan2(dot(w, caudal), dot(w, along)) * 180 / math.Pi
	if !(angle >= MinVLASAngleDeg && angle <= MaxVLASAngleDeg && dot(w, along) <= MaxVLASAlongLongAxis*n) {
		return GuardVLASMisplaced
	}
	return GuardNone
}

// guardVHSRange is guard 6 for VHS (code 5).
func guardVHSRange(vhs float64) Guard {
	if !(vhs >= MinVHS && vhs <= MaxVHS) {
		return GuardVHSOutOfRange
	}
	return GuardNone
}

// guardVLASRange is guard 6 for VLAS (code 4).
func guardVLASRange(vlas float64) Guard {
	if !(vlas >= MinVLAS && vlas <= MaxVLAS) {
		return GuardVLASOutOfRange
	}
	return GuardNone
}

// guardSpread is guard 7 with its bound (MaxSpreadForVHS, or a model
// version's own: Options.SpreadBound).
func guardSpread(spread, bound float64) Guard {
	if !(spread <= bound) {
		return GuardSpreadTooHigh
	}
	return GuardNone
}

// guardVertebralPeriod is guard 8 on a VertebralPeriodScore.
func guardVertebralPeriod(score float64) Guard {
	if !(score > MinVertebralPeriodScore) {
		return GuardVertebralPeriodMismatch
	}
	return GuardNone
}

func sub(p, q Point) Point            { return Point{p.X - q.X, p.Y - q.Y} }
func scaled(p Point, f float64) Point { return Point{p.X * f, p.Y * f} }
func dot(p, q Point) float64          { return p.X*q.X + p.Y*q.Y }
func cross(p, q Point) float64        { return p.X*q.Y - p.Y*q.X }
func norm(p Point) float64            { return math.Hypot(p.X, p.Y) }
