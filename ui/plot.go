package ui

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TrendPoint is one value at a time; Edited marks a clinician's value
// (landmarks corrected or placed by hand; drawn hollow). A corrected
// study is one point at the study's time: Earlier holds the values of
// the versions it corrected, oldest first, drawn as small grey marks on
// the same date, and its label says the value it was corrected from.
type TrendPoint struct {
	Time    time.Time
	Value   float64
	Edited  bool
	Earlier []float64
}

// label is the point's value label: "9.80", or "9.80 (corrected from
// 9.50)" for a corrected study.
func (pt TrendPoint) label() string {
	if n := len(pt.Earlier); n > 0 {
		return fmt.Sprintf("%.2f (corrected from %.2f)", pt.Value, pt.Earlier[n-1])
	}
	return fmt.Sprintf("%.2f", pt.Value)
}

// TrendPlot draws values over time with a shaded normal band: a line
// through the points in time order, a dot per point with its value, the
// band between BandLow and BandHigh, labels for the value axis, and a
// time axis with dated ticks. No two labels overlap: the ticks are as
// many as fit, and a value label that would cover another goes below its
// dot or is left out.
type TrendPlot struct {
	widget.BaseWidget

	Title             string
	BandLow, BandHigh float64
	points            []TrendPoint

	// tickTimes and tickLabels are the time axis as last laid out.
	tickTimes  []time.Time
	tickLabels []string
}

var (
	bandColor  = color.NRGBA{R: 0x43, G: 0xa0, B: 0x47, A: 0x40}
	trendColor = color.NRGBA{R: 0x1e, G: 0x88, B: 0xe5, A: 0xff}
)

// NewTrendPlot returns an empty plot with a normal band.
func NewTrendPlot(title string, bandLow, bandHigh float64) *TrendPlot {
	p := &TrendPlot{Title: title, BandLow: bandLow, BandHigh: bandHigh}
	p.ExtendBaseWidget(p)
	return p
}

// SetPoints replaces the points (any order; drawn in time order).
func (p *TrendPlot) SetPoints(pts []TrendPoint) {
	p.points = append([]TrendPoint(nil), pts...)
	for i := 1; i < len(p.points); i++ { // insertion sort: short series
		for j := i; j > 0 && p.points[j].Time.Before(p.points[j-1].Time); j-- {
			p.points[j], p.points[j-1] = p.points[j-1], p.points[j]
		}
	}
	p.Refresh()
}

// Points returns the plotted points in time order.
func (p *TrendPlot) Points() []TrendPoint { return append([]TrendPoint(nil), p.points...) }

// valueRange is the plotted value range: the points and the band, padded.
func (p *TrendPlot) valueRange() (lo, hi float64) {
	lo, hi = p.BandLow, p.BandHigh
	for _, pt := range p.points {
		lo, hi = math.Min(lo, pt.Value), math.Max(hi, pt.Value)
		for _, v := range pt.Earlier {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	pad := math.Max(0.25, (hi-lo)*0.1)
	return lo - pad, hi + pad
}

// MinSize implements fyne.Widget.
func (p *TrendPlot) MinSize() fyne.Size { return fyne.NewSize(360, 200) }

// CreateRenderer implements fyne.Widget.
func (p *TrendPlot) CreateRenderer() fyne.WidgetRenderer {
	r := &plotRenderer{p: p, bg: canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground)),
		band: canvas.NewRectangle(bandColor), title: canvas.NewText(p.Title, theme.Color(theme.ColorNameForeground)),
		empty: canvas.NewText("No measurements yet.", theme.Color(theme.ColorNamePlaceHolder))}
	r.title.TextStyle.Bold = true
	for i := range r.axis {
		r.axis[i] = caption("")
	}
	r.Refresh()
	return r
}

