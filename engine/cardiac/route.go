package cardiac

import (
	"image"
	"math"
)

// The column route (docs/cardiac.md, "The column route"): the landmark
// models give the heart points; the vertebral unit v comes from the
// column the image shows (FindColumn), and Vertebra A and B are placed
// on that column. The heart points' agreement and the column's repeat
// are judged separately, each by its own bound.
const (
	// MaxHeartVHSSD (guard heart_points_disagree): the members' VHS
	// over the column's v (HeartVHSSD) spreading more than this, in
	// vertebrae (standard deviation), withholds the VHS (code 5). The
	// disagreement is judged in the unit the result is read in, not in
	// pixels of the image. Chosen on validation sets only
	// (docs/cardiac.md, "The column route").
	MaxHeartVHSSD = 0.11
	// MaxColumnSpanRatio (guard column_span_disagree): the column's v and
	// the members' own |A-B| / 6 differing by this factor or more, either
	// way, withholds the VHS (code 5). The members' span is no measure of
	// v on real radiographs, but a column read at twice (or half) its
	// period disagrees with it by about that factor; 1.5 withheld every
	// column more than 30 % off on the three validation sets and no
	// returned number (docs/cardiac.md, "The column route").
	MaxColumnSpanRatio = 1.5
	// MaxColumnPeriodRatio (guard column_period_disagree): the column's
	// period and MeasureColumnPeriod's along the members' A-B differing by
	// more than this factor, either way, withholds the VHS (code 5), where
	// that period scores at least MinLinePeriodScore. On three fresh draws
	// of the evaluation sets every column read long behind a number over
	// 1.5 v disagreed by 1.16-1.23 (experiments/2026-11-29-column-period-check.md).
	MaxColumnPeriodRatio = 1.12
	// MinLinePeriodScore: below this score the period along the members'
	// A-B is no reading of the spine, and column_period_disagree does not
	// judge.
	MinLinePeriodScore = 0.3
)

// heartPoints are the four points VHS is measured between.
var heartPoints = [...]int{HeartTop, HeartBottom, HeartRight, HeartLeft}

// HeartSpread is the ensemble's disagreement on the heart's axes: the
// mean over heart_top, heart_bottom, heart_right and heart_left of
// Dispersion with scale max(W,H). It is the spread the column route
// reports, since its Vertebra A and B come from the image, not from the
// members.
func HeartSpread(models []Landmarks, w, h int) float64 {
	return meanDispersion(models, w, h, heartPoints[:])
}

// HeartVHSSD is the standard deviation over the members of the VHS each
// member's own heart points give over the vertebral unit v (pixels):
// how far the members disagree on the number itself. NaN for no members
// or no v.
func HeartVHSSD(models []Landmarks, v float64) float64 {
	return membersSD(models, v, func(m Landmarks) float64 {
		return m[HeartTop].Dist(m[HeartBottom]) + m[HeartRight].Dist(m[HeartLeft])
	})
}

// LongAxisSD is the standard deviation over the members of each one's
// long axis (carina to apex) over v, in vertebrae: where the silhouette
// gives the short axis, the members' heart is the long axis alone. NaN
// for no members or no v.
func LongAxisSD(models []Landmarks, v float64) float64 {
	return membersSD(models, v, func(m Landmarks) float64 { return m[HeartTop].Dist(m[HeartBottom]) })
}

// membersSD is the standard deviation over the members of length(m) / v;
// NaN for no members or no v.
func membersSD(models []Landmarks, v float64, length func(Landmarks) float64) float64 {
	if len(models) == 0 || !(v > 0) {
		return math.NaN()
	}
	xs := make([]float64, len(models))
	for i, m := range models {
		xs[i] = length(m) / v
	}
	return stdDev(xs)
}

// measureColumn re-derives a result newResult made from the models'
// landmarks on the column route: it finds the column in img with the
// ensemble mean as the prior, puts Vertebra A and B on it, and decides the
// code again from the heart points' own peaks and spread, the column's
// unit and score, and the plausibility guards on the new landmarks.
// Rejected results and code 0 are left as they are. An image the
// validity classifier was unsure of (p_radiograph under
// ValidityConfident) on which no column is found is rejected (code 6).
func (r *Result) measureColumn(img image.Image) {
	r.measureColumnWith(img, MaxHeartVHSSD, ColumnVertebraFactor)
}

