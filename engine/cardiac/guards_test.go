package cardiac

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// anatomy builds a landmark set in vertebral units in the phantom
// generator's frame (head left: x cranial -> caudal, y dorsal -> ventral),
// with Vertebra A at (3, 0) and Vertebra B at (9, 0), so v = 1.
type anatomy struct {
	Tilt        float64 // long axis from the ventral direction towards caudal, degrees
	Long, Short float64 // axes in v
	At          float64 // where the short axis crosses the long one, 0 (top) .. 1 (bottom)
	Cranial     float64 // share of the short axis cranial of the long axis
	Skew        float64 // the short axis turned from perpendicular about the crossing, degrees (+ turns its caudal end ventrally)
	VLASAngle   float64 // VLAS point seen from heart_top, degrees from the long axis towards caudal
	VLAS        float64 // |heart_top - VLAS| in v
	Top         Point   // heart_top (carina)
}

// dog is a plausible canine heart: VHS 10.0, VLAS 2.2.
var dog = anatomy{Tilt: 30, Long: 5.5, Short: 4.5, At: 0.45, Cranial: 0.55, VLASAngle: 50, VLAS: 2.2, Top: Point{4.7, 2.5}}

func (a anatomy) landmarks() Landmarks {
	t := a.Tilt * math.Pi / 180
	along := Point{math.Sin(t), math.Cos(t)}   // top -> apex: ventral and caudal
	caudal := Point{math.Cos(t), -math.Sin(t)} // perpendicular to it, towards caudal
	c := add(a.Top, scaled(along, a.At*a.Long))
	va := a.VLASAngle * math.Pi / 180
	vdir := add(scaled(along, math.Cos(va)), scaled(caudal, math.Sin(va)))
	sk := a.Skew * math.Pi / 180
	short := Point{caudal.X*math.Cos(sk) - caudal.Y*math.Sin(sk), caudal.X*math.Sin(sk) + caudal.Y*math.Cos(sk)}
	return Landmarks{
		HeartTop:    a.Top,
		HeartBottom: add(a.Top, scaled(along, a.Long)),
		HeartRight:  add(c, scaled(short, -a.Cranial*a.Short)),
		HeartLeft:   add(c, scaled(short, (1-a.Cranial)*a.Short)),
		VLASPoint:   add(a.Top, scaled(vdir, a.VLAS)),
		VertebraA:   {3, 0},
		VertebraB:   {9, 0},
	}
}

func add(p, q Point) Point { return Point{p.X + q.X, p.Y + q.Y} }

// placement is how an anatomy lands on an image: mirrored (head right) or
// not, rotated, scaled to pixels and shifted.
type placement struct {
	mirror bool
	rotDeg float64
	px     float64 // pixels per vertebral unit
}

func (p placement) String() string {
	return fmt.Sprintf("mirror %v rot %g scale %g", p.mirror, p.rotDeg, p.px)
}

func (p placement) apply(l Landmarks) Landmarks {
	r := p.rotDeg * math.Pi / 180
	c, s := math.Cos(r), math.Sin(r)
	for k, q := range l {
		if p.mirror {
			q.X = -q.X
		}
		l[k] = Point{p.px*(c*q.X-s*q.Y) + 700, p.px*(s*q.X+c*q.Y) + 450}
	}
	return l
}

// placements covers head-left and head-right images, the +/-20 degrees of
// rotation the product sees and some it should not matter for either.
var placements = func() []placement {
	var ps []placement
	for _, m := range []bool{false, true} {
		for _, r := range []float64{0, 20, -20, 7.5, 90, 180, -137} {
			for _, px := range []float64{1, 43.7} {
				ps = append(ps, placement{m, r, px})
			}
		}
	}
	return ps
}()

type guardCase struct {
	name   string
	l      Landmarks
	spread float64
	want   GuardResult
}

// checkGuardCases runs each case in every placement: the answer must be
// the wanted one and must not depend on the placement.
func checkGuardCases(t *testing.T, cases []guardCase) {
	t.Helper()
	for _, tc := range cases {
		for _, p := range placements {
			if got := CheckPlausibility(p.apply(tc.l), tc.spread); got != tc.want {
				t.Errorf("%s (%s): got %+v, want %+v", tc.name, p, got, tc.want)
				break
			}
		}
	}
}

// with returns the dog changed by f.
func with(f func(*anatomy)) anatomy { a := dog; f(&a); return a }

