package cardiac

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"vetlens/engine/imageproc"
)

// column describes a synthetic lateral radiograph: a vertebral column
// (bright vertebral bodies with brighter endplates, dark disc spaces and
// rib heads at every junction) running through origin along dir, one
// vertebra every period pixels, over lung-grey background with a smooth
// gradient and noise.
type column struct {
	w, h   int
	origin Point
	dirDeg float64
	period float64
	noise  float64
}

func (c column) dir() Point {
	r := c.dirDeg * math.Pi / 180
	return Point{math.Cos(r), math.Sin(r)}
}

// point is the image point s pixels along the column from its origin.
func (c column) point(s float64) Point {
	d := c.dir()
	return Point{c.origin.X + s*d.X, c.origin.Y + s*d.Y}
}

func (c column) gray(seed uint64) *image.Gray {
	rng := rand.New(rand.NewPCG(seed, 1))
	img := image.NewGray(image.Rect(0, 0, c.w, c.h))
	d := c.dir()
	for y := range c.h {
		for x := range c.w {
			px, py := float64(x)+0.5-c.origin.X, float64(y)+0.5-c.origin.Y
			along, across := px*d.X+py*d.Y, -px*d.Y+py*d.X
			val := 0.3 + 0.15*float64(x)/float64(c.w) // lung, a gentle gradient
			phase := math.Mod(along, c.period) / c.period
			if phase < 0 {
				phase++
			}
			switch {
			case math.Abs(across) < 0.45*c.period && phase < 0.12: // disc space
				val = 0.35
			case math.Abs(across) < 0.45*c.period && (phase < 0.2 || phase > 0.92): // endplates
				val = 0.85
			case math.Abs(across) < 0.45*c.period: // cancellous body
				val = 0.65
			case across > 0.45*c.period && across < 0.9*c.period && phase < 0.25: // rib head
				val = 0.55
			}
			val += c.noise * rng.NormFloat64()
			img.Pix[img.PixOffset(x, y)] = uint8(math.Round(255 * math.Min(1, math.Max(0, val))))
		}
	}
	return img
}

// spine is a 900x700 radiograph whose column runs 12 degrees off the
// horizontal, one vertebra every 45 px.
var spine = column{w: 900, h: 700, origin: Point{80, 180}, dirDeg: 12, period: 45, noise: 0.05}

// TestVertebralPeriodScore: a span of six vertebrae along the column
// passes; spans of two or three (the models' typical failure on real
// radiographs), one of nine (the column repeats every 2/3 v), a span
// beside the column, flat and noise images fail.
func TestVertebralPeriodScore(t *testing.T) {
	img := spine.gray(1)
	start := 3 * spine.period // A at a junction, T4's cranial endplate
	a := spine.point(start)
	span := func(vertebrae float64) Point { return spine.point(start + vertebrae*spine.period) }
	lung := func(p Point) Point { // 4 vertebrae ventral of the column
		d := spine.dir()
		return Point{p.X - 4*spine.period*d.Y, p.Y + 4*spine.period*d.X}
	}
	flat := flatGray(image.Rect(0, 0, 900, 700), 90)
	noise := column{w: 900, h: 700, period: 1e9, noise: 0.15}.gray(2) // no column at all
	cases := []struct {
		name string
		img  image.Image
		a, b Point
		pass bool
	}{
		{"six vertebrae", img, a, span(6), true},
		{"six vertebrae, B to A", img, span(6), a, true},
		{"six vertebrae from mid-body", img, spine.point(start + 0.4*spine.period), span(6.4), true},
		{"three vertebrae", img, a, span(3), false},
		{"two vertebrae", img, a, span(2), false},
		{"two and a half vertebrae", img, a, span(2.5), false},
		{"nine vertebrae", img, a, span(9), false},
		{"six vertebrae' length in the lung", img, lung(a), lung(span(6)), false},
		{"flat image", flat, a, span(6), false},
		{"noise image", noise, a, span(6), false},
	}
	for _, tc := range cases {
		s := VertebralPeriodScore(tc.img, tc.a, tc.b)
		t.Logf("%s: %.3f", tc.name, s)
		if s > 1 || s < -1 || math.IsNaN(s) {
			t.Errorf("%s: score %v outside [-1, 1]", tc.name, s)
		}
		if pass := s > MinVertebralPeriodScore; pass != tc.pass {
			t.Errorf("%s: score %.3f, want pass %v (threshold %v)", tc.name, s, tc.pass, MinVertebralPeriodScore)
		}
		if pass := guardVertebralPeriod(s) == GuardNone; pass != tc.pass {
			t.Errorf("%s: guard 8 pass %v for score %.3f", tc.name, pass, s)
		}
	}
}

