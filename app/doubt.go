package app

import (
	"fmt"
	"sort"
	"strings"

	"vetlens/engine/cardiac"
)

// Withheld reports whether the model withheld the values of a result it
// found landmarks for (code 5 with the model's landmarks): the points
// are on screen, but the model doubts them (DoubtedLandmarks), so no
// verdict may be drawn from them until the clinician settles them
// (CheckDoubt). A measurement reopened from the history is not withheld:
// its points are the ones saved.
func (m *Measurement) Withheld() bool {
	return m.HasModelLandmarks() && m.Base == nil && m.Result.Code == cardiac.CodeNoLandmarks
}

// WithheldVLAS reports whether the model gave VHS but withheld VLAS
// (code 4): it doubts the VLAS point, so no VLAS may be stated from it
// until the clinician moves or confirms it (CheckDoubt).
func (m *Measurement) WithheldVLAS() bool {
	return m.HasModelLandmarks() && m.Base == nil && m.Result.Code == cardiac.CodeNoVLAS
}

// heartPoints and spanPoints are the landmarks of the heart axes and of
// the vertebral span.
var (
	heartPoints = []int{cardiac.HeartTop, cardiac.HeartBottom, cardiac.HeartRight, cardiac.HeartLeft}
	spanPoints  = []int{cardiac.VertebraA, cardiac.VertebraB}
)

// DoubtedLandmarks lists the landmarks a withheld result (Withheld)
// leaves in doubt, in class order: the points the failed guard looks at
// (the vertebral span checks: Vertebra A and B; the axis checks: the four
// heart points; the checks of the heart against the span: both), and all
// seven where the guard cannot tell (the models disagree, the landmarks
// were not found, a screen photo, an unknown guard). Where only VLAS was
// withheld (WithheldVLAS) it is the VLAS point. Nil when nothing was
// withheld.
func DoubtedLandmarks(m *Measurement) []int {
	if m == nil {
		return nil
	}
	if m.WithheldVLAS() {
		return []int{cardiac.VLASPoint}
	}
	if !m.Withheld() {
		return nil
	}
	var pts []int
	switch m.Result.Guard {
	case cardiac.GuardVertebralSpanNotSix, cardiac.GuardVertebralPeriodMismatch, cardiac.GuardVertebraDegenerate,
		cardiac.GuardColumnNotFound, cardiac.GuardColumnWeak, cardiac.GuardColumnSpanDisagree, cardiac.GuardColumnPeriodDisagree:
		pts = spanPoints
	case cardiac.GuardShortAxisSkewed, cardiac.GuardShortAxisNotCrossing, cardiac.GuardHeartPointsDisagree:
		pts = heartPoints
	case cardiac.GuardVertebraeNotAlongSpine, cardiac.GuardVertebraeNotDorsal, cardiac.GuardAxesOutOfScale,
		cardiac.GuardLongAxisTooShort, cardiac.GuardHeartTopNotDorsal, cardiac.GuardVHSOutOfRange:
		pts = append(append([]int{}, heartPoints...), spanPoints...)
	default:
		pts = make([]int, cardiac.NumLandmarks)
		for k := range pts {
			pts[k] = k
		}
	}
	out := append([]int(nil), pts...)
	sort.Ints(out)
	return out
}

// Settled is, per landmark, whether the clinician placed, moved or
// confirmed it (Confirmed marks; a point away from the model's is moved).
type Settled [cardiac.NumLandmarks]bool

// Doubt is why no verdict may be drawn yet from a withheld result's
// points (CheckDoubt).
type Doubt struct {
	// Unsettled are the doubted points the clinician has neither placed,
	// moved nor confirmed, in class order.
	Unsettled []int
	// Span is the vertebral span check of the points when it counts
	// other than six vertebrae; nil when it passes or was not counted.
	Span *SpanCheck
	// VLASOnly is set where the model withheld VLAS only (code 4): VHS
	// may be stated, VLAS may not.
	VLASOnly bool
}

// Text says what the clinician still has to do, in one sentence or two.
func (d *Doubt) Text() string {
	if d.VLASOnly {
		return "No VLAS yet: the model withheld VLAS and doubts the " + LandmarkNames[cardiac.VLASPoint] + " point; move or confirm it."
	}
	var parts []string
	if len(d.Unsettled) > 0 {
		names := make([]string, len(d.Unsettled))
		for i, k := range d.Unsettled {
			names[i] = LandmarkNames[k]
		}
		parts = append(parts, "No verdict yet: the model withheld this result and doubts "+strings.Join(names, ", ")+
			"; place, move or confirm each of them.")
	}
	if d.Span != nil {
		if len(parts) == 0 {
			parts = append(parts, "No verdict yet:")
		}
		parts = append(parts, d.Span.Warning())
	}
	return strings.Join(parts, " ")
}