// moved returns the dog's landmarks with f applied to them.
func moved(f func(*Landmarks)) Landmarks { l := dog.landmarks(); f(&l); return l }

func pass() GuardResult { return GuardResult{} }

func fails(g Guard) GuardResult { return GuardResult{VHS: g} }

func failsVLAS(g Guard) GuardResult { return GuardResult{VLAS: g} }

// rotateSpine turns Vertebra A-B about its midpoint by deg (positive turns
// A->B from caudal towards ventral).
func rotateSpine(l *Landmarks, deg float64) {
	r := deg * math.Pi / 180
	m := scaled(add(l[VertebraA], l[VertebraB]), 0.5)
	for _, k := range []int{VertebraA, VertebraB} {
		d := sub(l[k], m)
		l[k] = add(m, Point{d.X*math.Cos(r) - d.Y*math.Sin(r), d.X*math.Sin(r) + d.Y*math.Cos(r)})
	}
}

func TestGuardsPassPlausibleHearts(t *testing.T) {
	checkGuardCases(t, []guardCase{
		{"dog", dog.landmarks(), 0.004, pass()},
		{"cat, VHS 7.5", with(func(a *anatomy) { a.Long, a.Short = 4.0, 3.5; a.VLAS = 1.3 }).landmarks(), 0, pass()},
		{"cardiomegaly, VHS 14", with(func(a *anatomy) { a.Long, a.Short = 7.6, 6.4; a.VLAS = 3.6 }).landmarks(), 0, pass()},
		{"upright heart", with(func(a *anatomy) { a.Tilt = 5 }).landmarks(), 0, pass()},
		{"recumbent heart", with(func(a *anatomy) { a.Tilt = 55 }).landmarks(), 0, pass()},
		{"round heart, long = 0.8 short", with(func(a *anatomy) { a.Long, a.Short = 4.8, 6.0 }).landmarks(), 0, pass()},
		{"axes at 70 degrees", with(func(a *anatomy) { a.Skew = 20 }).landmarks(), 0, pass()},
		{"axes at 110 degrees", with(func(a *anatomy) { a.Skew = -20 }).landmarks(), 0, pass()},
		{"carina level with T4", with(func(a *anatomy) { a.Top = Point{3, 2.5} }).landmarks(), 0, pass()},
		{"spine 70 degrees from the short axis", moved(func(l *Landmarks) { rotateSpine(l, 40) }), 0, pass()},
		{"spine tilted dorsally", moved(func(l *Landmarks) { rotateSpine(l, -25) }), 0, pass()},
		{"spread at MaxSpreadForVHS", dog.landmarks(), MaxSpreadForVHS, pass()},
	})
}

// TestGuard1Spine: Vertebra A->B runs cranial to caudal along the heart's
// short axis and lies dorsal of the heart.
func TestGuard1Spine(t *testing.T) {
	checkGuardCases(t, []guardCase{
		{"A and B swapped", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = l[VertebraB], l[VertebraA] }), 0, fails(GuardVertebraeNotAlongSpine)},
		{"spine 80 degrees from the short axis", moved(func(l *Landmarks) { rotateSpine(l, 50) }), 0, fails(GuardVertebraeNotAlongSpine)},
		{"spine crossing the heart vertically", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = Point{6, -0.5}, Point{6, 5.5} }), 0, fails(GuardVertebraeNotAlongSpine)},
		{"A-B in the lung at mid-heart height", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = Point{5, 4.5}, Point{11, 4.5} }), 0, fails(GuardVertebraeNotDorsal)},
		{"A-B through the heart base", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = Point{2, 3.5}, Point{8, 3.5} }), 0, fails(GuardVertebraeNotDorsal)},
		{"A-B caudal of the carina (T9-T15)", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = Point{8.5, 0}, Point{14.5, 0} }), 0, fails(GuardVertebraeNotDorsal)},
		{"A-B far cranial (neck)", moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = Point{-5, 0}, Point{1, 0} }), 0, fails(GuardVertebraeNotDorsal)},
		{"carina 1.2 vertebrae cranial of T4", with(func(a *anatomy) { a.Top = Point{1.8, 2.5} }).landmarks(), 0, pass()},
		{"carina 2 vertebrae cranial of T4", with(func(a *anatomy) { a.Top = Point{1.0, 2.5} }).landmarks(), 0, fails(GuardVertebraeNotDorsal)},
	})
}