type plotRenderer struct {
	p        *TrendPlot
	bg, band *canvas.Rectangle
	title    *canvas.Text
	empty    *canvas.Text
	// axis: band low, band high, value min, value max (in that priority
	// when they would overlap)
	axis [4]*canvas.Text
	// dates are the time axis's tick labels, ticks their marks.
	dates  []*canvas.Text
	ticks  []*canvas.Line
	lines  []*canvas.Line
	dots   []*canvas.Circle
	values []*canvas.Text
	// earlier are the marks of corrected versions, with the point each
	// belongs to (index into dots) and its value.
	earlier    []*canvas.Circle
	earlierOf  []int
	earlierVal []float64
}

func (r *plotRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg, r.band, r.title, r.empty}
	for _, a := range r.axis {
		objs = append(objs, a)
	}
	for _, d := range r.dates {
		objs = append(objs, d)
	}
	for _, tk := range r.ticks {
		objs = append(objs, tk)
	}
	for _, l := range r.lines {
		objs = append(objs, l)
	}
	for _, e := range r.earlier {
		objs = append(objs, e)
	}
	for _, d := range r.dots {
		objs = append(objs, d)
	}
	for _, v := range r.values {
		objs = append(objs, v)
	}
	return objs
}

func (r *plotRenderer) Destroy() {}

func (r *plotRenderer) MinSize() fyne.Size { return r.p.MinSize() }

// plot area insets: left for value labels, top for the title, bottom for dates.
const plotLeft, plotRight, plotTop, plotBottom = 44, 12, 26, 22

// dateLabelGap is the least room between two date labels.
const dateLabelGap = 12

func (r *plotRenderer) Layout(size fyne.Size) {
	r.bg.Resize(size)
	r.title.Move(fyne.NewPos(plotLeft, 4))
	w, h := size.Width-plotLeft-plotRight, size.Height-plotTop-plotBottom
	if w <= 0 || h <= 0 {
		return
	}
	lo, hi := r.p.valueRange()
	y := func(v float64) float32 { return plotTop + h*float32((hi-v)/(hi-lo)) }
	r.band.Move(fyne.NewPos(plotLeft, y(r.p.BandHigh)))
	r.band.Resize(fyne.NewSize(w, y(r.p.BandLow)-y(r.p.BandHigh)))
	// The value axis: the band's bounds first, then the range's ends,
	// each left out where it would overlap one already placed.
	var axisBoxes []box
	for i, v := range []float64{r.p.BandLow, r.p.BandHigh, lo, hi} {
		t := r.axis[i]
		t.Text = fmt.Sprintf("%.1f", v)
		sz := t.MinSize()
		b := box{2, y(v) - sz.Height/2, sz.Width, sz.Height}
		if overlapsAny(b, axisBoxes) {
			t.Hide()
			continue
		}
		t.Show()
		t.Move(fyne.NewPos(b.x, b.y))
		axisBoxes = append(axisBoxes, b)
	}
	pts := r.p.points
	r.empty.Move(fyne.NewPos(plotLeft+8, plotTop+h/2-10))
	if len(pts) == 0 {
		r.empty.Show()
		r.dates, r.ticks = r.dates[:0], r.ticks[:0]
		r.p.tickTimes, r.p.tickLabels = nil, nil
		return
	}
	r.empty.Hide()
	t0, t1 := pts[0].Time, pts[len(pts)-1].Time
	span := t1.Sub(t0).Seconds()
	x := func(t time.Time) float32 {
		if span <= 0 {
			return plotLeft + w/2
		}
		return plotLeft + 8 + (w-16)*float32(t.Sub(t0).Seconds()/span)
	}
	// The time axis: as many dated ticks as fit without their labels
	// touching.
	labelBox := func(t time.Time, label string) box {
		sz := fyne.MeasureText(label, theme.CaptionTextSize(), fyne.TextStyle{})
		return box{min(max(x(t)-sz.Width/2, 0), size.Width-sz.Width), plotTop + h + 3, sz.Width, sz.Height}
	}
	maxTicks := int(w / (fyne.MeasureText("2006-01-02", theme.CaptionTextSize(), fyne.TextStyle{}).Width + dateLabelGap))
	var ticks []time.Time
	var labels []string
	var boxes []box
	for ; ; maxTicks-- {
		ticks, labels = DateTicks(t0, t1, max(maxTicks, 1), time.Local)
		boxes = boxes[:0]
		fits := true
		for i, t := range ticks {
			b := labelBox(t, labels[i])
			if i > 0 && boxes[i-1].x+boxes[i-1].w+dateLabelGap > b.x {
				fits = false
			}
			boxes = append(boxes, b)
		}
		if fits || maxTicks <= 1 {
			break
		}
	}
	r.p.tickTimes, r.p.tickLabels = ticks, labels
	for len(r.dates) < len(ticks) {
		r.dates = append(r.dates, caption(""))
		r.ticks = append(r.ticks, canvas.NewLine(theme.Color(theme.ColorNameForeground)))
	}
	r.dates, r.ticks = r.dates[:len(ticks)], r.ticks[:len(ticks)]
	for i, d := range r.dates {
		d.Text = labels[i]
		d.Move(fyne.NewPos(boxes[i].x, boxes[i].y))
		xx := x(ticks[i])
		r.ticks[i].Position1 = fyne.NewPos(xx, plotTop+h-4)
		r.ticks[i].Position2 = fyne.NewPos(xx, plotTop+h)
	}
	for i, l := range r.lines {
		a, b := pts[i], pts[i+1]
		l.Position1 = fyne.NewPos(x(a.Time), y(a.Value))
		l.Position2 = fyne.NewPos(x(b.Time), y(b.Value))
	}
	const rad = 4
	for i, e := range r.earlier {
		px, py := x(pts[r.earlierOf[i]].Time), y(r.earlierVal[i])
		e.Move(fyne.NewPos(px-2.5, py-2.5))
		e.Resize(fyne.NewSize(5, 5))
	}
	// Value labels above their dot, else below it, else left out where
	// they would overlap another label.
	var placed []box
	for i, d := range r.dots {
		px, py := x(pts[i].Time), y(pts[i].Value)
		d.Move(fyne.NewPos(px-rad, py-rad))
		d.Resize(fyne.NewSize(2*rad, 2*rad))
		v := r.values[i]
		sz := v.MinSize()
		above := box{px - sz.Width/2, py - rad - sz.Height, sz.Width, sz.Height}
		below := box{px - sz.Width/2, py + rad, sz.Width, sz.Height}
		switch {
		case !overlapsAny(above, placed):
			v.Move(fyne.NewPos(above.x, above.y))
			placed = append(placed, above)
			v.Show()
		case !overlapsAny(below, placed):
			v.Move(fyne.NewPos(below.x, below.y))
			placed = append(placed, below)
			v.Show()
		default:
			v.Hide()
		}
	}
}

