package ui

import "fyne.io/fyne/v2"

// minWidth is a layout that gives its objects at least a width (a side
// panel that a split must not squeeze until it cannot be read).
type minWidth struct{ width float32 }

// Layout implements fyne.Layout: every object fills the container.
func (m minWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

// MinSize implements fyne.Layout: the objects' own, widened to the width.
func (m minWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		s = s.Max(o.MinSize())
	}
	s.Width = max(s.Width, m.width)
	return s
}

// withMinWidth puts o in a container at least width wide.
func withMinWidth(width float32, o fyne.CanvasObject) *fyne.Container {
	return &fyne.Container{Layout: minWidth{width}, Objects: []fyne.CanvasObject{o}}
}