// TestGuard2Scale: heart axes plausible in vertebral units. The first case
// is the failure seen on real radiographs: A-B spanning 2.5 vertebrae
// (VHS 24 instead of 10).
func TestGuard2Scale(t *testing.T) {
	shortSpan := func(vertebrae float64) Landmarks {
		return moved(func(l *Landmarks) { l[VertebraB] = Point{3 + vertebrae, 0} })
	}
	checkGuardCases(t, []guardCase{
		{"A-B spans 2.5 vertebrae", shortSpan(2.5), 0, fails(GuardAxesOutOfScale)},
		// Guards are checked in number order: the carina (1.7 v from A)
		// is not under a 1-vertebra span, so guard 1 names it.
		{"A-B spans 1 vertebra", shortSpan(1), 0, fails(GuardVertebraeNotDorsal)},
		{"A-B spans 12 vertebrae", shortSpan(12), 0, fails(GuardAxesOutOfScale)},
		{"long axis 2.9 v", with(func(a *anatomy) { a.Long, a.Short = 2.9, 3.5 }).landmarks(), 0, fails(GuardAxesOutOfScale)},
		{"long axis 9.6 v", with(func(a *anatomy) { a.Long, a.Short = 9.6, 4.0 }).landmarks(), 0, fails(GuardAxesOutOfScale)},
		{"short axis 2.1 v", with(func(a *anatomy) { a.Long, a.Short = 5.5, 2.1 }).landmarks(), 0, fails(GuardAxesOutOfScale)},
		{"short axis 8.1 v", with(func(a *anatomy) { a.Long, a.Short = 6.5, 8.1 }).landmarks(), 0, fails(GuardAxesOutOfScale)},
		{"heart_bottom stops mid-heart, normal heart", moved(func(l *Landmarks) {
			l[HeartBottom] = add(l[HeartTop], scaled(sub(l[HeartBottom], l[HeartTop]), 0.5))
		}), 0, fails(GuardAxesOutOfScale)},
		{"heart_bottom stops mid-heart, large heart", with(func(a *anatomy) { a.Long, a.Short, a.At = 3.6, 5.4, 0.55 }).landmarks(), 0, fails(GuardLongAxisTooShort)},
		{"long axis 0.72 x short", with(func(a *anatomy) { a.Long, a.Short = 4.32, 6.0 }).landmarks(), 0, pass()},
		{"Vertebra A on B", moved(func(l *Landmarks) { l[VertebraB] = l[VertebraA] }), 0, fails(GuardAxesOutOfScale)},
		{"heart_right on heart_left", moved(func(l *Landmarks) { l[HeartRight] = l[HeartLeft] }), 0, fails(GuardAxesOutOfScale)},
		{"heart_top on heart_bottom", moved(func(l *Landmarks) { l[HeartBottom] = l[HeartTop] }), 0, fails(GuardAxesOutOfScale)},
	})
}

// TestGuard3Axes: the short axis is roughly perpendicular to the long axis
// and crosses it.
func TestGuard3Axes(t *testing.T) {
	turnShort := func(deg float64) Landmarks { return with(func(a *anatomy) { a.Skew = deg }).landmarks() }
	checkGuardCases(t, []guardCase{
		{"short axis turned 24 degrees", turnShort(24), 0, pass()},
		{"short axis turned -24 degrees", turnShort(-24), 0, pass()},
		{"short axis turned 26 degrees", turnShort(26), 0, fails(GuardShortAxisSkewed)},
		{"short axis turned -40 degrees", turnShort(-40), 0, fails(GuardShortAxisSkewed)},
		{"short axis parallel to the long axis", moved(func(l *Landmarks) {
			d := scaled(sub(l[HeartBottom], l[HeartTop]), 4.5/5.5)
			l[HeartRight] = add(l[HeartTop], scaled(d, 0.1))
			l[HeartLeft] = add(l[HeartRight], d)
		}), 0, fails(GuardShortAxisSkewed)},
		{"short axis at the carina", with(func(a *anatomy) { a.At = 0.05 }).landmarks(), 0, fails(GuardShortAxisNotCrossing)},
		{"short axis at the apex", with(func(a *anatomy) { a.At = 0.95 }).landmarks(), 0, fails(GuardShortAxisNotCrossing)},
		{"short axis beside the long axis (caudal)", with(func(a *anatomy) { a.Cranial = -0.2 }).landmarks(), 0, fails(GuardShortAxisNotCrossing)},
		{"short axis beside the long axis (cranial)", with(func(a *anatomy) { a.Cranial = 1.1 }).landmarks(), 0, fails(GuardShortAxisNotCrossing)},
		{"long axis crossing near heart_left", with(func(a *anatomy) { a.Cranial = 0.88 }).landmarks(), 0, pass()},
		{"short axis at 0.15 of the long axis", with(func(a *anatomy) { a.At = 0.15 }).landmarks(), 0, pass()},
	})
}

