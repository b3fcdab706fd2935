package ui

import (
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"

	"vetlens/app"
)

// CreateRenderer implements fyne.Widget.
func (v *LandmarkView) CreateRenderer() fyne.WidgetRenderer {
	r := &landmarkRenderer{v: v, img: canvas.NewImageFromImage(nil)}
	r.img.FillMode = canvas.ImageFillContain
	r.img.ScaleMode = canvas.ImageScaleSmooth
	mk := func(c color.Color, w float32) *canvas.Line {
		l := canvas.NewLine(c)
		l.StrokeWidth = w
		return l
	}
	r.long, r.short, r.vlas, r.ruler = mk(longAxisColor, 2), mk(shortAxisColor, 2), mk(vlasColor, 1.5), mk(rulerColor, 2)
	for i := range r.ticks {
		r.ticks[i] = mk(rulerColor, 2)
	}
	for i := range r.dots {
		r.dots[i] = canvas.NewCircle(pointColor)
		r.dots[i].StrokeColor = color.Black
		r.dots[i].StrokeWidth = 1
		r.labelBacks[i] = canvas.NewRectangle(labelBackColor)
		r.labelBacks[i].CornerRadius = 3
		r.labels[i] = canvas.NewText(LandmarkLabel(i), pointColor)
		r.labels[i].TextSize = theme.CaptionTextSize()
	}
	r.Refresh()
	return r
}

type landmarkRenderer struct {
	v                        *LandmarkView
	img                      *canvas.Image
	long, short, vlas, ruler *canvas.Line
	ticks                    [7]*canvas.Line
	dots                     [app.NumLandmarks]*canvas.Circle
	labelBacks               [app.NumLandmarks]*canvas.Rectangle
	labels                   [app.NumLandmarks]*canvas.Text
}

func (r *landmarkRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.img, r.ruler, r.long, r.short, r.vlas}
	for _, t := range r.ticks {
		objs = append(objs, t)
	}
	for _, d := range r.dots {
		objs = append(objs, d)
	}
	for i := range r.labels {
		objs = append(objs, r.labelBacks[i], r.labels[i])
	}
	return objs
}

func (r *landmarkRenderer) Destroy() {}

func (r *landmarkRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func showIf(o fyne.CanvasObject, show bool) {
	if show {
		o.Show()
	} else {
		o.Hide()
	}
}

func (r *landmarkRenderer) Layout(size fyne.Size) {
	r.img.Resize(size)
	r.img.Move(fyne.NewPos(0, 0))
	n := 0
	if r.v.img != nil {
		n = r.v.st.Placed
	}
	set := func(i int) bool { return i < n }
	p := func(i int) fyne.Position { return r.v.WidgetPos(i) }
	line := func(l *canvas.Line, a, b int) {
		showIf(l, set(a) && set(b))
		if set(a) && set(b) {
			l.Position1, l.Position2 = p(a), p(b)
		}
	}
	line(r.long, app.HeartTop, app.HeartBottom)
	line(r.short, app.HeartRight, app.HeartLeft)
	line(r.vlas, app.HeartTop, app.VLASPoint)
	line(r.ruler, app.VertebraA, app.VertebraB)
	ruler := set(app.VertebraA) && set(app.VertebraB)
	a, b := p(app.VertebraA), p(app.VertebraB)
	dx, dy := b.X-a.X, b.Y-a.Y
	d := float32(math.Hypot(float64(dx), float64(dy)))
	for i, t := range r.ticks {
		showIf(t, ruler && d > 0)
		if ruler && d > 0 {
			nx, ny := -dy/d*6, dx/d*6
			f := float32(i) / 6
			c := fyne.NewPos(a.X+f*dx, a.Y+f*dy)
			t.Position1, t.Position2 = fyne.NewPos(c.X-nx, c.Y-ny), fyne.NewPos(c.X+nx, c.Y+ny)
		}
	}
	var placed []rect
	for i, dot := range r.dots {
		showIf(dot, set(i))
		showIf(r.labels[i], set(i))
		showIf(r.labelBacks[i], set(i))
		if !set(i) {
			continue
		}
		c := p(i)
		rad := float32(5)
		dot.FillColor = pointColor
		if i == r.v.sel {
			rad, dot.FillColor = 7, selectedColor
		}
		dot.Move(fyne.NewPos(c.X-rad, c.Y-rad))
		dot.Resize(fyne.NewSize(2*rad, 2*rad))
		ts := fyne.MeasureText(r.labels[i].Text, r.labels[i].TextSize, r.labels[i].TextStyle)
		box := labelBox(size, c, fyne.NewSize(ts.Width+6, ts.Height+2), placed)
		placed = append(placed, box)
		r.labelBacks[i].Move(box.pos)
		r.labelBacks[i].Resize(box.size)
		r.labels[i].Move(box.pos.AddXY(3, 1))
		r.labels[i].Resize(ts)
	}
}

// rect is a label's box in widget coordinates.
type rect struct {
	pos  fyne.Position
	size fyne.Size
}

func (a rect) overlaps(b rect) bool {
	return a.pos.X < b.pos.X+b.size.Width && b.pos.X < a.pos.X+a.size.Width &&
		a.pos.Y < b.pos.Y+b.size.Height && b.pos.Y < a.pos.Y+a.size.Height
}

// labelBox places a landmark's label of size s beside its point c:
// above-right, below-right, above-left or below-left, whichever first
// stays inside the view without covering a label already placed; the
// first inside the view (else the first) when all collide.
func labelBox(view fyne.Size, c fyne.Position, s fyne.Size, placed []rect) rect {
	const gap = 8
	cands := []rect{
		{fyne.NewPos(c.X+gap, c.Y-gap-s.Height), s}, {fyne.NewPos(c.X+gap, c.Y+gap), s},
		{fyne.NewPos(c.X-gap-s.Width, c.Y-gap-s.Height), s}, {fyne.NewPos(c.X-gap-s.Width, c.Y+gap), s},
	}
	inside := func(b rect) bool {
		return b.pos.X >= 0 && b.pos.Y >= 0 && b.pos.X+b.size.Width <= view.Width && b.pos.Y+b.size.Height <= view.Height
	}
	first := -1
	for i, b := range cands {
		if !inside(b) {
			continue
		}
		if first < 0 {
			first = i
		}
		free := true
		for _, q := range placed {
			if b.overlaps(q) {
				free = false
				break
			}
		}
		if free {
			return b
		}
	}
	return cands[max(first, 0)]
}

func (r *landmarkRenderer) Refresh() {
	r.img.Image = r.v.img
	r.Layout(r.v.Size())
	for _, o := range r.Objects() {
		canvas.Refresh(o)
	}
}