// TestVertebralPeriodScoreEdges: points outside the image, spans too short,
// non-finite points and images whose bounds do not start at 0 give a
// defined answer and no panic.
func TestVertebralPeriodScoreEdges(t *testing.T) {
	img := spine.gray(3)
	a, b := spine.point(3*spine.period), spine.point(9*spine.period)
	shifted := image.NewGray(image.Rect(100, 50, 100+spine.w, 50+spine.h)) // same pixels, other bounds
	copy(shifted.Pix, img.Pix)
	cases := []struct {
		name string
		img  image.Image
		a, b Point
		want func(float64) bool
		desc string
	}{
		{"both points far outside", img, Point{-5000, -5000}, Point{-4000, -5200}, func(s float64) bool { return s == -1 }, "-1"},
		{"span mostly outside", img, Point{-400, 100}, Point{-130, 157}, func(s float64) bool { return s <= MinVertebralPeriodScore }, "fail"},
		{"B beyond the image edge", img, a, Point{b.X + 600, b.Y}, func(s float64) bool { return s <= MinVertebralPeriodScore }, "fail"},
		{"span of 3 px", img, a, Point{a.X + 3, a.Y}, func(s float64) bool { return s == 0 }, "0"},
		{"A = B", img, a, a, func(s float64) bool { return s == 0 }, "0"},
		{"NaN point", img, Point{math.NaN(), 1}, b, func(s float64) bool { return s == -1 }, "-1"},
		{"infinite point", img, a, Point{math.Inf(1), 0}, func(s float64) bool { return s == -1 }, "-1"},
		{"1x1 image", image.NewGray(image.Rect(0, 0, 1, 1)), Point{0, 0}, Point{60, 60}, func(s float64) bool { return s == -1 }, "-1"},
		{"bounds not at 0", shifted, a, b, func(s float64) bool { return s == VertebralPeriodScore(img, a, b) }, "the unshifted score"},
	}
	for _, tc := range cases {
		if s := VertebralPeriodScore(tc.img, tc.a, tc.b); !tc.want(s) {
			t.Errorf("%s: score %v, want %s", tc.name, s, tc.desc)
		}
	}
}

// TestVertebralPeriodScoreImageTypes: decoded JPEGs (YCbCr), colour and
// tinted images score as their grey content does.
func TestVertebralPeriodScoreImageTypes(t *testing.T) {
	g := spine.gray(4)
	a, b := spine.point(3*spine.period), spine.point(9*spine.period)
	want := VertebralPeriodScore(g, a, b)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, g, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	fromJPEG, _, err := imageproc.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(g.Bounds())
	tinted := image.NewNRGBA(g.Bounds()) // a blue viewer tint
	for i, p := range g.Pix {
		x, y := i%g.Stride, i/g.Stride
		rgba.Set(x, y, color.RGBA{p, p, p, 255})
		tinted.Set(x, y, color.NRGBA{uint8(0.6 * float64(p)), uint8(0.8 * float64(p)), p, 255})
	}
	for _, tc := range []struct {
		name string
		img  image.Image
		tol  float64
	}{{"JPEG", fromJPEG, 0.03}, {"RGBA", rgba, 1e-9}, {"blue tint", tinted, 0.03}} {
		if s := VertebralPeriodScore(tc.img, a, b); math.Abs(s-want) > tc.tol || s <= MinVertebralPeriodScore {
			t.Errorf("%s: score %.4f, grey image %.4f", tc.name, s, want)
		}
	}
}