// TestGuard4HeartTop: the carina is nearer the spine than the apex.
func TestGuard4HeartTop(t *testing.T) {
	checkGuardCases(t, []guardCase{
		{"heart_top and heart_bottom swapped", moved(func(l *Landmarks) {
			l[HeartTop], l[HeartBottom] = l[HeartBottom], l[HeartTop]
		}), 0, fails(GuardHeartTopNotDorsal)},
		{"A-B along the sternum, ventral of the heart", moved(func(l *Landmarks) {
			l[VertebraA], l[VertebraB] = Point{3, 9.5}, Point{9, 9.5}
		}), 0, fails(GuardHeartTopNotDorsal)},
		// The long axis 12 degrees from the A-B line; the short axis turned
		// 4 degrees so that it stays within guard 1's 75 degrees of the
		// spine (for perpendicular axes guards 1 and 4 coincide).
		{"long axis 12 degrees from the spine", with(func(a *anatomy) { a.Tilt, a.Skew = 78, 4 }).landmarks(), 0, fails(GuardHeartTopNotDorsal)},
		{"long axis 17 degrees from the spine", with(func(a *anatomy) { a.Tilt, a.Skew = 73, -1 }).landmarks(), 0, pass()},
	})
}

// TestGuard5VLAS: the VLAS point lies caudal of the long axis in the heart
// base; otherwise VLAS alone is withheld (code 4).
func TestGuard5VLAS(t *testing.T) {
	at := func(deg, dist float64) Landmarks {
		return with(func(a *anatomy) { a.VLASAngle, a.VLAS = deg, dist }).landmarks()
	}
	checkGuardCases(t, []guardCase{
		{"VLAS 15 degrees caudal of the long axis", at(15, 2.2), 0, pass()},
		{"VLAS perpendicular to the long axis", at(90, 2.2), 0, pass()},
		{"VLAS 105 degrees", at(105, 2.2), 0, pass()},
		{"VLAS on the cranial side", at(-40, 2.2), 0, failsVLAS(GuardVLASMisplaced)},
		{"VLAS on the long axis", at(0, 2.2), 0, failsVLAS(GuardVLASMisplaced)},
		{"VLAS dorsal of the carina, towards the spine", at(150, 2.2), 0, failsVLAS(GuardVLASMisplaced)},
		{"VLAS dorsocranial", at(-150, 2.2), 0, failsVLAS(GuardVLASMisplaced)},
		{"VLAS near the apex", at(20, 4.4), 0, failsVLAS(GuardVLASMisplaced)},
		{"VLAS on heart_left", moved(func(l *Landmarks) { l[VLASPoint] = l[HeartLeft] }), 0, pass()},
	})
}

// TestGuard6Ranges: VHS and VLAS within clinically possible bounds.
func TestGuard6Ranges(t *testing.T) {
	vhs := func(long, short float64) Landmarks {
		return with(func(a *anatomy) { a.Long, a.Short = long, short }).landmarks()
	}
	checkGuardCases(t, []guardCase{
		{"VHS 6.01", vhs(3.31, 2.7), 0, pass()},
		{"VHS 5.8", vhs(3.2, 2.6), 0, fails(GuardVHSOutOfRange)},
		{"VHS 14.99", vhs(8.0, 6.99), 0, pass()},
		{"VHS 15.2", vhs(8.1, 7.1), 0, fails(GuardVHSOutOfRange)},
		{"VLAS 0.85", with(func(a *anatomy) { a.VLAS = 0.85 }).landmarks(), 0, pass()},
		{"VLAS 0.7", with(func(a *anatomy) { a.VLAS = 0.7 }).landmarks(), 0, failsVLAS(GuardVLASOutOfRange)},
		{"VLAS 4.4", with(func(a *anatomy) { a.VLAS, a.VLASAngle = 4.4, 80 }).landmarks(), 0, pass()},
		{"VLAS 4.6", with(func(a *anatomy) { a.VLAS, a.VLASAngle = 4.6, 80 }).landmarks(), 0, failsVLAS(GuardVLASOutOfRange)},
		{"VHS out of range and VLAS misplaced: VHS named", with(func(a *anatomy) { a.Long, a.Short, a.VLASAngle = 8.1, 7.1, -30 }).landmarks(), 0,
			fails(GuardVHSOutOfRange)},
	})
}

