package cardiac

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// heartBeside is a prior for FindColumn on a drawn column c: the exact
// T4-T9 span (A at 3 periods from the column's origin) and a heart of
// VHS vhs (in periods) whose carina lies 1.2 periods caudal of A and
// 2 periods ventral of the column, its long axis 56 % of the VHS.
func heartBeside(c column, vhs float64) Landmarks {
	u := c.dir()
	n := Point{-u.Y, u.X} // ventral: the side the drawn rib heads are on
	p := c.period
	var l Landmarks
	l[VertebraA] = c.point(3 * p)
	l[VertebraB] = c.point(9 * p)
	carina := addScaled(c.point(4.2*p), n, 2*p)
	long, short := 0.56*vhs*p, 0.44*vhs*p
	l[HeartTop] = carina
	l[HeartBottom] = addScaled(carina, n, long)
	mid := addScaled(carina, n, 0.45*long)
	l[HeartRight] = addScaled(mid, u, -short/2)
	l[HeartLeft] = addScaled(mid, u, short/2)
	l[VLASPoint] = addScaled(addScaled(carina, u, 0.25*vhs*p), n, 0.5*p)
	return l
}

// offLine is how far p lies from the drawn column's centre line, in
// periods.
func offLine(c column, p Point) float64 {
	u := c.dir()
	return math.Abs(cross(u, sub(p, c.origin))) / c.period
}

// TestFindColumn: on drawn columns of known period, tilt and noise, with
// hearts of several sizes and priors whose A-B is too short, too long or
// turned off the column, the column's period is found within 2 %, its
// score clears MinColumnScore, and A and B lie on the column, six units
// apart.
func TestFindColumn(t *testing.T) {
	shortSpan := func(l Landmarks) Landmarks { // the models' span covers 3 vertebrae
		l[VertebraB] = addScaled(l[VertebraA], sub(l[VertebraB], l[VertebraA]), 0.5)
		return l
	}
	longSpan := func(l Landmarks) Landmarks { // 9 vertebrae
		l[VertebraB] = addScaled(l[VertebraA], sub(l[VertebraB], l[VertebraA]), 1.5)
		return l
	}
	turned := func(l Landmarks) Landmarks { // A-B turned 5 degrees about A
		d := sub(l[VertebraB], l[VertebraA])
		r := 5 * math.Pi / 180
		l[VertebraB] = Point{l[VertebraA].X + d.X*math.Cos(r) - d.Y*math.Sin(r), l[VertebraA].Y + d.X*math.Sin(r) + d.Y*math.Cos(r)}
		return l
	}
	same := func(l Landmarks) Landmarks { return l }
	cases := []struct {
		name  string
		c     column
		vhs   float64
		prior func(Landmarks) Landmarks
	}{
		{"45 px, 12 degrees", column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 12, period: 45, noise: 0.05}, 10, same},
		{"30 px, level, noisy", column{w: 640, h: 480, origin: Point{20, 80}, dirDeg: 0, period: 30, noise: 0.15}, 10, same},
		{"60 px, -15 degrees", column{w: 1200, h: 1000, origin: Point{60, 500}, dirDeg: -15, period: 60, noise: 0.05}, 10, same},
		{"small heart (VHS 7.5)", column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 5, period: 45, noise: 0.05}, 7.5, same},
		{"large heart (VHS 13)", column{w: 1000, h: 900, origin: Point{40, 100}, dirDeg: 5, period: 40, noise: 0.05}, 13, same},
		{"prior span of 3 vertebrae", column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}, 10, shortSpan},
		{"prior span of 9 vertebrae", column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}, 10, longSpan},
		{"prior turned 5 degrees", column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}, 10, turned},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.c.gray(uint64(10 + i))
			col, ok := FindColumn(img, tc.prior(heartBeside(tc.c, tc.vhs)))
			if !ok {
				t.Fatal("no column found")
			}
			if rel := col.Period/tc.c.period - 1; math.Abs(rel) > 0.02 {
				t.Errorf("period %.2f px, drawn %.0f (%+.1f %%)", col.Period, tc.c.period, 100*rel)
			}
			if col.Score < MinColumnScore {
				t.Errorf("score %.2f, want at least %.2f", col.Score, MinColumnScore)
			}
			if got := col.V / col.Period; math.Abs(got-ColumnVertebraFactor) > 1e-12 {
				t.Errorf("v / period %.4f, want %.4f", got, ColumnVertebraFactor)
			}
			a, b := col.A(), col.B()
			for name, p := range map[string]Point{"A": a, "B": b} {
				if d := offLine(tc.c, p); d > 0.5 {
					t.Errorf("%s at %.0f,%.0f is %.2f periods off the column", name, p.X, p.Y, d)
				}
			}
			if got := a.Dist(b) / 6; math.Abs(got-col.V) > 1e-9 {
				t.Errorf("|A-B|/6 = %.3f, want v %.3f", got, col.V)
			}
			// A is cranial of B, along the column's own direction.
			if dot(sub(b, a), tc.c.dir()) <= 0 {
				t.Errorf("A %.0f,%.0f is not cranial of B %.0f,%.0f", a.X, a.Y, b.X, b.Y)
			}
		})
	}
}