// TestEngineReportsPeriodGuard: a result that would return a VHS becomes
// code 5 (vertebral_period_mismatch) when the image shows no vertebrae
// repeating every v along A-B, and keeps its code when it does; a result
// another guard already withheld is not measured.
func TestEngineReportsPeriodGuard(t *testing.T) {
	// The dog anatomy at 45 px per vertebra, A and B on the column's
	// junctions (placement maps (3,0) and (9,0) to 700+135, 450).
	l := placement{px: spine.period}.apply(dog.landmarks())
	col := column{w: 1400, h: 1000, origin: l[VertebraA], dirDeg: 0, period: spine.period, noise: 0.05}
	withColumn := col.gray(5)
	// The same span over a column whose vertebrae are 52 px (A-B covers
	// 5.2 of them: B on T8) or 40 px (6.75: B on T10) long.
	longer, shorter := col, col
	longer.period, shorter.period = 52, 40
	fiveVertebrae, sevenVertebrae := longer.gray(5), shorter.gray(5)
	flat := flatGray(withColumn.Bounds(), 100)
	reversed := l
	reversed[VertebraA], reversed[VertebraB] = l[VertebraB], l[VertebraA]
	pk := [][NumLandmarks]float64{{}, {}}
	for i := range pk {
		for k := range pk[i] {
			pk[i][k] = 0.8
		}
	}
	cases := []struct {
		name     string
		img      image.Image
		l        Landmarks
		code     Code
		guard    Guard
		measured bool
	}{
		{"column of vertebrae", withColumn, l, CodeHighConfidence, GuardNone, true},
		{"A-B covers 5.2 vertebrae", fiveVertebrae, l, CodeNoLandmarks, GuardVertebralSpanNotSix, true},
		{"A-B covers 6.75 vertebrae", sevenVertebrae, l, CodeNoLandmarks, GuardVertebralSpanNotSix, true},
		{"no column", flat, l, CodeNoLandmarks, GuardVertebralPeriodMismatch, true},
		{"A-B reversed: guard 1 first", flat, reversed, CodeNoLandmarks, GuardVertebraeNotAlongSpine, false},
	}
	for _, tc := range cases {
		r := newResult(withColumn.Bounds().Dx(), withColumn.Bounds().Dy(), 0.9, []Landmarks{tc.l, tc.l}, pk)
		r.checkImage(tc.img)
		if r.Code != tc.code || r.Guard != tc.guard {
			t.Errorf("%s: code %d guard %q, want %d %q", tc.name, r.Code, r.Guard, tc.code, tc.guard)
		}
		if (r.VertebralPeriod != nil) != tc.measured {
			t.Errorf("%s: vertebral period %v, want measured %v", tc.name, r.VertebralPeriod, tc.measured)
		}
		// Guard 9 counts the span only where guard 8 passed, and says so.
		if counted := tc.guard == GuardNone || tc.guard == GuardVertebralSpanNotSix; (r.VertebralSpan != nil) != counted {
			t.Errorf("%s: span count %+v, want counted %v", tc.name, r.VertebralSpan, counted)
		}
		if tc.guard == GuardVertebralSpanNotSix && !strings.HasPrefix(r.GuardDetail, "A-B covers about ") {
			t.Errorf("%s: guard detail %q", tc.name, r.GuardDetail)
		}
		checkConsistent(t, r)
	}
}

