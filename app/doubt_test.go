package app

import (
	"strings"
	"testing"

	"vetlens/engine/cardiac"
)

// TestCheckDoubt: after a withheld result, a verdict waits for every
// point the guard doubts to be moved, confirmed or placed by hand; the
// points it does not doubt need nothing, and a result that was not
// withheld needs nothing.
func TestCheckDoubt(t *testing.T) {
	res, l := landmarkResult()
	withheld := func(g cardiac.Guard) *Measurement {
		r := *res
		r.Code, r.Guard, r.VHS, r.VLAS = cardiac.CodeNoLandmarks, g, nil, nil
		return &Measurement{Result: &r}
	}
	noVLAS := func() *Measurement {
		r := *res
		r.Code, r.Guard, r.VLAS = cardiac.CodeNoVLAS, cardiac.GuardVLASMisplaced, nil
		return &Measurement{Result: &r}
	}
	var vlasConfirmed Settled
	vlasConfirmed[cardiac.VLASPoint] = true
	apex := l
	apex[cardiac.HeartBottom].Y += 10
	spanMoved := l
	spanMoved[cardiac.VertebraA].X -= 5
	spanMoved[cardiac.VertebraB].X += 5
	var onlyA, both Settled
	onlyA[cardiac.VertebraA] = true
	both[cardiac.VertebraA], both[cardiac.VertebraB] = true, true
	for _, tc := range []struct {
		name      string
		m         *Measurement
		kind      MeasurementKind
		lm        *cardiac.Landmarks
		confirmed Settled
		unsettled []int // nil: a verdict may be drawn
	}{
		{"not withheld", &Measurement{Result: res}, MeasurementEdited, &apex, Settled{}, nil},
		{"span guard, only the apex moved", withheld(cardiac.GuardVertebralSpanNotSix), MeasurementEdited, &apex, Settled{}, []int{cardiac.VertebraA, cardiac.VertebraB}},
		{"span guard, A confirmed", withheld(cardiac.GuardVertebralSpanNotSix), MeasurementEdited, &apex, onlyA, []int{cardiac.VertebraB}},
		{"span guard, A and B confirmed", withheld(cardiac.GuardVertebralSpanNotSix), MeasurementEdited, &apex, both, nil},
		{"span guard, A and B moved", withheld(cardiac.GuardVertebralSpanNotSix), MeasurementEdited, &spanMoved, Settled{}, nil},
		{"axes guard, span moved", withheld(cardiac.GuardShortAxisSkewed), MeasurementEdited, &spanMoved, Settled{},
			[]int{cardiac.HeartTop, cardiac.HeartBottom, cardiac.HeartRight, cardiac.HeartLeft}},
		{"column route: weak column, apex moved", withheld(cardiac.GuardColumnWeak), MeasurementEdited, &apex, Settled{}, []int{cardiac.VertebraA, cardiac.VertebraB}},
		{"column route: no column, A and B confirmed", withheld(cardiac.GuardColumnNotFound), MeasurementEdited, &apex, both, nil},
		{"column route: column and span disagree, span moved", withheld(cardiac.GuardColumnSpanDisagree), MeasurementEdited, &spanMoved, Settled{}, nil},
		{"column route: column and the period along the span disagree, apex moved", withheld(cardiac.GuardColumnPeriodDisagree), MeasurementEdited, &apex, Settled{}, []int{cardiac.VertebraA, cardiac.VertebraB}},
		{"column route: heart points disagree, span moved", withheld(cardiac.GuardHeartPointsDisagree), MeasurementEdited, &spanMoved, Settled{},
			[]int{cardiac.HeartTop, cardiac.HeartBottom, cardiac.HeartRight, cardiac.HeartLeft}},
		{"spread guard, the model's points", withheld(cardiac.GuardSpreadTooHigh), MeasurementModel, nil, Settled{}, []int{0, 1, 2, 3, 4, 5, 6}},
		{"spread guard, placed by hand", withheld(cardiac.GuardSpreadTooHigh), MeasurementManual, &l, Settled{}, nil},
		{"VLAS withheld, apex moved", noVLAS(), MeasurementEdited, &apex, Settled{}, []int{cardiac.VLASPoint}},
		{"VLAS withheld, VLAS confirmed", noVLAS(), MeasurementEdited, &apex, vlasConfirmed, nil},
		{"reopened from the history", &Measurement{Result: withheld(cardiac.GuardSpreadTooHigh).Result, Base: &EntryRef{Kind: MeasurementEdited}}, MeasurementEdited, &l, Settled{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := CheckDoubt(tc.m, tc.kind, tc.lm, tc.confirmed)
			if tc.unsettled == nil {
				if d != nil {
					t.Fatalf("doubt %+v: %s", d, d.Text())
				}
				return
			}
			if d == nil || len(d.Unsettled) != len(tc.unsettled) {
				t.Fatalf("doubt %+v, want unsettled %v", d, tc.unsettled)
			}
			if d.VLASOnly != (tc.m.Result.Code == cardiac.CodeNoVLAS) {
				t.Errorf("VLAS only %v for code %d", d.VLASOnly, tc.m.Result.Code)
			}
			for i, k := range tc.unsettled {
				if d.Unsettled[i] != k || !strings.Contains(d.Text(), LandmarkNames[k]) {
					t.Fatalf("unsettled %v, want %v: %q", d.Unsettled, tc.unsettled, d.Text())
				}
			}
		})
	}
}

// TestPointsBy: the panel says who placed the points in effect.
func TestPointsBy(t *testing.T) {
	res, l := landmarkResult()
	m := &Measurement{Result: res}
	moved := l
	moved[cardiac.HeartBottom].Y += 10
	var conf Settled
	conf[cardiac.VertebraA] = true
	for _, tc := range []struct {
		name string
		kind MeasurementKind
		lm   *cardiac.Landmarks
		c    Settled
		want string
	}{
		{"model", MeasurementModel, nil, Settled{}, "Points: all 7 placed by the model."},
		{"edited", MeasurementEdited, &moved, conf, "Points: 5 placed by the model, 1 placed by the model and confirmed by the clinician, 1 moved by the clinician."},
		{"manual", MeasurementManual, &l, Settled{}, "Points: all 7 placed by hand by the clinician."},
	} {
		if got := PointsBy(m, tc.kind, tc.lm, tc.c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