// TestFindColumnRefuses: where the image shows no column (flat, noise,
// a smooth gradient, a column far from where the heart says the spine
// must be) or the prior is degenerate, FindColumn finds none or scores
// it below MinColumnScore.
func TestFindColumnRefuses(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}
	prior := heartBeside(c, 10)
	flat := flatGray(image.Rect(0, 0, c.w, c.h), 90)
	noise := image.NewGray(flat.Bounds())
	gradient := image.NewGray(flat.Bounds())
	rng := rand.New(rand.NewPCG(3, 1))
	for y := range c.h {
		for x := range c.w {
			noise.Pix[noise.PixOffset(x, y)] = uint8(100 + 40*rng.NormFloat64())
			gradient.Pix[gradient.PixOffset(x, y)] = uint8(40 + 150*x/c.w)
		}
	}
	// The column drawn 9 periods ventral of where it was: under the heart.
	elsewhere := c
	elsewhere.origin = addScaled(c.origin, Point{-c.dir().Y, c.dir().X}, 9*c.period)
	far := elsewhere.gray(4)
	degenerate := prior
	degenerate[HeartBottom] = degenerate[HeartTop]
	degenerate[HeartLeft] = degenerate[HeartRight]
	notFinite := prior
	notFinite[VertebraB] = Point{math.NaN(), 0}
	outside := prior
	for k := range outside {
		outside[k] = addScaled(outside[k], Point{1, 0}, 5000)
	}
	cases := []struct {
		name  string
		img   image.Image
		prior Landmarks
	}{
		{"flat", flat, prior},
		{"noise", noise, prior},
		{"gradient", gradient, prior},
		{"column under the heart", far, prior},
		{"heart of zero size", c.gray(1), degenerate},
		{"prior not finite", c.gray(1), notFinite},
		{"prior outside the image", c.gray(1), outside},
	}
	for _, tc := range cases {
		col, ok := FindColumn(tc.img, tc.prior)
		if ok && col.Score >= MinColumnScore {
			t.Errorf("%s: column found, period %.1f px, score %.2f", tc.name, col.Period, col.Score)
		}
	}
}