// TestGuard7Spread: an ensemble that disagrees this much measures nothing.
func TestGuard7Spread(t *testing.T) {
	l := dog.landmarks()
	checkGuardCases(t, []guardCase{
		{"phantom-like spread", l, 0.006, pass()},
		{"at MaxSpreadForVHS", l, MaxSpreadForVHS, pass()},
		{"just above", l, 0.03001, fails(GuardSpreadTooHigh)},
		{"real-radiograph spread 0.043", l, 0.043, fails(GuardSpreadTooHigh)},
		{"NaN spread", l, math.NaN(), fails(GuardSpreadTooHigh)},
		{"geometry guard named first", moved(func(l *Landmarks) { l[VertebraB] = Point{5, 0} }), 0.05, fails(GuardAxesOutOfScale)},
	})
}

func TestGuardsNonFinite(t *testing.T) {
	for k := range NumLandmarks {
		for _, v := range []float64{math.NaN(), math.Inf(1)} {
			l := dog.landmarks()
			l[k].X = v
			g := CheckPlausibility(l, 0)
			if k == VLASPoint {
				if g.VHS != GuardNone || g.VLAS == GuardNone {
					t.Errorf("VLAS point X %v: %+v, want VLAS withheld only", v, g)
				}
			} else if g.VHS == GuardNone {
				t.Errorf("%s X %v: no guard failed", ClassNames[k], v)
			}
		}
	}
}

