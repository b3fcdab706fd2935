package ui

import (
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// pickRadius is how close (in widget units) a drag or tap must be to a
// landmark to move or select it.
const pickRadius = 24

// Arrow-key steps in image pixels: a plain press, and with Shift or
// Ctrl held.
const (
	nudgeStep     = 1
	nudgeStepFast = 10
)

// Overlay colours, matching engine/cardiac's rendered overlay in spirit:
// long axis, short axis, heart_top-VLAS segment, vertebral ruler.
var (
	longAxisColor  = color.NRGBA{R: 0xe5, G: 0x39, B: 0x35, A: 0xff}
	shortAxisColor = color.NRGBA{R: 0x1e, G: 0x88, B: 0xe5, A: 0xff}
	vlasColor      = color.NRGBA{R: 0xfd, G: 0xd8, B: 0x35, A: 0xff}
	rulerColor     = color.NRGBA{R: 0x43, G: 0xa0, B: 0x47, A: 0xff}
	pointColor     = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	selectedColor  = color.NRGBA{R: 0xff, G: 0x98, B: 0x00, A: 0xff}
	labelBackColor = color.NRGBA{A: 0xb0}
)

// LandmarkLabel is landmark i's name as drawn beside it (Carina, Apex,
// Cranial, Caudal, VLAS, T4 (A), T9 (B)).
func LandmarkLabel(i int) string {
	names := [app.NumLandmarks]string{
		app.HeartTop: "Carina", app.HeartBottom: "Apex",
		app.HeartRight: "Cranial", app.HeartLeft: "Caudal",
		app.VLASPoint: "VLAS", app.VertebraA: "T4 (A)", app.VertebraB: "T9 (B)",
	}
	if i < 0 || i >= app.NumLandmarks {
		return ""
	}
	return names[i]
}

// EditState is what an undo step of the view restores: the landmarks,
// how many are set (landmarks 0 to Placed-1, in the class order) and
// whether hand placement is under way.
type EditState struct {
	Landmarks app.Landmarks
	Placed    int
	Placing   bool
}

// LandmarkView shows a radiograph with the 7 cardiac landmarks (each
// labelled), the long and short heart axes, the heart_top-VLAS segment
// and the vertebral ruler (6 vertebral units, ticked). Landmarks are
// dragged with the pointer, or selected with a tap and moved with the
// arrow keys (1 image pixel a press, 10 with Shift or Ctrl). In hand
// placement (StartPlacement) each tap places the next landmark in the
// class order until all 7 are set.
type LandmarkView struct {
	widget.BaseWidget

	// OnEdit is called just before the user changes the landmarks (a
	// placing tap, the first event of a drag, an arrow key), so that the
	// caller can keep an undo step.
	OnEdit func()
	// OnChange is called after the user changed the landmarks.
	OnChange func()
	// OnUndo is called for the undo shortcut (Ctrl+Z) while the view has
	// the keyboard focus.
	OnUndo func()

	img     image.Image
	st      EditState
	sel     int
	dragIdx int
	shift   bool
	focused bool
}

// NewLandmarkView returns an empty view.
func NewLandmarkView() *LandmarkView {
	v := &LandmarkView{dragIdx: -1, sel: -1}
	v.ExtendBaseWidget(v)
	return v
}

// SetImage shows img with landmarks lm; show is false when the model
// found none (only the image is drawn). Hand placement stops.
func (v *LandmarkView) SetImage(img image.Image, lm app.Landmarks, show bool) {
	v.img, v.dragIdx, v.sel = img, -1, -1
	v.st = EditState{Landmarks: lm}
	if show {
		v.st.Placed = app.NumLandmarks
	}
	v.Refresh()
}

// StartPlacement clears the landmarks and starts hand placement: the
// next taps place the 7 landmarks in the class order. It does nothing
// without an image.
func (v *LandmarkView) StartPlacement() {
	if v.img == nil {
		return
	}
	v.st = EditState{Placing: true}
	v.sel, v.dragIdx = -1, -1
	v.Refresh()
}

// State is the view's current edit state (for undo).
func (v *LandmarkView) State() EditState { return v.st }

// Restore puts back an edit state (undo, reset); it calls no callback.
func (v *LandmarkView) Restore(s EditState) {
	s.Placed = min(max(s.Placed, 0), app.NumLandmarks)
	s.Placing = s.Placing && s.Placed < app.NumLandmarks
	v.st, v.dragIdx = s, -1
	if v.sel >= s.Placed {
		v.sel = -1
	}
	v.Refresh()
}

// Landmarks returns the current landmarks in image pixels (those not yet
// placed are zero).
func (v *LandmarkView) Landmarks() app.Landmarks { return v.st.Landmarks }

// Placed is how many landmarks are set (7 when complete, 0 when the
// model found none and none was placed by hand).
func (v *LandmarkView) Placed() int { return v.st.Placed }

// Complete reports whether all 7 landmarks are set.
func (v *LandmarkView) Complete() bool { return v.st.Placed == app.NumLandmarks }

// Placing reports whether hand placement is under way.
func (v *LandmarkView) Placing() bool { return v.st.Placing }

// NextLandmark is the landmark the next tap places, -1 when not placing.
func (v *LandmarkView) NextLandmark() int {
	if !v.st.Placing {
		return -1
	}
	return v.st.Placed
}

// Selected is the landmark the arrow keys move, -1 for none.
func (v *LandmarkView) Selected() int { return v.sel }

// Select makes landmark i (a set one) the one the arrow keys move; -1
// clears the selection.
func (v *LandmarkView) Select(i int) {
	if i >= v.st.Placed {
		i = -1
	}
	v.sel = max(i, -1)
	v.Refresh()
}

// WidgetPos maps landmark i to widget coordinates at the current size.
func (v *LandmarkView) WidgetPos(i int) fyne.Position { return v.PointPos(v.st.Landmarks[i]) }

// PointPos maps a point in image pixels to widget coordinates at the
// current size.
func (v *LandmarkView) PointPos(p app.Point) fyne.Position {
	s, ox, oy := v.fit(v.Size())
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
func (v *LandmarkView) toImage(p fyne.Position) app.Point {
	s, ox, oy := v.fit(v.Size())
	return v.clamp(app.Point{X: float64((p.X - ox) / s), Y: float64((p.Y - oy) / s)})
}

// clamp keeps p inside the image (app.ClampPoint).
func (v *LandmarkView) clamp(p app.Point) app.Point { return app.ClampPoint(p, v.img.Bounds()) }

// nearest is the set landmark nearest to p within pickRadius, or -1.
func (v *LandmarkView) nearest(p fyne.Position) int {
	best, bestD := -1, float32(pickRadius)
	for i := range v.st.Placed {
		q := v.WidgetPos(i)
		if d := float32(math.Hypot(float64(q.X-p.X), float64(q.Y-p.Y))); d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

func (v *LandmarkView) edit() {
	if v.OnEdit != nil {
		v.OnEdit()
	}
}

func (v *LandmarkView) changed() {
	v.Refresh()
	if v.OnChange != nil {
		v.OnChange()
	}
}

// requestFocus gives the view the keyboard focus (for the arrow keys).
func (v *LandmarkView) requestFocus() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil && c.Focused() != v {
		c.Focus(v)
	}
}

// Tapped implements fyne.Tappable: while placing, the tap places the
// next landmark (and selects it); otherwise it selects the landmark
// under the pointer, or clears the selection. Either way the view takes
// the keyboard focus.
func (v *LandmarkView) Tapped(e *fyne.PointEvent) {
	if v.img == nil {
		return
	}
	v.requestFocus()
	if v.st.Placing {
		v.edit()
		i := v.st.Placed
		v.st.Landmarks[i] = v.toImage(e.Position)
		v.st.Placed++
		v.st.Placing = v.st.Placed < app.NumLandmarks
		v.sel = i
		v.changed()
		return
	}
	v.Select(v.nearest(e.Position))
}

// Dragged implements fyne.Draggable: the first event of a drag picks the
// landmark nearest the drag's start (and selects it), later events move it.
func (v *LandmarkView) Dragged(e *fyne.DragEvent) {
	if v.img == nil || v.st.Placed == 0 {
		return
	}
	if v.dragIdx < 0 {
		v.dragIdx = v.nearest(e.Position.Subtract(e.Dragged))
		if v.dragIdx < 0 {
			return
		}
		v.sel = v.dragIdx
		v.edit()
	}
	v.st.Landmarks[v.dragIdx] = v.toImage(e.Position)
	v.changed()
}

// DragEnd implements fyne.Draggable.
func (v *LandmarkView) DragEnd() { v.dragIdx = -1 }

// Nudge moves the selected landmark by (dx, dy) image pixels, kept inside
// the image, as one undo step; it reports whether a landmark moved.
func (v *LandmarkView) Nudge(dx, dy float64) bool {
	if v.img == nil || v.sel < 0 || v.sel >= v.st.Placed {
		return false
	}
	p := v.st.Landmarks[v.sel]
	q := v.clamp(app.Point{X: p.X + dx, Y: p.Y + dy})
	if q == p {
		return false
	}
	v.edit()
	v.st.Landmarks[v.sel] = q
	v.changed()
	return true
}

// nudgeKey moves the selection for an arrow key by step pixels.
func (v *LandmarkView) nudgeKey(k fyne.KeyName, step float64) bool {
	switch k {
	case fyne.KeyLeft:
		return v.Nudge(-step, 0)
	case fyne.KeyRight:
		return v.Nudge(step, 0)
	case fyne.KeyUp:
		return v.Nudge(0, -step)
	case fyne.KeyDown:
		return v.Nudge(0, step)
	}
	return false
}

// FocusGained implements fyne.Focusable.
func (v *LandmarkView) FocusGained() { v.focused = true }

// FocusLost implements fyne.Focusable.
func (v *LandmarkView) FocusLost() { v.focused, v.shift = false, false }

// TypedRune implements fyne.Focusable (no text input).
func (v *LandmarkView) TypedRune(rune) {}

// TypedKey implements fyne.Focusable: the arrow keys move the selected
// landmark by 1 image pixel, 10 while Shift is held.
func (v *LandmarkView) TypedKey(e *fyne.KeyEvent) {
	step := float64(nudgeStep)
	if v.shift {
		step = nudgeStepFast
	}
	v.nudgeKey(e.Name, step)
}

// KeyDown implements desktop.Keyable (tracks Shift for the larger step).
func (v *LandmarkView) KeyDown(e *fyne.KeyEvent) {
	if e.Name == desktop.KeyShiftLeft || e.Name == desktop.KeyShiftRight {
		v.shift = true
	}
}

// KeyUp implements desktop.Keyable.
func (v *LandmarkView) KeyUp(e *fyne.KeyEvent) {
	if e.Name == desktop.KeyShiftLeft || e.Name == desktop.KeyShiftRight {
		v.shift = false
	}
}

// TypedShortcut implements fyne.Shortcutable: Ctrl+Z is undo (OnUndo),
// Ctrl+arrow moves the selected landmark 10 pixels.
func (v *LandmarkView) TypedShortcut(s fyne.Shortcut) {
	switch s := s.(type) {
	case *fyne.ShortcutUndo:
		if v.OnUndo != nil {
			v.OnUndo()
		}
	case *desktop.CustomShortcut:
		if s.Modifier == fyne.KeyModifierControl || s.Modifier == fyne.KeyModifierShortcutDefault {
			v.nudgeKey(s.KeyName, nudgeStepFast)
		}
	}
}

// MinSize keeps the image usable in a small window.
func (v *LandmarkView) MinSize() fyne.Size { return fyne.NewSize(320, 320) }