// TestColumnRouteGuards: on the column route a result withholds the VHS
// (code 5) when the column is missing, the members disagree on the
// heart's VHS, or the column's period is not the one the image repeats at
// along the members' spine, and names which, but not for members that sit
// apart and agree on the axes' lengths; the number it returns otherwise is
// the heart's axes over the column's v, not over the members' A-B.
func TestColumnRouteGuards(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}
	img := c.gray(2)
	truth := heartBeside(c, 10)
	// The members agree on the heart, but put B a vertebra short: the
	// span route would read VHS 12.
	short := truth
	short[VertebraB] = addScaled(short[VertebraA], sub(truth[VertebraB], truth[VertebraA]), 5.0/6)
	// Members whose span covers three vertebrae: a column of the right
	// period disagrees with them by about twice.
	halfSpan := truth
	halfSpan[VertebraB] = addScaled(halfSpan[VertebraA], sub(truth[VertebraB], truth[VertebraA]), 3.0/6)
	flat := flatGray(img.Bounds(), 90)
	// A member whose short axis is a vertebra longer: VHS 11, not 10.
	apart := short
	apart[HeartLeft] = addScaled(apart[HeartLeft], sub(short[HeartLeft], short[HeartRight]), c.period/short[HeartLeft].Dist(short[HeartRight]))
	// Members 2 % of the image apart on every heart point, but agreeing
	// on the axes' lengths: the pixel spread lowers the confidence only.
	shifted := short
	for _, k := range heartPoints {
		shifted[k] = addScaled(shifted[k], Point{1, 1}, 0.02*900/math.Sqrt2)
	}
	cases := []struct {
		name    string
		img     image.Image
		members []Landmarks
		guard   Guard
	}{
		{"plain column, members agree", img, []Landmarks{short, short}, GuardNone},
		{"no column", flat, []Landmarks{short, short}, GuardColumnNotFound},
		{"members disagree on the heart", img, []Landmarks{short, apart}, GuardHeartPointsDisagree},
		{"members apart, agreeing on VHS", img, []Landmarks{short, shifted}, GuardNone},
		{"members' span half the column's", img, []Landmarks{halfSpan, halfSpan}, GuardColumnSpanDisagree},
		{"a brighter repeat 20 % longer dorsal of the members' spine", longRepeatAbove(c, 2), []Landmarks{truth, truth}, GuardColumnPeriodDisagree},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.img.Bounds()
			r := newResult(b.Dx(), b.Dy(), 0.9, tc.members, sharpPeaks(len(tc.members)))
			r.measureColumn(tc.img)
			if r.Guard != tc.guard {
				t.Fatalf("guard %q (code %d), want %q", r.Guard, r.Code, tc.guard)
			}
			checkConsistent(t, r)
			if tc.guard != GuardNone {
				if r.Code != CodeNoLandmarks || r.VHS != nil || r.VLAS != nil {
					t.Errorf("code %d, VHS %v, VLAS %v: a withheld heart gave a number", r.Code, r.VHS, r.VLAS)
				}
				return
			}
			if !r.Code.HasVHS() || r.VHS == nil {
				t.Fatalf("code %d, no VHS", r.Code)
			}
			want := 10 / ColumnVertebraFactor // the drawn heart is 10 periods
			if math.Abs(*r.VHS-want) > 0.25 {
				t.Errorf("VHS %.2f, want about %.2f (the heart over the column's v)", *r.VHS, want)
			}
			if d := offLine(c, r.Landmarks[VertebraB]); d > 0.5 {
				t.Errorf("Vertebra B %.2f periods off the column", d)
			}
		})
	}
}

// longRepeatAbove is column c drawn faint, with a brighter band repeating
// every 1.2 periods 1.6 periods dorsal of it: the bodies the members' A-B
// lies on, and beside them a structure the column search may prefer
// whose period is not the vertebra's.
func longRepeatAbove(c column, seed uint64) *image.Gray {
	img := c.gray(seed)
	u := c.dir()
	n := Point{u.Y, -u.X} // dorsal: away from the drawn rib heads and heart
	for y := range c.h {
		for x := range c.w {
			d := sub(Point{float64(x) + 0.5, float64(y) + 0.5}, c.origin)
			along, across := dot(d, u), dot(d, n)
			if math.Abs(across-1.6*c.period) > 0.3*c.period {
				continue
			}
			i := img.PixOffset(x, y)
			if phase := math.Mod(along, 1.2*c.period) / (1.2 * c.period); phase >= 0 && phase < 0.5 {
				img.Pix[i] = 250
			} else {
				img.Pix[i] = 20
			}
		}
	}
	return img
}