// BenchmarkVertebralPeriodScore is guard 8 alone on a 1024x1024 image
// with A-B spanning 600 px.
// benchColumn is the benchmarks' 1024x1024 image, one vertebra every
// 100 px, and a six-vertebra span along its column.
func benchColumn() (image.Image, Point, Point) {
	c := column{w: 1024, h: 1024, origin: Point{150, 300}, dirDeg: 8, period: 100, noise: 0.05}
	return c.gray(6), c.point(0), c.point(600)
}

func BenchmarkVertebralPeriodScore(b *testing.B) {
	img, pa, pb := benchColumn()
	for b.Loop() {
		VertebralPeriodScore(img, pa, pb)
	}
}

// TestMeasureColumnPeriod: along spans of 4 to 12 vertebrae of the
// synthetic column, the measured period is the column's (45 px) within
// 2 %, so the span's vertebrae are counted; beside the column, on flat or
// noise images and for degenerate spans nothing is measured.
func TestMeasureColumnPeriod(t *testing.T) {
	img := spine.gray(5)
	start := 3 * spine.period
	a := spine.point(start)
	span := func(vertebrae float64) Point { return spine.point(start + vertebrae*spine.period) }
	lung := func(p Point) Point {
		d := spine.dir()
		return Point{p.X - 4*spine.period*d.Y, p.Y + 4*spine.period*d.X}
	}
	flat := flatGray(image.Rect(0, 0, 900, 700), 90)
	noise := column{w: 900, h: 700, period: 1e9, noise: 0.15}.gray(2)
	for _, n := range []float64{4, 5, 5.5, 6, 6.5, 7, 9, 12} {
		c, ok := MeasureColumnPeriod(img, a, span(n))
		if !ok {
			t.Errorf("%g vertebrae: no period measured", n)
			continue
		}
		if math.Abs(c.Pixels/spine.period-1) > 0.02 || c.Score <= 0 || c.Score > 1 {
			t.Errorf("%g vertebrae: period %.2f px (score %.3f), want %g px within 2 %%", n, c.Pixels, c.Score, spine.period)
		}
		if got := c.Vertebrae(n * spine.period); math.Abs(got-n) > 0.02*n {
			t.Errorf("%g vertebrae: counted %.2f", n, got)
		}
		if c2, _ := MeasureColumnPeriod(img, span(n), a); math.Abs(c2.Pixels-c.Pixels) > 0.02*spine.period {
			t.Errorf("%g vertebrae: B to A measures %.2f px, A to B %.2f px", n, c2.Pixels, c.Pixels)
		}
	}
	for _, tc := range []struct {
		name string
		img  image.Image
		a, b Point
	}{
		{"in the lung", img, lung(a), lung(span(6))},
		{"flat image", flat, a, span(6)},
		{"span of 3 px", img, a, Point{a.X + 3, a.Y}},
		{"NaN point", img, Point{math.NaN(), 1}, span(6)},
		{"far outside", img, Point{-5000, -5000}, Point{-4000, -5200}},
	} {
		if c, ok := MeasureColumnPeriod(tc.img, tc.a, tc.b); ok && c.Score > MinVertebralPeriodScore {
			t.Errorf("%s: period %.2f px at score %.3f, want none or a score at most %v", tc.name, c.Pixels, c.Score, MinVertebralPeriodScore)
		}
	}
	if c, ok := MeasureColumnPeriod(noise, a, span(6)); ok && c.Score > MinVertebralPeriodScore {
		t.Errorf("noise image: period %.2f px at score %.3f", c.Pixels, c.Score)
	}
	if got := (ColumnPeriod{}).Vertebrae(100); !math.IsNaN(got) {
		t.Errorf("unmeasured period counts %v vertebrae, want NaN", got)
	}
}

// BenchmarkMeasureColumnPeriod: the vertebral span check's cost on a
// 1024x1024 image (Review runs it on every change of the landmarks).
func BenchmarkMeasureColumnPeriod(b *testing.B) {
	img, pa, pb := benchColumn()
	for b.Loop() {
		MeasureColumnPeriod(img, pa, pb)
	}
}
