package ui

import (
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/widget"

	"vetlens/engine/cardiac"
)

// pickRadius is how close (in widget units) a drag must start to a
// landmark to move it.
const pickRadius = 24

// Overlay colours, matching engine/cardiac's rendered overlay in spirit:
// long axis, short axis, heart_top-VLAS segment, vertebral ruler.
var (
	longAxisColor  = color.NRGBA{R: 0xe5, G: 0x39, B: 0x35, A: 0xff}
	shortAxisColor = color.NRGBA{R: 0x1e, G: 0x88, B: 0xe5, A: 0xff}
	vlasColor      = color.NRGBA{R: 0xfd, G: 0xd8, B: 0x35, A: 0xff}
	rulerColor     = color.NRGBA{R: 0x43, G: 0xa0, B: 0x47, A: 0xff}
	pointColor     = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
)

// LandmarkView shows a radiograph with the 7 cardiac landmarks, the long
// and short heart axes, the heart_top-VLAS segment and the vertebral ruler
// (6 vertebral units, ticked). Landmarks are dragged with the pointer; each
// move calls OnChange with the new landmarks in image pixels.
type LandmarkView struct {
	widget.BaseWidget

	// OnChange is called after a landmark moved (on the UI goroutine).
	OnChange func(cardiac.Landmarks)

	img     image.Image
	lm      cardiac.Landmarks
	hasLm   bool
	dragIdx int
}

// NewLandmarkView returns an empty view.
func NewLandmarkView() *LandmarkView {
	v := &LandmarkView{dragIdx: -1}
	v.ExtendBaseWidget(v)
	return v
}

// SetImage shows img with landmarks lm; show is false when the model
// found none (only the image is drawn).
func (v *LandmarkView) SetImage(img image.Image, lm cardiac.Landmarks, show bool) {
	v.img, v.lm, v.hasLm, v.dragIdx = img, lm, show, -1
	v.Refresh()
}

// Landmarks returns the current landmarks in image pixels.
func (v *LandmarkView) Landmarks() cardiac.Landmarks { return v.lm }

// WidgetPos maps landmark i to widget coordinates at the current size.
func (v *LandmarkView) WidgetPos(i int) fyne.Position {
	s, ox, oy := v.fit(v.Size())
	p := v.lm[i]
	return fyne.NewPos(ox+float32(p.X)*s, oy+float32(p.Y)*s)
}

// fit is the contain-fit of the image in size: scale and offset.
func (v *LandmarkView) fit(size fyne.Size) (scale, ox, oy float32) {
	if v.img == nil {
		return 1, 0, 0
	}
	b := v.img.Bounds()
	iw, ih := float32(b.Dx()), float32(b.Dy())
	if iw == 0 || ih == 0 || size.Width == 0 || size.Height == 0 {
		return 1, 0, 0
	}
	scale = min(size.Width/iw, size.Height/ih)
	return scale, (size.Width - iw*scale) / 2, (size.Height - ih*scale) / 2
}

// toImage maps a widget position to image pixels, clamped to the image.
func (v *LandmarkView) toImage(p fyne.Position) cardiac.Point {
	s, ox, oy := v.fit(v.Size())
	b := v.img.Bounds()
	x := math.Min(math.Max(float64((p.X-ox)/s), 0), float64(b.Dx()))
	y := math.Min(math.Max(float64((p.Y-oy)/s), 0), float64(b.Dy()))
	return cardiac.Point{X: x, Y: y}
}

// nearest is the landmark nearest to p within pickRadius, or -1.
func (v *LandmarkView) nearest(p fyne.Position) int {
	best, bestD := -1, float32(pickRadius)
	for i := range cardiac.NumLandmarks {
		q := v.WidgetPos(i)
		if d := float32(math.Hypot(float64(q.X-p.X), float64(q.Y-p.Y))); d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

// Dragged implements fyne.Draggable: the first event of a drag picks the
// landmark nearest the drag's start, later events move it.
func (v *LandmarkView) Dragged(e *fyne.DragEvent) {
	if v.img == nil || !v.hasLm {
		return
	}
	if v.dragIdx < 0 {
		v.dragIdx = v.nearest(e.Position.Subtract(e.Dragged))
		if v.dragIdx < 0 {
			return
		}
	}
	v.lm[v.dragIdx] = v.toImage(e.Position)
	v.Refresh()
	if v.OnChange != nil {
		v.OnChange(v.lm)
	}
}

// DragEnd implements fyne.Draggable.
func (v *LandmarkView) DragEnd() { v.dragIdx = -1 }

// MinSize keeps the image usable in a small window.
func (v *LandmarkView) MinSize() fyne.Size { return fyne.NewSize(320, 320) }

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
	}
	r.Refresh()
	return r
}

type landmarkRenderer struct {
	v                        *LandmarkView
	img                      *canvas.Image
	long, short, vlas, ruler *canvas.Line
	ticks                    [7]*canvas.Line
	dots                     [cardiac.NumLandmarks]*canvas.Circle
}

func (r *landmarkRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.img, r.ruler, r.long, r.short, r.vlas}
	for _, t := range r.ticks {
		objs = append(objs, t)
	}
	for _, d := range r.dots {
		objs = append(objs, d)
	}
	return objs
}

func (r *landmarkRenderer) Destroy() {}

func (r *landmarkRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func (r *landmarkRenderer) Layout(size fyne.Size) {
	r.img.Resize(size)
	r.img.Move(fyne.NewPos(0, 0))
	show := r.v.img != nil && r.v.hasLm
	for _, o := range r.Objects()[1:] {
		if show {
			o.Show()
		} else {
			o.Hide()
		}
	}
	if !show {
		return
	}
	p := func(i int) fyne.Position { return r.v.WidgetPos(i) }
	set := func(l *canvas.Line, a, b fyne.Position) { l.Position1, l.Position2 = a, b }
	set(r.long, p(cardiac.HeartTop), p(cardiac.HeartBottom))
	set(r.short, p(cardiac.HeartRight), p(cardiac.HeartLeft))
	set(r.vlas, p(cardiac.HeartTop), p(cardiac.VLASPoint))
	a, b := p(cardiac.VertebraA), p(cardiac.VertebraB)
	set(r.ruler, a, b)
	dx, dy := b.X-a.X, b.Y-a.Y
	if d := float32(math.Hypot(float64(dx), float64(dy))); d > 0 {
		nx, ny := -dy/d*6, dx/d*6
		for i, t := range r.ticks {
			f := float32(i) / 6
			c := fyne.NewPos(a.X+f*dx, a.Y+f*dy)
			set(t, fyne.NewPos(c.X-nx, c.Y-ny), fyne.NewPos(c.X+nx, c.Y+ny))
		}
	}
	const rad = 5
	for i, d := range r.dots {
		c := p(i)
		d.Move(fyne.NewPos(c.X-rad, c.Y-rad))
		d.Resize(fyne.NewSize(2*rad, 2*rad))
	}
}

func (r *landmarkRenderer) Refresh() {
	r.img.Image = r.v.img
	r.Layout(r.v.Size())
	for _, o := range r.Objects() {
		canvas.Refresh(o)
	}
}