// TestColumnRouteFactor: the column route measures v with the factor it
// is given (a model version's own, Engine.ColumnVertebraFactor): the
// column's v, Vertebra B six such units from A, and VHS the heart over
// it; the shipped factor where none is given.
func TestColumnRouteFactor(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}
	img := c.gray(2)
	l := heartBeside(c, 10)
	for _, factor := range []float64{ColumnVertebraFactor, 1.05 * ColumnVertebraFactor, 0.9} {
		r := newResult(c.w, c.h, 0.9, []Landmarks{l, l}, sharpPeaks(2))
		r.measureColumnWith(img, MaxHeartVHSSD, factor)
		if r.Column == nil || !r.Code.HasVHS() {
			t.Fatalf("factor %.4f: code %d guard %q, column %v", factor, r.Code, r.Guard, r.Column)
		}
		if got := r.Column.V / r.Column.Period; math.Abs(got-factor) > 1e-12 {
			t.Errorf("factor %.4f: v / period %.6f", factor, got)
		}
		if got := r.Landmarks[VertebraA].Dist(r.Landmarks[VertebraB]) / 6; math.Abs(got-r.Column.V) > 1e-9 {
			t.Errorf("factor %.4f: |A-B|/6 = %.3f, want v %.3f", factor, got, r.Column.V)
		}
		g := Measure(l)
		if want := (g.LongAxis + g.ShortAxis) / (factor * r.Column.Period); math.Abs(r.Geometry.VHS-want) > 1e-9 {
			t.Errorf("factor %.4f: VHS %.4f, want %.4f", factor, r.Geometry.VHS, want)
		}
		if factor == ColumnVertebraFactor {
			d := newResult(c.w, c.h, 0.9, []Landmarks{l, l}, sharpPeaks(2))
			d.measureColumn(img)
			if d.Geometry.VHS != r.Geometry.VHS {
				t.Errorf("measureColumn VHS %v, with the shipped factor %v", d.Geometry.VHS, r.Geometry.VHS)
			}
		}
	}
}

// TestDoubtedImageWithoutColumnIsRejected: where the validity classifier
// is unsure (p_radiograph under ValidityConfident) and no column repeats
// plainly (none, or one under MinColumnScore), the image is rejected (code
// 6) with nothing drawn; with a column it stays code 5 with its landmarks
// for review, and a confident classifier keeps code 5 either way. Under
// ValidityTrusted, members whose heart points scatter by more than
// MaxThoraxHeartVHSSD over the column's v reject the image too.
func TestDoubtedImageWithoutColumnIsRejected(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}
	weak := c
	weak.noise = 0.8 // found, score about 0.46
	l := heartBeside(c, 10)
	agree := []Landmarks{l, l}
	scatter := []Landmarks{heartBeside(c, 7), heartBeside(c, 14)} // heart VHS SD about 3.5 v
	flat := flatGray(image.Rect(0, 0, c.w, c.h), 200)
	cases := []struct {
		name    string
		img     image.Image
		p       float64
		members []Landmarks
		code    Code
		guard   Guard
	}{
		{"doubted, no column", flat, 0.2, agree, CodeRejected, GuardNone},
		{"doubted, a column", c.gray(3), 0.2, agree, CodeNoLandmarks, GuardRadiographUncertain},
		{"doubted, a weak column", weak.gray(3), 0.2, agree, CodeRejected, GuardNone},
		{"confident, a weak column", weak.gray(3), 0.9, agree, CodeNoLandmarks, GuardColumnWeak},
		{"confident, no column", flat, 0.9, agree, CodeNoLandmarks, GuardColumnNotFound},
		{"confident but not trusted, heart points scatter", c.gray(3), 0.7, scatter, CodeRejected, GuardNone},
		{"trusted, heart points scatter", c.gray(3), 0.95, scatter, CodeNoLandmarks, GuardHeartPointsDisagree},
	}
	for _, tc := range cases {
		r := newResult(c.w, c.h, tc.p, tc.members, sharpPeaks(2))
		r.measureColumn(tc.img)
		if r.Code != tc.code || r.Guard != tc.guard {
			t.Errorf("%s: code %d guard %q, want %d %q", tc.name, r.Code, r.Guard, tc.code, tc.guard)
		}
		if r.Rejected != (tc.code == CodeRejected) {
			t.Errorf("%s: rejected %v", tc.name, r.Rejected)
		}
		if r.Rejected && (r.Landmarks != Landmarks{} || r.ModelLandmarks != nil || r.VHS != nil) {
			t.Errorf("%s: a rejected image keeps landmarks %v", tc.name, r.Landmarks)
		}
		if r.ClassifierConfidence != tc.p {
			t.Errorf("%s: classifier confidence %v, want %v", tc.name, r.ClassifierConfidence, tc.p)
		}
		checkConsistent(t, r)
	}
}