// measureColumnWith is measureColumn with the heart_points_disagree
// bound given (+Inf: none) and the model version's column factor: v =
// factor x the column's period (Engine.ColumnVertebraFactor).
func (r *Result) measureColumnWith(img image.Image, bound, factor float64) {
	if r.Rejected || r.Code == CodeUnexpected || len(r.ModelLandmarks) == 0 {
		return
	}
	w, h := r.Width, r.Height
	scale := float64(max(w, h))
	prior := EnsembleMean(r.ModelLandmarks)
	col, found := FindColumn(img, prior)
	v := math.NaN()
	periodRatio := math.NaN() // not judged
	if found {
		col.V = col.Period * factor // B() and every use below follow
		v = col.V
		if line, ok := MeasureColumnPeriod(img, prior[VertebraA], prior[VertebraB]); ok && line.Score >= MinLinePeriodScore {
			periodRatio = col.Period / line.Pixels
		}
	}
	heartSD := HeartVHSSD(r.ModelLandmarks, v) // NaN without a column
	longSD := LongAxisSD(r.ModelLandmarks, v)
	if (!found || col.Score < MinColumnScore) && r.ClassifierConfidence < ValidityConfident {
		// The classifier doubts the image and no thoracic column repeats
		// plainly (none, or one too weak to measure) dorsal to where the
		// models put a heart: not a lateral thorax (code 6, nothing drawn),
		// rather than a code 5 with landmarks on a document or a scan of
		// something else.
		r.rejectAsNotThorax()
		return
	}
	if found && r.ClassifierConfidence < ValidityTrusted && heartSD > MaxThoraxHeartVHSSD {
		// A column-like repeat, but the members' heart points scatter as
		// on no radiograph: a grid or a scan of something else.
		r.rejectAsNotThorax()
		return
	}
	l := r.Landmarks
	if found {
		r.Column = &col
		l[VertebraA], l[VertebraB] = col.A(), col.B()
		l = clampTo(l, w, h)
	}
	membersVHS := math.NaN() // the members' heart over v, where the silhouette gives the short axis
	silhouette := found && r.Silhouette != nil
	if silhouette {
		// The hybrid heart: the members read the long axis (carina and
		// apex) on every generator tried, the silhouette the short axis,
		// which the members do not read off the simulator
		// (docs/cardiac.md, "The heart's silhouette"). Only heart_right and
		// heart_left are replaced.
		membersVHS = measureWith(l, v).VHS
		right, left := r.Silhouette.Right, r.Silhouette.Left
		if right.Dist(l[HeartRight])+left.Dist(l[HeartLeft]) > right.Dist(l[HeartLeft])+left.Dist(l[HeartRight]) {
			// which end is cranial: the members know the head's side
			right, left = left, right
		}
		l[HeartRight], l[HeartLeft] = right, left
		l = clampTo(l, w, h)
	}
	r.Landmarks = l
	r.Geometry = measureWith(l, v)
	r.SilhouetteGap = math.Abs(r.Geometry.VHS - membersVHS) // NaN where no silhouette measured
	r.Spread = Round(HeartSpread(r.ModelLandmarks, w, h), DecimalsSpread)
	r.HeartVHSSD = heartSD
	r.Confidence = ConfidenceFor(r.Spread)
	var core float64
	for _, k := range heartPoints {
		core += r.Peaks[k]
	}
	var guards GuardResult // no column: Decide withholds the VHS for that
	if found {
		// Guards 1-6 in vertebral units of the column, not of |A-B| / 6
		// (they differ only where the column leaves the image); the heart
		// spread has its own bound in Decide.
		guards = checkPlausibilityWith(l, v)
	}
	r.Code, r.Guard = Decide(Evidence{
		PRadiograph:    r.ClassifierConfidence,
		Finite:         isFinite(r.Spread),
		CorePeak:       core / float64(len(heartPoints)),
		VLASPeak:       r.Peaks[VLASPoint],
		VLASDispersion: Dispersion(r.ModelLandmarks, VLASPoint, scale),
		Vertebra:       v / scale,
		VHS:            r.Geometry.VHS,
		VLAS:           r.Geometry.VLAS,
		Spread:         r.Spread,
		Guards:         guards,
		Column: &ColumnEvidence{Found: found, Score: col.Score, HeartVHSSD: r.HeartVHSSD,
			SpanRatio: v / (prior[VertebraA].Dist(prior[VertebraB]) / 6), PeriodRatio: periodRatio,
			Silhouette: silhouette, LongAxisSD: longSD},
		SpreadBound: bound,
	})
	r.GuardDetail = ""
	r.AxesPerpendicular = r.Geometry.AxesPerpendicular()
	r.setNumbers()
}

// measureWith is Measure with the vertebral unit v given (NaN: none).
func measureWith(l Landmarks, v float64) Geometry {
	g := Measure(l)
	g.Vertebra = v
	g.VHS = (g.LongAxis + g.ShortAxis) / v
	g.VLAS = g.VLASDist / v
	return g
}

// checkPlausibilityWith is CheckPlausibility of l with the vertebral unit
// v in place of |A-B| / 6, without the spread guard (7).
func checkPlausibilityWith(l Landmarks, v float64) GuardResult {
	g := measureWith(l, v)
	if f := firstFailed(
		func() Guard { return guardSpine(l) },
		func() Guard { return guardScale(g) },
		func() Guard { return guardAxes(l, g) },
		func() Guard { return guardHeartTop(l) },
		func() Guard { return guardVHSRange(g.VHS) },
	); f != GuardNone {
		return GuardResult{VHS: f}
	}
	return GuardResult{VLAS: firstFailed(
		func() Guard { return guardVLASPosition(l) },
		func() Guard { return guardVLASRange(g.VLAS) },
	)}
}

// rejectAsNotThorax turns r into a rejection (code 6, nothing drawn),
// keeping its size and the classifier's output.
func (r *Result) rejectAsNotThorax() {
	*r = Result{Width: r.Width, Height: r.Height, ClassifierConfidence: r.ClassifierConfidence,
		Rejected: true, Code: CodeRejected, Spread: math.NaN()}
}
