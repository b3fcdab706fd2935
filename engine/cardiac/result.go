package cardiac

import (
	"fmt"
	"image"
	"math"
)

// Result is one image's measurement. Positions are in pixels of the
// original image; Response converts them to the spec's normalized form.
type Result struct {
	Width, Height int

	// ClassifierConfidence is the validity model's p_radiograph, unrounded.
	ClassifierConfidence float64
	Rejected             bool // result code 6

	// Landmarks is the ensemble mean, clamped into the image. Zero when
	// rejected.
	Landmarks Landmarks
	// ModelLandmarks are each model's landmarks (unclamped), in manifest order.
	ModelLandmarks []Landmarks
	// Peaks is each landmark's peak averaged over the models.
	Peaks [NumLandmarks]float64
	// Geometry is measured on Landmarks.
	Geometry Geometry

	// Spread is the ensemble spread, rounded to DecimalsSpread; NaN when
	// it could not be computed.
	Spread     float64
	Confidence Confidence

	Code Code
	// Guard is why VHS and VLAS (code 5) or VLAS alone (code 4) were
	// withheld, e.g. GuardVertebraeNotAlongSpine; GuardNone for every
	// other code. Not part of the spec's response body.
	Guard Guard
	// GuardDetail says what the guard saw, where Withhold was given it
	// (e.g. a screen photo's quality problems); "" otherwise. Not part of
	// the spec's response body.
	GuardDetail string
	// VertebralPeriod is VertebralPeriodScore of the image along the
	// reported Vertebra A-B, nil where it was not measured: it is measured
	// only when every other check would return a VHS (guard 8). Not part
	// of the spec's response body.
	VertebralPeriod *float64
	// VertebralSpan is CountSpan along the reported Vertebra A-B, nil
	// where it was not counted: only when guard 8 passed on a result
	// that would return a VHS (guard 9). Not part of the spec's response
	// body.
	VertebralSpan *SpanCount
	// HeartVHSSD is the column route's HeartVHSSD: how far the members'
	// VHS disagree, in vertebrae; 0 on the span route, NaN where no
	// column was found. Not part of the spec's response body.
	HeartVHSSD float64
	// Silhouette is the heart's axes measured on the silhouette model's
	// map (original pixels), nil where the engine has no silhouette
	// model or the map held too little heart; where set, the column route
	// reports its short axis (heart_right, heart_left). Not part of the
	// spec's response body.
	Silhouette *HeartAxes
	// SilhouetteGap is |VHS with the silhouette's short axis - VHS from
	// the members' own heart points|, both over the column's v (the two
	// short axes' difference); NaN where either is missing. Diagnostic
	// only: no guard reads it. Not part of the spec's response body.
	SilhouetteGap float64
	// Column is the thoracic column FindColumn measured v on (the column
	// route), nil where it was not found or not sought (the span route,
	// rejected images). Not part of the spec's response body.
	Column *Column
	// VHS and VLAS are rounded to DecimalsScore; nil where the code says
	// they could not be calculated.
	VHS, VLAS *float64

	LandmarksDetected bool // a VHS was measured (codes 1-4)
	AxesPerpendicular bool // Geometry.AxesPerpendicular
	PopDetected       bool // set by the caller's PoP pipeline

	// Rendered is the annotated JPEG when PredictOptions.Render was set
	// and the image was not rejected.
	Rendered []byte

	// LevelledDeg is the turn (degrees counter-clockwise on screen) under
	// which the landmarks were measured because the spine was tilted
	// (level.go); 0 when the image was measured as it is. Positions are
	// in the image's own pixels either way. Not part of the spec's
	// response body.
	LevelledDeg float64
}

// Offset makes a result measured on a sub-image describe the whole
// image: every position moves by d (the sub-image's corner in the whole
// image's pixels, counted from its bounds' corner) and Width, Height
// become the whole image's w, h. Distances, VHS and VLAS do not change.
// app/capture measures the displayed image of a viewer screenshot this
// way. Rendered is left as it was; render again on the whole image.
func (r *Result) Offset(d image.Point, w, h int) {
	move := func(l *Landmarks) {
		for k := range l {
			l[k].X += float64(d.X)
			l[k].Y += float64(d.Y)
		}
	}
	if !r.Rejected {
		move(&r.Landmarks)
		for i := range r.ModelLandmarks {
			move(&r.ModelLandmarks[i])
		}
	}
	r.Width, r.Height = w, h
}

// MarkPoPCorrectionFailed turns the result into code 7 (picture-of-picture
// detected, perspective correction failed): PopDetected is set and VHS and
// VLAS are withdrawn, so the result is not billable. The PoP pipeline calls
// it; the engine never decides code 7 by itself.
func (r *Result) MarkPoPCorrectionFailed() {
	r.Code = CodePoPFailed
	r.Guard = GuardNone
	r.PopDetected = true
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = false
}