// TestDecideColumnGuards: Decide's column-route checks, in order, by
// themselves.
func TestDecideColumnGuards(t *testing.T) {
	ok := Evidence{PRadiograph: 0.9, Finite: true, CorePeak: 0.5, VLASPeak: 0.5, Vertebra: 0.05,
		VHS: 10, VLAS: 2, Spread: 0.003, Column: &ColumnEvidence{Found: true, Score: 0.8, HeartVHSSD: 0.05, SpanRatio: 1.1}}
	cases := []struct {
		name  string
		edit  func(*Evidence)
		code  Code
		guard Guard
	}{
		{"all good", func(*Evidence) {}, CodeHighConfidence, GuardNone},
		{"column not found", func(e *Evidence) { e.Column = &ColumnEvidence{} }, CodeNoLandmarks, GuardColumnNotFound},
		{"column weak", func(e *Evidence) { e.Column.Score = MinColumnScore - 0.01 }, CodeNoLandmarks, GuardColumnWeak},
		{"column at the bound", func(e *Evidence) { e.Column.Score = MinColumnScore }, CodeHighConfidence, GuardNone},
		{"members' VHS over the bound", func(e *Evidence) { e.Column.HeartVHSSD = MaxHeartVHSSD + 0.01 }, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"members' VHS at the bound", func(e *Evidence) { e.Column.HeartVHSSD = MaxHeartVHSSD }, CodeHighConfidence, GuardNone},
		{"members' VHS NaN", func(e *Evidence) { e.Column.HeartVHSSD = math.NaN() }, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"column twice the members' span", func(e *Evidence) { e.Column.SpanRatio = 2 }, CodeNoLandmarks, GuardColumnSpanDisagree},
		{"column half the members' span", func(e *Evidence) { e.Column.SpanRatio = 0.5 }, CodeNoLandmarks, GuardColumnSpanDisagree},
		{"column just inside the ratio", func(e *Evidence) { e.Column.SpanRatio = 1 / (MaxColumnSpanRatio - 0.01) }, CodeHighConfidence, GuardNone},
		{"ratio NaN", func(e *Evidence) { e.Column.SpanRatio = math.NaN() }, CodeNoLandmarks, GuardColumnSpanDisagree},
		{"column's period 1.2x the one along the members' A-B", func(e *Evidence) { e.Column.PeriodRatio = 1.2 }, CodeNoLandmarks, GuardColumnPeriodDisagree},
		{"column's period 0.85x the one along the members' A-B", func(e *Evidence) { e.Column.PeriodRatio = 0.85 }, CodeNoLandmarks, GuardColumnPeriodDisagree},
		{"the two periods within the bound", func(e *Evidence) { e.Column.PeriodRatio = MaxColumnPeriodRatio - 0.01 }, CodeHighConfidence, GuardNone},
		{"no period along the members' A-B: not judged", func(e *Evidence) { e.Column.PeriodRatio = math.NaN() }, CodeHighConfidence, GuardNone},
		{"the span's disagreement is named first", func(e *Evidence) { e.Column.SpanRatio, e.Column.PeriodRatio = 2, 1.2 }, CodeNoLandmarks, GuardColumnSpanDisagree},
		{"a wide pixel spread lowers the confidence", func(e *Evidence) { e.Spread = 0.009 }, CodeReview, GuardNone},
		{"both weak: the heart is named first", func(e *Evidence) { e.Column.HeartVHSSD, e.Column.Score = 1, 0 }, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"span route: no column needed", func(e *Evidence) { e.Column = nil }, CodeHighConfidence, GuardNone},
		{"span route: its own spread bound", func(e *Evidence) { e.Column = nil; e.Spread = MaxSpreadForVHS + 1e-5 }, CodeNoLandmarks, GuardSpreadTooHigh},
		{"a version's own bound returns", func(e *Evidence) { e.Column.HeartVHSSD, e.SpreadBound = 0.2, 0.25 }, CodeHighConfidence, GuardNone},
		{"a version's own bound withholds", func(e *Evidence) { e.Column.HeartVHSSD, e.SpreadBound = 0.08, 0.07 }, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"no bound: the later guards still decide", func(e *Evidence) { e.Column.HeartVHSSD, e.Column.Score, e.SpreadBound = 1, 0, math.Inf(1) }, CodeNoLandmarks, GuardColumnWeak},
		{"span route: a version's own bound", func(e *Evidence) { e.Column = nil; e.Spread, e.SpreadBound = 0.012, 0.013 }, CodeReview, GuardNone},
		{"span route: no bound", func(e *Evidence) { e.Column = nil; e.Spread, e.SpreadBound = 0.5, math.Inf(1) }, CodeReview, GuardNone},
		{"silhouette: the members' whole-heart scatter is not checked", func(e *Evidence) {
			e.Column.HeartVHSSD, e.Column.Silhouette, e.Column.LongAxisSD = 1, true, 0.02
		}, CodeHighConfidence, GuardNone},
		{"silhouette: the members' long axes over the bound", func(e *Evidence) {
			e.Column.Silhouette, e.Column.LongAxisSD = true, MaxLongAxisSD+0.01
		}, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"silhouette: the long axes at the bound", func(e *Evidence) {
			e.Column.Silhouette, e.Column.LongAxisSD = true, MaxLongAxisSD
		}, CodeHighConfidence, GuardNone},
		{"silhouette: the long axes' scatter NaN", func(e *Evidence) {
			e.Column.Silhouette, e.Column.LongAxisSD = true, math.NaN()
		}, CodeNoLandmarks, GuardHeartPointsDisagree},
		{"silhouette: long axes scattering on a weak column: the heart is named first", func(e *Evidence) {
			e.Column.Silhouette, e.Column.LongAxisSD, e.Column.Score = true, 0.5, 0
		}, CodeNoLandmarks, GuardHeartPointsDisagree},
	}
	for _, tc := range cases {
		e := ok
		col := *ok.Column
		e.Column = &col
		tc.edit(&e)
		code, g := Decide(e)
		if code != tc.code || g != tc.guard {
			t.Errorf("%s: code %d guard %q, want %d %q", tc.name, code, g, tc.code, tc.guard)
		}
	}
}

