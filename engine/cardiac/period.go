package cardiac

import (
	"image"
	"math"
)

// The vertebral period check (guard 8, vertebral_period_mismatch;
// docs/cardiac.md, "Plausibility guards"). Along the A-B line the vertebral
// column repeats once per vertebra: bright endplates, dark disc spaces, rib
// heads at each junction. If Vertebra A and B really are T4's cranial and
// T9's caudal endplate, v = |A-B|/6 is the column's period, and the image's
// intensity profile along a band parallel to A-B autocorrelates at lag v and
// not more strongly at a shorter lag. A span that covers 1-2.5 vertebrae
// (v 2.4-6 times too small) or that lies in the lung does not.
const (
	// MinVertebralPeriodScore (guard 8): VertebralPeriodScore at or below
	// this withholds the VHS (code 5). Chosen on validation sets only
	// (docs/cardiac.md, "Plausibility guards", guard 8).
	MinVertebralPeriodScore = 0.3

	periodStepPerV     = 12.0 // profile samples per vertebra
	periodMinStepPx    = 0.5  // finest sampling step, pixels
	periodMinSpanPx    = 5.0  // a shorter A-B span scores 0
	periodBands        = 13   // band offsets across the column
	periodBandHalfV    = 1.5  // bands from -1.5 v to +1.5 v off the A-B line
	periodLines        = 5    // lines averaged per band
	periodLineHalfV    = 0.25 // the lines span +/- 0.25 v
	periodSubsamples   = 4    // points averaged per sample along the line (no aliasing of thin endplates)
	periodMinValid     = 0.6  // a band with fewer samples inside the image is skipped
	periodTrendV       = 2.0  // moving-average detrend window, in v
	periodLagLoV       = 0.85 // the period is sought at lags 0.85-1.15 v
	periodLagHiV       = 1.15
	periodShortLoV     = 0.4 // a stronger repeat at 0.4-0.8 v zeroes the score
	periodShortHiV     = 0.8
	periodMinProfileSD = 1e-6 // a flatter profile (in grey levels / 255, 5 lines summed) carries no period
)

// VertebralPeriodScore is the evidence that img shows one vertebra every
// |A-B|/6 along the line from a to b (pixels of img, the image spanning
// [0,W] x [0,H]). It samples the grey image (bilinear, full resolution)
// along 13 bands parallel to A-B, from 1.5 v on one side to 1.5 v on the
// other, each the mean of 5 lines across +/- 0.25 v and running from 0.5
// |A-B| before A to 0.5 |A-B| beyond B, one sample every v/12 (at least
// 0.5 px), each the mean of 4 points spread over its step so that thin
// endplates and disc spaces are not missed between samples. A band with
// under 60 % of its samples inside the image is skipped; otherwise its
// profile runs from the first to the last sample inside, gaps filled with
// the mean. Each band's profile is detrended by a moving average over 2 v
// and autocorrelated; its score is the largest
// normalised autocorrelation at lags 0.85-1.15 v, or 0 when a lag of
// 0.4-0.8 v correlates at least as strongly (the image repeats faster than
// the span says). The result is the best band's score, at most 1; 0 for a
// span under 5 px and -1 when no band can be scored (the band mostly
// outside the image, a flat image, non-finite points).
func VertebralPeriodScore(img image.Image, a, b Point) float64 {
	score, _, _ := columnEvidence(img, a, b)
	return score
}

// columnEvidence samples the column's bands along a-b once and returns
// both what guard 8 and guard 9 read from them: VertebralPeriodScore and
// MeasureColumnPeriod's period (ok as MeasureColumnPeriod says).
func columnEvidence(img image.Image, a, b Point) (score float64, c ColumnPeriod, ok bool) {
	score = -1.0
	best := 0.0
	sampled := bandAutocorrelations(img, a, b, func(ac []float64, lag func(float64) int, step float64) {
		// Guard 8's band score.
		at := maxOf(ac[lag(periodLagLoV) : lag(periodLagHiV)+1])
		short := maxOf(ac[lag(periodShortLoV) : lag(periodShortHiV)+1])
		s := 0.0
		if at > short {
			s = at
		}
		score = math.Max(score, s)
		// The period: the highest local maximum at 0.3-1.6 v so far.
		lo, hi := max(lag(columnLagLoV), 1), min(lag(columnLagHiV), len(ac)-2)
		for k := lo; k <= hi; k++ {
			if !(ac[k] > ac[k-1] && ac[k] >= ac[k+1] && ac[k] > best) {
				continue
			}
			best = ac[k]
			c, ok = ColumnPeriod{Pixels: parabolaPeak(ac, k) * step, Score: ac[k]}, true
		}
	})
	if !sampled {
		return 0, ColumnPeriod{}, false
	}
	return score, c, ok
}