// CheckDoubt is the rule for a withheld model result (Withheld): a
// verdict may be drawn from the landmarks in effect, lm (the clinician's,
// of kind), only once every doubted point (DoubtedLandmarks) has been
// placed by hand, moved or confirmed (confirmed; a point away from the
// model's counts as moved, and a hand placement places all seven), and
// the vertebral span check of lm does not count other than six
// vertebrae. It returns nil when a verdict may be drawn (always, for a
// result that was not withheld), else what is missing. Review states no
// values meanwhile, and SaveMeasurement and DesktopReport refuse them.
// Where the model withheld VLAS only (code 4) the VLAS point alone is in
// doubt and Doubt.VLASOnly is set: VHS may be stated and saved, VLAS not
// until that point is moved or confirmed.
func CheckDoubt(m *Measurement, kind MeasurementKind, lm *cardiac.Landmarks, confirmed Settled) *Doubt {
	doubted := DoubtedLandmarks(m)
	if doubted == nil {
		return nil
	}
	d := &Doubt{VLASOnly: m.WithheldVLAS()}
	for _, k := range doubted {
		settled := kind == MeasurementManual && lm != nil || confirmed[k] ||
			kind.Clinician() && lm != nil && lm[k] != m.Result.Landmarks[k]
		if !settled {
			d.Unsettled = append(d.Unsettled, k)
		}
	}
	effective := lm
	if !kind.Clinician() || lm == nil {
		effective = nil
	}
	if s := m.SpanCheck(effective); !d.VLASOnly && s != nil && s.OffSix() {
		d.Span = s
	}
	if len(d.Unsettled) == 0 && d.Span == nil {
		return nil
	}
	return d
}

// checkDoubt refuses a verdict from a withheld result's doubted points
// (CheckDoubt) with KindInvalid, for the clinician's points (a model
// measurement of a withheld result has no values to refuse); where only
// VLAS is in doubt it refuses nothing and reports that VLAS must be
// left out (dropVLAS).
func (r SaveRequest) checkDoubt(kind MeasurementKind) (dropVLAS bool, err error) {
	if !kind.Clinician() {
		return false, nil
	}
	switch d := CheckDoubt(r.Measurement, kind, r.Landmarks, r.Confirmed); {
	case d == nil:
		return false, nil
	case d.VLASOnly:
		return true, nil
	default:
		return false, errf(KindInvalid, "%s", d.Text())
	}
}

// PointsBy says who placed the landmarks in effect: all the model's, all
// the clinician's, or how many of each (moved or confirmed by the
// clinician), for the panel's one current state.
func PointsBy(m *Measurement, kind MeasurementKind, lm *cardiac.Landmarks, confirmed Settled) string {
	switch {
	case m == nil || m.Result == nil:
		return ""
	case kind == MeasurementManual:
		if lm == nil {
			return "Points: being placed by hand by the clinician."
		}
		return fmt.Sprintf("Points: all %d placed by hand by the clinician.", cardiac.NumLandmarks)
	case !kind.Clinician() || lm == nil:
		if !m.HasModelLandmarks() {
			return "Points: none yet."
		}
		if m.Base != nil {
			return fmt.Sprintf("Points: the %d saved with this measurement (%s).", cardiac.NumLandmarks, m.Base.Kind.Label())
		}
		return fmt.Sprintf("Points: all %d placed by the model.", cardiac.NumLandmarks)
	}
	moved, conf := 0, 0
	for k := range lm {
		switch {
		case lm[k] != m.Result.Landmarks[k]:
			moved++
		case confirmed[k]:
			conf++
		}
	}
	model := cardiac.NumLandmarks - moved - conf
	var parts []string
	if model > 0 {
		parts = append(parts, fmt.Sprintf("%d placed by the model", model))
	}
	if conf > 0 {
		parts = append(parts, fmt.Sprintf("%d placed by the model and confirmed by the clinician", conf))
	}
	if moved > 0 {
		parts = append(parts, fmt.Sprintf("%d moved by the clinician", moved))
	}
	return "Points: " + strings.Join(parts, ", ") + "."
}