// BenchmarkFindColumn is the column finder on drawn radiographs from
// 512 to 4096 px: its grid follows the heart's size, not the image's,
// so the time stays flat (target: 10 ms at any size).
func BenchmarkFindColumn(b *testing.B) {
	for _, side := range []int{512, 1024, 2048, 4096} {
		s := float64(side) / 1024
		c := column{w: side, h: side, origin: Point{60 * s, 250 * s}, dirDeg: 6, period: 70 * s, noise: 0.05}
		img, prior := c.gray(7), heartBeside(c, 10)
		b.Run(fmt.Sprint(side), func(b *testing.B) {
			for b.Loop() {
				if _, ok := FindColumn(img, prior); !ok {
					b.Fatal("no column")
				}
			}
		})
	}
}

// sharpPeaks are n members' peaks, every landmark found sharply (0.8).
func sharpPeaks(n int) [][NumLandmarks]float64 {
	p := make([][NumLandmarks]float64, n)
	for i := range p {
		for k := range p[i] {
			p[i][k] = 0.8
		}
	}
	return p
}

// flatGray is an image of one grey level: no column, nothing repeats.
func flatGray(r image.Rectangle, level uint8) *image.Gray {
	g := image.NewGray(r)
	for i := range g.Pix {
		g.Pix[i] = level
	}
	return g
}
