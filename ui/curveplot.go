package ui

import (
	"fmt"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"vetlens/app/learn"
)

// CurvePlot draws a run's held-out learning curve: the VHS MAE (value
// axis, from 0) against the steps per member, a line through the points
// with a dot each, the axes' ends labelled and both axes named.
type CurvePlot struct {
	widget.BaseWidget

	points []learn.CurvePoint
	// dots are the points' centres as last laid out (tests).
	dots []fyne.Position
}

// NewCurvePlot returns an empty curve plot.
func NewCurvePlot() *CurvePlot {
	p := &CurvePlot{}
	p.ExtendBaseWidget(p)
	return p
}

// SetPoints replaces the curve (in step order).
func (p *CurvePlot) SetPoints(pts []learn.CurvePoint) {
	p.points = append([]learn.CurvePoint(nil), pts...)
	p.Refresh()
}

// Points returns the plotted points.
func (p *CurvePlot) Points() []learn.CurvePoint { return append([]learn.CurvePoint(nil), p.points...) }

// Dots returns where the points were drawn at the last layout.
func (p *CurvePlot) Dots() []fyne.Position { return append([]fyne.Position(nil), p.dots...) }

// MinSize implements fyne.Widget.
func (p *CurvePlot) MinSize() fyne.Size { return fyne.NewSize(320, 170) }

// CreateRenderer implements fyne.Widget.
func (p *CurvePlot) CreateRenderer() fyne.WidgetRenderer {
	fg := theme.Color(theme.ColorNameForeground)
	r := &curveRenderer{p: p, bg: canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground)),
		xAxis: canvas.NewLine(fg), yAxis: canvas.NewLine(fg),
		empty: canvas.NewText("No learning curve yet: a run draws one.", theme.Color(theme.ColorNamePlaceHolder))}
	for i, name := range []string{"held-out VHS MAE (v)", "steps per model"} {
		r.names[i] = caption(name)
	}
	for i := range r.ends {
		r.ends[i] = caption("")
	}
	return r
}

// caption is a text in the theme's foreground at caption size (plot labels).
func caption(s string) *canvas.Text {
	t := canvas.NewText(s, theme.Color(theme.ColorNameForeground))
	t.TextSize = theme.CaptionTextSize()
	return t
}

type curveRenderer struct {
	p            *CurvePlot
	bg           *canvas.Rectangle
	xAxis, yAxis *canvas.Line
	empty        *canvas.Text
	// names: the value axis's, the step axis's; ends: value 0, value
	// max, first step, last step.
	names [2]*canvas.Text
	ends  [4]*canvas.Text
	lines []*canvas.Line
	dots  []*canvas.Circle
}

func (r *curveRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg, r.xAxis, r.yAxis, r.empty, r.names[0], r.names[1]}
	for _, e := range r.ends {
		objs = append(objs, e)
	}
	for _, l := range r.lines {
		objs = append(objs, l)
	}
	for _, d := range r.dots {
		objs = append(objs, d)
	}
	return objs
}

func (r *curveRenderer) Destroy()           {}
func (r *curveRenderer) MinSize() fyne.Size { return r.p.MinSize() }
func (r *curveRenderer) Refresh()           { r.Layout(r.p.Size()); canvas.Refresh(r.p) }

// showEmpty shows the "no curve" line instead of the axes, or the axes.
func (r *curveRenderer) showEmpty(empty bool) {
	axes := []fyne.CanvasObject{r.xAxis, r.yAxis, r.names[0], r.names[1], r.ends[0], r.ends[1], r.ends[2], r.ends[3]}
	for _, o := range axes {
		setVisible(o, !empty)
	}
	setVisible(r.empty, empty)
}

func setVisible(o fyne.CanvasObject, v bool) {
	if v {
		o.Show()
	} else {
		o.Hide()
	}
}

// Insets of the plot area: left for the value labels, top for the
// value axis's name, bottom for the step labels and the step axis's name.
const curveLeft, curveRight, curveTop, curveBottom = 40, 14, 30, 34

func (r *curveRenderer) Layout(size fyne.Size) {
	r.bg.Resize(size)
	pts := r.p.points
	w, h := size.Width-curveLeft-curveRight, size.Height-curveTop-curveBottom
	r.empty.Move(fyne.NewPos(curveLeft, size.Height/2-10))
	if len(pts) == 0 || w <= 0 || h <= 0 {
		r.showEmpty(true)
		r.lines, r.dots, r.p.dots = nil, nil, nil
		return
	}
	r.showEmpty(false)
	s0, s1 := pts[0].Step, pts[len(pts)-1].Step
	top := 0.0
	for _, p := range pts {
		top = math.Max(top, p.VHSMAE)
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.1
	x := func(s float64) float32 {
		if s1 <= s0 {
			return curveLeft + w/2
		}
		return curveLeft + w*float32((s-s0)/(s1-s0))
	}
	y := func(v float64) float32 { return curveTop + h*float32(1-v/top) }
	r.yAxis.Position1, r.yAxis.Position2 = fyne.NewPos(curveLeft, curveTop), fyne.NewPos(curveLeft, curveTop+h)
	r.xAxis.Position1, r.xAxis.Position2 = fyne.NewPos(curveLeft, curveTop+h), fyne.NewPos(curveLeft+w, curveTop+h)
	r.names[0].Move(fyne.NewPos(2, 2))
	nx := r.names[1].MinSize()
	r.names[1].Move(fyne.NewPos(curveLeft+(w-nx.Width)/2, size.Height-nx.Height-1))
	for i, e := range []struct {
		text   string
		at     fyne.Position
		alignX float32 // 0 left, 0.5 centre, 1 right of at
	}{
		{"0", fyne.NewPos(curveLeft-4, y(0)), 1},
		{fmt.Sprintf("%.2f", top), fyne.NewPos(curveLeft-4, y(top)), 1},
		{fmt.Sprintf("%.0f", s0), fyne.NewPos(x(s0), curveTop+h+2), 0},
		{fmt.Sprintf("%.0f", s1), fyne.NewPos(x(s1), curveTop+h+2), 1},
	} {
		t := r.ends[i]
		t.Text = e.text
		sz := t.MinSize()
		if i < 2 {
			t.Move(fyne.NewPos(e.at.X-sz.Width, e.at.Y-sz.Height/2))
		} else {
			t.Move(fyne.NewPos(e.at.X-e.alignX*sz.Width, e.at.Y))
		}
	}
	for len(r.dots) < len(pts) {
		d := canvas.NewCircle(trendColor)
		r.dots = append(r.dots, d)
	}
	for len(r.lines) < len(pts)-1 {
		l := canvas.NewLine(trendColor)
		l.StrokeWidth = 2
		r.lines = append(r.lines, l)
	}
	r.dots, r.lines = r.dots[:len(pts)], r.lines[:max(0, len(pts)-1)]
	r.p.dots = r.p.dots[:0]
	const rad = 3
	for i, p := range pts {
		c := fyne.NewPos(x(p.Step), y(p.VHSMAE))
		r.p.dots = append(r.p.dots, c)
		r.dots[i].Move(fyne.NewPos(c.X-rad, c.Y-rad))
		r.dots[i].Resize(fyne.NewSize(2*rad, 2*rad))
		if i > 0 {
			r.lines[i-1].Position1, r.lines[i-1].Position2 = r.p.dots[i-1], c
		}
	}
}