// bandAutocorrelations samples the grey image along the 13 bands parallel
// to a-b that VertebralPeriodScore describes, with v = |a-b|/6, and calls
// f with each scorable band's detrended, normalised autocorrelation ac
// (ac[k] at a lag of k samples, k up to columnLagHiV + 0.1 v: one sample
// beyond the longest lag either guard reads), lag, which turns a lag in v
// into samples, and step, the samples' spacing in pixels. It returns
// false, calling nothing, for a span under periodMinSpanPx; a span whose
// points are not finite or whose bands all fall outside the image calls
// nothing and returns true.
func bandAutocorrelations(img image.Image, a, b Point, f func(ac []float64, lag func(float64) int, step float64)) bool {
	if !isFinite(a.X) || !isFinite(a.Y) || !isFinite(b.X) || !isFinite(b.Y) {
		return true
	}
	d := sub(b, a)
	span := norm(d)
	if span < periodMinSpanPx {
		return false
	}
	g := newGreySampler(img)
	u := scaled(d, 1/span)
	n := Point{-u.Y, u.X}
	v := span / 6
	step := math.Max(v/periodStepPerV, periodMinStepPx)
	// Sample positions t = -span/2 + i*step < 1.5 span (numpy's arange),
	// each the mean of periodSubsamples points spread over its step.
	count := int(math.Ceil(2 * span / step))
	lag := func(f float64) int { return int(math.RoundToEven(f * v / step)) }
	hiLag := lag(columnLagHiV + 0.1)
	win := max(3, int(math.RoundToEven(periodTrendV*v/step)))
	prof := make([]float64, count)
	valid := make([]bool, count)
	trend := make([]float64, count)
	ac := make([]float64, hiLag+1)
	for bi := range periodBands {
		off := (-periodBandHalfV + float64(bi)*2*periodBandHalfV/(periodBands-1)) * v
		nValid, first, last := 0, -1, -1
		var sum float64
		for i := range count {
			s, ok := bandSample(g, a, u, n, -0.5*span+float64(i)*step, step, off, v)
			prof[i], valid[i] = s, ok
			if ok {
				nValid++
				sum += s
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if float64(nValid) < periodMinValid*float64(count) {
			continue
		}
		// The profile from the first to the last sample inside the image,
		// gaps filled with the mean.
		p, in := prof[first:last+1], valid[first:last+1]
		fill := sum / float64(nValid)
		for i := range p {
			if !in[i] {
				p[i] = fill
			}
		}
		if hiLag >= len(p) {
			continue
		}
		ss := detrend(p, win, trend[:len(p)])
		if math.Sqrt(ss/float64(len(p))) < periodMinProfileSD {
			continue
		}
		for k := range ac {
			var c float64
			for i := 0; i+k < len(p); i++ {
				c += p[i] * p[i+k]
			}
			ac[k] = c / ss
		}
		f(ac, lag, step)
	}
	return true
}

// bandSample is one profile sample of a band: the sum over the band's
// lines (offsets off +/- periodLineHalfV v along n) of the mean of
// periodSubsamples points spread over [t - step/2, t + step/2] along u
// from a, and whether every point was inside the image.
func bandSample(g greySampler, a, u, n Point, t, step, off, v float64) (float64, bool) {
	var s float64
	for li := range periodLines {
		o := off + (-periodLineHalfV+float64(li)*2*periodLineHalfV/(periodLines-1))*v
		for j := range periodSubsamples {
			tj := t + (float64(j)-(periodSubsamples-1)/2.0)*step/periodSubsamples
			val, in := g.at(a.X+tj*u.X+o*n.X, a.Y+tj*u.Y+o*n.Y)
			if !in {
				return 0, false
			}
			s += val
		}
	}
	return s / periodSubsamples, true
}

// movingAverage writes into out the mean of x over a window of w samples
// at each position, the edges extended with the end values (scipy's
// uniform_filter1d with mode "nearest": the window covers i-w/2 to
// i+(w-1)/2).
func movingAverage(x []float64, w int, out []float64) {
	n := len(x)
	at := func(i int) float64 { return x[min(max(i, 0), n-1)] }
	lo, hi := -(w / 2), (w-1)/2
	var s float64
	for j := lo; j <= hi; j++ {
		s += at(j)
	}
	for i := range n {
		out[i] = s / float64(w)
		s += at(i+hi+1) - at(i+lo)
	}
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

// greySampler reads an image's grey level (0-1; luma 0.299 R + 0.587 G +
// 0.114 B for colour images) bilinearly at continuous pixel coordinates,
// the image spanning [0,W] x [0,H] with pixel centres at half-integers.
// Between the outermost pixel centres only: nearer an edge is outside.
type greySampler struct {
	px pixelReader
}

func newGreySampler(img image.Image) greySampler { return greySampler{px: newPixelReader(img)} }

// at is the grey level at (x, y) and whether (x, y) is inside.
func (g greySampler) at(x, y float64) (float64, bool) {
	fx, fy := x-0.5, y-0.5 // pixel index coordinates
	w, h := g.px.b.Dx(), g.px.b.Dy()
	if !(fx >= 0 && fy >= 0 && fx <= float64(w-1) && fy <= float64(h-1)) {
		return 0, false
	}
	x0, y0 := int(fx), int(fy)
	x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
	ax, ay := fx-float64(x0), fy-float64(y0)
	top := (1-ax)*g.px.pixel(x0, y0) + ax*g.px.pixel(x1, y0)
	bottom := (1-ax)*g.px.pixel(x0, y1) + ax*g.px.pixel(x1, y1)
	return (1-ay)*top + ay*bottom, true
}

// Guard 9 (vertebral_span_not_six) and the vertebral span check of
// clinicians' landmarks (app.CheckVertebralSpan) count the vertebrae
// between A and B with the column's own period (CountSpan). Both numbers
// were chosen on validation sets only (docs/cardiac.md, "Guard 9: the
// vertebral span").
const (
	// MinSpanCountScore is the least repeat score (the column's
	// autocorrelation at its period) at which a count is trusted.
	MinSpanCountScore = 0.5
	// SpanCountTolerance is how far from six a count may be and still be
	// taken for six vertebrae: the exact T4-T9 span measures 5.87
	// (simulator) to 6.10 (first generator) periods, because a period is
	// a vertebral body with its disc and the span has one disc fewer than
	// bodies.
	SpanCountTolerance = 0.5
)

// SpanCount is how many vertebrae a Vertebra A-B span covers by the
// image's own vertebral length along it (CountSpan).
type SpanCount struct {
	// Measured is whether the column's period was found along A-B with
	// a score of at least MinSpanCountScore; the other fields are zero
	// when it was not.
	Measured bool
	// PeriodPixels is one vertebra's length (body and disc) along A-B,
	// in pixels of the image.
	PeriodPixels float64
	// Vertebrae is how many periods A-B covers: about six when A and B
	// sit on T4's cranial and T9's caudal endplates.
	Vertebrae float64
}

// Six reports whether the span was measured and covers six vertebrae
// within SpanCountTolerance.
func (s SpanCount) Six() bool {
	return s.Measured && math.Abs(s.Vertebrae-6) <= SpanCountTolerance
}

// OffSix reports whether the span was measured and does not cover six
// vertebrae: Vertebra A or B is likely on the wrong vertebra. An
// unmeasured span is neither Six nor OffSix.
func (s SpanCount) OffSix() bool { return s.Measured && !s.Six() }

// CountSpan counts the vertebrae between a and b in img
// (MeasureColumnPeriod; pixels of img).
func CountSpan(img image.Image, a, b Point) SpanCount {
	c, ok := MeasureColumnPeriod(img, a, b)
	return spanCount(c, ok, a.Dist(b))
}

// spanCount is CountSpan's count of a span of length px from the
// column's period c (measured when ok).
func spanCount(c ColumnPeriod, ok bool, px float64) SpanCount {
	if !ok || c.Score < MinSpanCountScore {
		return SpanCount{}
	}
	return SpanCount{Measured: true, PeriodPixels: c.Pixels, Vertebrae: c.Vertebrae(px)}
}

// The column's own period (MeasureColumnPeriod) is sought at lags from
// columnLagLoV to columnLagHiV v of the span it is measured along: spans
// of 3.75 to 20 vertebrae are measured, so a span a vertebra or more off
// six is told by its count, not only by a failed score.
const (
	columnLagLoV = 0.3
	columnLagHiV = 1.6
)

// ColumnPeriod is the vertebral column's period along a line, measured
// from the image alone (MeasureColumnPeriod).
type ColumnPeriod struct {
	// Pixels is the distance from one vertebra to the next along the
	// line: a vertebral body with its disc.
	Pixels float64
	// Score is the normalised autocorrelation of the best band at that
	// lag, at most 1; the larger, the plainer the repeat.
	Score float64
}

// Vertebrae is how many of the column's periods a span of length px
// covers; NaN for a period that was not measured.
func (c ColumnPeriod) Vertebrae(px float64) float64 {
	if !(c.Pixels > 0) {
		return math.NaN()
	}
	return px / c.Pixels
}

// MeasureColumnPeriod measures the period of the vertebral column along
// the line from a to b in img, whatever the span a-b covers. It samples
// the same 13 bands as VertebralPeriodScore (v = |a-b|/6) and takes the
// band whose autocorrelation has the highest local maximum at a lag from
// 0.3 to 1.6 v, refined between samples by a parabola through the peak
// and its neighbours. ok is false when no band has a positive local
// maximum there (no column along the line, a span under 5 px, points
// not finite or outside the image).
//
// The period is a vertebral body and its disc, so the exact T4 cranial
// to T9 caudal span (six bodies, five discs) measures slightly under six
// periods: 5.87 on the simulator's exact landmarks and 6.10 on the first
// generator's (docs/cardiac.md, "v, Vertebra A and Vertebra B").
func MeasureColumnPeriod(img image.Image, a, b Point) (c ColumnPeriod, ok bool) {
	_, c, ok = columnEvidence(img, a, b)
	return c, ok
}