// TestGuardsPassPhantomAnatomies: no guard fires on the generator's exact
// landmarks (valid anatomy by construction): 1100 anatomies (sim/phantom.py and sim/xraysim.py) from
// testdata/phantoms/anatomies.json in every placement, and the six
// rendered held-out phantoms of truth.json in their own pixels (mirrored
// and rotated by the generator).
func TestGuardsPassPhantomAnatomies(t *testing.T) {
	b, err := os.ReadFile("testdata/phantoms/anatomies.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Anatomies []struct {
			Set       string                   `json:"set"`
			Seed      int                      `json:"seed"`
			Landmarks [NumLandmarks][2]float64 `json:"landmarks"`
		} `json:"anatomies"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Anatomies) < 1100 {
		t.Fatalf("%d anatomies", len(f.Anatomies))
	}
	for _, a := range f.Anatomies {
		var l Landmarks
		for k, p := range a.Landmarks {
			l[k] = Point{p[0], p[1]}
		}
		for _, p := range placements {
			if g := CheckPlausibility(p.apply(l), 0); g != (GuardResult{}) {
				t.Errorf("%s anatomy seed %d (%s): %+v", a.Set, a.Seed, p, g)
				break
			}
		}
	}
	for _, p := range loadPhantoms(t).Phantoms {
		if g := CheckPlausibility(truthLandmarks(t, p.Landmarks), 0); g != (GuardResult{}) {
			t.Errorf("%s: %+v", p.File, g)
		}
	}
}

// TestEngineReportsGuard: newResult turns a failed guard into the code and
// Result.Guard, and withholds the numbers.
func TestEngineReportsGuard(t *testing.T) {
	const w, h = 1000, 800
	place := placement{mirror: true, rotDeg: 10, px: 40}
	peaks := sharpPeaks
	cases := []struct {
		name  string
		l     Landmarks
		code  Code
		guard Guard
	}{
		{"plausible", place.apply(dog.landmarks()), CodeHighConfidence, GuardNone},
		{"A-B reversed", place.apply(moved(func(l *Landmarks) { l[VertebraA], l[VertebraB] = l[VertebraB], l[VertebraA] })), CodeNoLandmarks, GuardVertebraeNotAlongSpine},
		{"A-B spans 2.5 vertebrae", place.apply(moved(func(l *Landmarks) { l[VertebraB] = Point{5.5, 0} })), CodeNoLandmarks, GuardAxesOutOfScale},
		{"VLAS cranial", place.apply(with(func(a *anatomy) { a.VLASAngle = -45 }).landmarks()), CodeNoVLAS, GuardVLASMisplaced},
	}
	for _, tc := range cases {
		// Two models in perfect agreement: spread 0.
		r := newResult(w, h, 0.9, []Landmarks{tc.l, tc.l}, peaks(2))
		if r.Code != tc.code || r.Guard != tc.guard {
			t.Errorf("%s: code %d guard %q, want %d %q", tc.name, r.Code, r.Guard, tc.code, tc.guard)
		}
		checkConsistent(t, r)
		if r.Code.HasVHS() != (r.VHS != nil) || r.Code.HasVLAS() != (r.VLAS != nil) {
			t.Errorf("%s: code %d with vhs %v vlas %v", tc.name, r.Code, r.VHS, r.VLAS)
		}
	}
	// The spread guard: two models 4 % of the longer side apart.
	l := place.apply(dog.landmarks())
	far := l
	for k := range far {
		far[k].X += 0.08 * w
	}
	if r := newResult(w, h, 0.9, []Landmarks{l, far}, peaks(2)); r.Code != CodeNoLandmarks || r.Guard != GuardSpreadTooHigh || r.VHS != nil {
		t.Errorf("spread %v: code %d guard %q vhs %v", r.Spread, r.Code, r.Guard, r.VHS)
	}
	// PoP failure clears the guard along with the numbers.
	r := newResult(w, h, 0.9, []Landmarks{cases[3].l, cases[3].l}, peaks(2))
	r.MarkPoPCorrectionFailed()
	if r.Guard != GuardNone {
		t.Errorf("code 7 keeps guard %q", r.Guard)
	}
}

func TestGuardDescriptions(t *testing.T) {
	all := []Guard{GuardRadiographUncertain, GuardLandmarksNotFound, GuardVertebraDegenerate, GuardVLASPeakLow, GuardVLASDispersed,
		GuardVertebraeNotAlongSpine, GuardVertebraeNotDorsal, GuardAxesOutOfScale, GuardLongAxisTooShort,
		GuardShortAxisSkewed, GuardShortAxisNotCrossing, GuardHeartTopNotDorsal, GuardVLASMisplaced,
		GuardVHSOutOfRange, GuardVLASOutOfRange, GuardSpreadTooHigh, GuardVertebralPeriodMismatch, GuardVertebralSpanNotSix, GuardPossibleScreenPhoto,
		GuardScreenPhotoQuality, GuardScreenPhotoUnstable, GuardColumnNotFound, GuardColumnWeak, GuardColumnSpanDisagree,
		GuardColumnPeriodDisagree, GuardHeartPointsDisagree}
	seen := map[Guard]bool{}
	for _, g := range all {
		if d := g.Description(); d == "" || d == string(g) || seen[g] {
			t.Errorf("guard %q: description %q (or named twice)", g, d)
		}
		seen[g] = true
	}
	if GuardNone.Description() != "" || Guard("new_guard").Description() != "new_guard" {
		t.Error("GuardNone or an unknown guard described")
	}
}

func TestResultWithhold(t *testing.T) {
	for _, code := range []Code{CodeHighConfidence, CodeModerate, CodeReview, CodeNoVLAS, CodeNoLandmarks, CodeRejected, CodePoPFailed} {
		v, l := 10.0, 2.0
		r := &Result{Code: code, VHS: &v, VLAS: &l, LandmarksDetected: true}
		if !code.HasVHS() {
			r.VHS, r.VLAS, r.LandmarksDetected = nil, nil, false
		}
		r.Withhold(GuardPossibleScreenPhoto, "tilted 20 degrees")
		if code.HasVHS() {
			if r.Code != CodeNoLandmarks || r.Guard != GuardPossibleScreenPhoto || r.GuardDetail != "tilted 20 degrees" || r.VHS != nil || r.VLAS != nil || r.LandmarksDetected {
				t.Errorf("code %d withheld: %+v", code, r)
			}
		} else if r.Code != code || r.Guard != GuardNone || r.GuardDetail != "" {
			t.Errorf("code %d changed to %d (%q): only results with a VHS are withheld", code, r.Code, r.Guard)
		}
	}
}