// newResult derives a Result for a w x h image from the validity output p
// and, for a valid image, each landmark model's landmarks (pixels) and peaks.
func newResult(w, h int, p float64, models []Landmarks, peaks [][NumLandmarks]float64) *Result {
	return newResultBound(w, h, p, models, peaks, MaxSpreadForVHS)
}

// newResultBound is newResult with guard 7's bound given (+Inf: none).
func newResultBound(w, h int, p float64, models []Landmarks, peaks [][NumLandmarks]float64, bound float64) *Result {
	r := &Result{Width: w, Height: h, ClassifierConfidence: p, ModelLandmarks: models}
	if !isRadiograph(p) || len(models) == 0 {
		r.Code, _ = Decide(Evidence{PRadiograph: p}) // 6, or 0 for NaN or no models
		r.Rejected = r.Code == CodeRejected
		r.Spread = math.NaN()
		return r
	}
	scale := float64(max(w, h))
	finite := true
	for mi, l := range r.ModelLandmarks {
		for k, pt := range l {
			if !isFinite(pt.X) || !isFinite(pt.Y) || !isFinite(peaks[mi][k]) {
				finite = false
			}
		}
	}
	for k := range r.Peaks {
		for _, pk := range peaks {
			r.Peaks[k] += pk[k]
		}
		r.Peaks[k] /= float64(len(peaks))
	}
	r.Landmarks = clampTo(EnsembleMean(r.ModelLandmarks), w, h)
	r.Geometry = Measure(r.Landmarks)
	r.Spread = Round(Spread(r.ModelLandmarks, w, h), DecimalsSpread)
	finite = finite && isFinite(r.Spread)
	r.Confidence = ConfidenceFor(r.Spread)

	var core float64
	for k, pk := range r.Peaks {
		if k != VLASPoint {
			core += pk
		}
	}
	r.Code, r.Guard = Decide(Evidence{
		PRadiograph:    p,
		Finite:         finite,
		CorePeak:       core / (NumLandmarks - 1),
		VLASPeak:       r.Peaks[VLASPoint],
		VLASDispersion: Dispersion(r.ModelLandmarks, VLASPoint, scale),
		Vertebra:       r.Geometry.Vertebra / scale,
		VHS:            r.Geometry.VHS,
		VLAS:           r.Geometry.VLAS,
		Spread:         r.Spread,
		Guards:         checkPlausibilityBound(r.Landmarks, r.Spread, bound),
		SpreadBound:    bound,
	})
	r.AxesPerpendicular = finite && r.Geometry.AxesPerpendicular()
	r.setNumbers()
	return r
}

// setNumbers sets VHS, VLAS and LandmarksDetected from the code and the
// geometry: each number rounded where the code carries it, nil where not.
func (r *Result) setNumbers() {
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = r.Code.HasVHS()
	if r.Code.HasVHS() {
		v := Round(r.Geometry.VHS, DecimalsScore)
		r.VHS = &v
	}
	if r.Code.HasVLAS() {
		v := Round(r.Geometry.VLAS, DecimalsScore)
		r.VLAS = &v
	}
}

// checkImage applies the checks that look at the image itself to a
// result that would return a VHS: guard 8 (vertebral_period_mismatch),
// when VertebralPeriodScore along the reported A-B is not above
// MinVertebralPeriodScore, then guard 9 (vertebral_span_not_six), when
// CountSpan counts A-B more than SpanCountTolerance vertebrae from six.
// A failed guard makes the result code 5 and withdraws VHS and VLAS. It
// runs after Decide, so it costs nothing where no number would be
// returned anyway.
func (r *Result) checkImage(img image.Image) {
	if !r.Code.HasVHS() {
		return
	}
	// One pass over the column's bands serves both guards.
	a, b := r.Landmarks[VertebraA], r.Landmarks[VertebraB]
	s, period, ok := columnEvidence(img, a, b)
	r.VertebralPeriod = &s
	if g := guardVertebralPeriod(s); g != GuardNone {
		r.Withhold(g, "")
		return
	}
	c := spanCount(period, ok, a.Dist(b))
	r.VertebralSpan = &c
	if c.OffSix() {
		r.Withhold(GuardVertebralSpanNotSix, fmt.Sprintf("A-B covers about %.1f vertebrae of %.0f px", c.Vertebrae, c.PeriodPixels))
	}
}

// Withhold turns a result that would return a VHS (codes 1-4) into code 5
// for guard g, with detail saying what the guard saw ("" when the guard's
// description says it all; GuardDetail): VHS and VLAS are withdrawn, the
// landmarks stay for review. Other codes are left as they are.
func (r *Result) Withhold(g Guard, detail string) {
	if !r.Code.HasVHS() {
		return
	}
	r.Code, r.Guard, r.GuardDetail = CodeNoLandmarks, g, detail
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = false
}

// isRadiograph reports whether the validity output lets the landmark models
// run: p >= ValidityThreshold (false for NaN). Between it and
// ValidityConfident they run, but Decide withholds the numbers (code 5).
func isRadiograph(p float64) bool { return p >= ValidityThreshold }

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