// box is a label's rectangle.
type box struct{ x, y, w, h float32 }

func (a box) overlaps(b box) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

func overlapsAny(b box, others []box) bool {
	for _, o := range others {
		if b.overlaps(o) {
			return true
		}
	}
	return false
}

// tickSteps are the time axis's candidate steps, finest first.
var tickSteps = []struct {
	d      time.Duration
	months int // a step in calendar months instead of d
	format string
}{
	{time.Hour, 0, "01-02 15:04"}, {3 * time.Hour, 0, "01-02 15:04"}, {6 * time.Hour, 0, "01-02 15:04"}, {12 * time.Hour, 0, "01-02 15:04"},
	{24 * time.Hour, 0, "2006-01-02"}, {2 * 24 * time.Hour, 0, "2006-01-02"}, {7 * 24 * time.Hour, 0, "2006-01-02"}, {14 * 24 * time.Hour, 0, "2006-01-02"},
	{0, 1, "2006-01"}, {0, 2, "2006-01"}, {0, 3, "2006-01"}, {0, 6, "2006-01"}, {0, 12, "2006"}, {0, 24, "2006"}, {0, 60, "2006"},
}

// DateTicks places the time axis's ticks between t0 and t1 (in loc): the
// finest step from an hour (spans under two days) or a day to five years
// that gives at most maxTicks ticks, on round times (whole hours,
// midnights, first days of months counted from January), each with its
// label. One tick at t0 when t1 is not after it.
func DateTicks(t0, t1 time.Time, maxTicks int, loc *time.Location) (ticks []time.Time, labels []string) {
	t0, t1 = t0.In(loc), t1.In(loc)
	if !t1.After(t0) || maxTicks < 2 {
		return []time.Time{t0}, []string{t0.Format("2006-01-02")}
	}
	long := t1.Sub(t0) >= 48*time.Hour
	for _, st := range tickSteps {
		if long && st.months == 0 && st.d < 24*time.Hour {
			continue // dates alone over days: no hours
		}
		var ts []time.Time
		if st.months == 0 {
			// Round times: whole multiples of the step since local
			// midnight, or midnights for steps of days.
			t := time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 0, 0, 0, loc)
			for t.Before(t0) {
				if st.d >= 24*time.Hour {
					t = t.AddDate(0, 0, 1)
				} else {
					t = t.Add(st.d)
				}
			}
			for ; !t.After(t1) && len(ts) <= maxTicks; t = nextDay(t, st.d) {
				ts = append(ts, t)
			}
		} else {
			// Calendar-aligned: months counted from January.
			m := time.Date(t0.Year(), 1, 1, 0, 0, 0, 0, loc)
			for m.Before(t0) {
				m = m.AddDate(0, st.months, 0)
			}
			for ; !m.After(t1) && len(ts) <= maxTicks; m = m.AddDate(0, st.months, 0) {
				ts = append(ts, m)
			}
		}
		if len(ts) == 0 { // no round time inside: the span is under an hour
			return []time.Time{t0, t1}, []string{t0.Format("01-02 15:04"), t1.Format("01-02 15:04")}
		}
		if len(ts) <= maxTicks {
			labels = make([]string, len(ts))
			for i, t := range ts {
				labels[i] = t.Format(st.format)
			}
			return ts, labels
		}
	}
	return []time.Time{t0, t1}, []string{t0.Format("2006"), t1.Format("2006")}
}

