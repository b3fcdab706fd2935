package pop

import (
	"image/color"
	"math"
	"testing"
)

// When no closed contour outlines the screen (a dark bezel on an equally
// dark background, and an image whose dark margin hides the active area's
// edge along part of every side), the line-segment candidates still find
// the active area from the straight pieces of its edge.
func TestLineCandidatesFindMergedOutline(t *testing.T) {
	dark := color.RGBA{30, 30, 30, 0}
	cases := []struct {
		name string
		// reach is the diamond's half-diagonal as a share of the active
		// area's half-width (height: the same share of the half-height):
		// reach - 1 of each side shows an edge.
		reach float64
		// bg is the background; bezel is dark.
		bg color.RGBA
	}{
		{"60 % of each side visible", 1.6, dark},
		{"70 % of each side visible", 1.7, dark},
		{"slightly lighter background", 1.65, color.RGBA{34, 36, 40, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A bright diamond centred in the active area, clipped by its
			// sides: an octagon whose contour is no quad.
			draw := func(fill func(x0, y0, x1, y1 int, c color.RGBA)) {
				fill(0, 0, 800, 500, dark)
				for y := range 500 {
					d := 1 - math.Abs(float64(y)+0.5-250)/(250*tc.reach)
					if d <= 0 {
						continue
					}
					hw := int(d * 400 * tc.reach)
					fill(max(0, 400-hw), y, min(800, 400+hw), y+1, color.RGBA{200, 200, 200, 0})
				}
			}
			frame, want := renderMonitor(t, tc.bg, dark, draw, Rect(800, 500))
			defer frame.Close()
			assertActiveArea(t, frame, want, 3)
		})
	}
}
