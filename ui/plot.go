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
// (landmarks corrected or placed by hand; drawn hollow).
type TrendPoint struct {
	Time   time.Time
	Value  float64
	Edited bool
}

// TrendPlot draws values over time with a shaded normal band: a line
// through the points in time order, a dot per point, the band between
// BandLow and BandHigh, and labels for the value axis and the first and
// last dates.
type TrendPlot struct {
	widget.BaseWidget

	Title             string
	BandLow, BandHigh float64
	points            []TrendPoint
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
		r.axis[i] = canvas.NewText("", theme.Color(theme.ColorNameForeground))
		r.axis[i].TextSize = theme.CaptionTextSize()
	}
	r.Refresh()
	return r
}

type plotRenderer struct {
	p        *TrendPlot
	bg, band *canvas.Rectangle
	title    *canvas.Text
	empty    *canvas.Text
	// axis: value max, value min, band low, band high, first date, last date
	axis   [6]*canvas.Text
	lines  []*canvas.Line
	dots   []*canvas.Circle
	values []*canvas.Text
}

func (r *plotRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg, r.band, r.title, r.empty}
	for _, a := range r.axis {
		objs = append(objs, a)
	}
	for _, l := range r.lines {
		objs = append(objs, l)
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
	place := func(t *canvas.Text, s string, x, yy float32) {
		t.Text = s
		t.Move(fyne.NewPos(x, yy-t.MinSize().Height/2))
	}
	place(r.axis[0], fmt.Sprintf("%.1f", hi), 2, y(hi))
	place(r.axis[1], fmt.Sprintf("%.1f", lo), 2, y(lo))
	place(r.axis[2], fmt.Sprintf("%.1f", r.p.BandLow), 2, y(r.p.BandLow))
	place(r.axis[3], fmt.Sprintf("%.1f", r.p.BandHigh), 2, y(r.p.BandHigh))
	pts := r.p.points
	r.empty.Move(fyne.NewPos(plotLeft+8, plotTop+h/2-10))
	if len(pts) == 0 {
		r.empty.Show()
		r.axis[4].Text, r.axis[5].Text = "", ""
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
	place(r.axis[4], t0.Local().Format("2006-01-02"), plotLeft, size.Height-plotBottom/2)
	last := t1.Local().Format("2006-01-02")
	r.axis[5].Text = last
	place(r.axis[5], last, size.Width-plotRight-r.axis[5].MinSize().Width, size.Height-plotBottom/2)
	for i, l := range r.lines {
		a, b := pts[i], pts[i+1]
		l.Position1 = fyne.NewPos(x(a.Time), y(a.Value))
		l.Position2 = fyne.NewPos(x(b.Time), y(b.Value))
	}
	const rad = 4
	for i, d := range r.dots {
		d.Move(fyne.NewPos(x(pts[i].Time)-rad, y(pts[i].Value)-rad))
		d.Resize(fyne.NewSize(2*rad, 2*rad))
		v := r.values[i]
		v.Move(fyne.NewPos(x(pts[i].Time)-v.MinSize().Width/2, y(pts[i].Value)-rad-v.MinSize().Height))
	}
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
	for _, pt := range pts {
		d := canvas.NewCircle(trendColor)
		if pt.Edited {
			d.FillColor = theme.Color(theme.ColorNameInputBackground)
		}
		d.StrokeColor = trendColor
		d.StrokeWidth = 2
		r.dots = append(r.dots, d)
		v := canvas.NewText(fmt.Sprintf("%.2f", pt.Value), theme.Color(theme.ColorNameForeground))
		v.TextSize = theme.CaptionTextSize()
		r.values = append(r.values, v)
	}
	r.Layout(r.p.Size())
	for _, o := range r.Objects() {
		canvas.Refresh(o)
	}
}
