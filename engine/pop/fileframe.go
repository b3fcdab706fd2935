package pop

import "math"

// File frames. A radiograph file has straight edges of its own: the inner
// edge of a border that a viewer or a crop tool added, a collimation edge,
// the edge of a padded image. The corner detector finds them as readily as
// a monitor's display area (they are often the strongest rectangle in the
// file), and the colour gate (MinChroma) does not stop a file exported
// with a display tint. What tells them from a photographed monitor is
// geometry: a file's own edges run along the pixel grid, close to the
// image's edges, while a hand-held photograph shows the monitor with the
// camera's roll and perspective, inside a bezel and a room. Parameters
// were set on development composites and files (pop/composites.py kinds
// screen and radiograph_export, seeds 32,000,000+ and 33,000,000+), and
// the share of photographs they would take for files on 200,000 simulated
// camera poses of the composites' distribution (docs/pop.md).
const (
	// gridTol (degrees): a side within this angle of an image axis lies
	// on the pixel grid. A file's own edges are fitted within 0.15
	// degrees; a monitor photographed by hand has all four sides this
	// close to the axes in about 1 of 1000 composite poses.
	gridTol = 0.3
	// frameMargin is the largest distance, as a share of the image's
	// width (height), between a file frame's side and the image edge it
	// faces: borders are a few pixels to a few per cent, collimation
	// margins up to about 10 %.
	frameMargin = 0.15
	// minFrameSides is how many sides of a file frame lie on the pixel
	// grid near the image edge: a quad found along the file's border on
	// three sides and along an edge inside the image on the fourth is
	// still the file's own frame. Three such sides occur in about 3 of
	// 10,000 composite poses.
	minFrameSides = 3
)

// FrameSides counts the sides of the screen quad that lie on the pixel
// grid (within gridTol of an image axis) and within frameMargin of the
// image edge they face; 0 when no quad was found.
func (c Corners) FrameSides() int {
	if c.Confidence == 0 || c.Width <= 0 || c.Height <= 0 {
		return 0
	}
	q := c.Screen
	w, h := float64(c.Width), float64(c.Height)
	n := 0
	for i := range 4 {
		a, b := q[i], q[(i+1)%4]
		// TL, TR, BR, BL: top, right, bottom, left; the top and bottom
		// sides must run along rows, the others along columns.
		if horiz := math.Abs(b.X-a.X) > math.Abs(b.Y-a.Y); horiz != (i%2 == 0) || q.sideAxisDeviation(i) > gridTol {
			continue
		}
		var m float64
		switch i {
		case 0:
			m = math.Max(a.Y, b.Y) / h
		case 1:
			m = (w - math.Min(a.X, b.X)) / w
		case 2:
			m = (h - math.Min(a.Y, b.Y)) / h
		case 3:
			m = math.Max(a.X, b.X) / w
		}
		if m <= frameMargin {
			n++
		}
	}
	return n
}

// FileFrame reports whether the screen quad is a file's own frame (a
// border, collimation or crop edge) rather than a photographed monitor:
// at least minFrameSides of its sides lie on the pixel grid near the
// image's edge (FrameSides).
func (c Corners) FileFrame() bool { return c.FrameSides() >= minFrameSides }