// nextDay steps t by d, keeping whole-day steps on local midnights
// across daylight saving changes.
func nextDay(t time.Time, d time.Duration) time.Time {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return t.AddDate(0, 0, int(d/(24*time.Hour)))
	}
	return t.Add(d)
}

// DateTicks are the plot's time axis ticks now on screen, with labels.
func (p *TrendPlot) DateTicks() ([]time.Time, []string) {
	return append([]time.Time(nil), p.tickTimes...), append([]string(nil), p.tickLabels...)
}

func (r *plotRenderer) Refresh() {
	pts := r.p.points
	r.title.Text = r.p.Title
	r.lines = r.lines[:0]
	for range max(0, len(pts)-1) {
		l := canvas.NewLine(trendColor)
		l.StrokeWidth = 2
		r.lines = append(r.lines, l)
	}
	r.dots, r.values = r.dots[:0], r.values[:0]
	r.earlier, r.earlierOf, r.earlierVal = r.earlier[:0], r.earlierOf[:0], r.earlierVal[:0]
	for i, pt := range pts {
		for _, v := range pt.Earlier {
			e := canvas.NewCircle(color.Transparent)
			e.StrokeColor = theme.Color(theme.ColorNamePlaceHolder)
			e.StrokeWidth = 1.5
			r.earlier, r.earlierOf, r.earlierVal = append(r.earlier, e), append(r.earlierOf, i), append(r.earlierVal, v)
		}
		d := canvas.NewCircle(trendColor)
		if pt.Edited {
			d.FillColor = theme.Color(theme.ColorNameInputBackground)
		}
		d.StrokeColor = trendColor
		d.StrokeWidth = 2
		r.dots = append(r.dots, d)
		v := canvas.NewText(pt.label(), theme.Color(theme.ColorNameForeground))
		v.TextSize = theme.CaptionTextSize()
		r.values = append(r.values, v)
	}
	r.Layout(r.p.Size())
	for _, o := range r.Objects() {
		canvas.Refresh(o)
	}
}
