package pop

import (
	"image"
	"image/color"
	"slices"
	"testing"

	"gocv.io/x/gocv"
)

// A radiograph's white areas (collimation, bone, burned-in text) may cover
// a third of the display and still be measurable; a washed-out display
// with most of it at white is not.
func TestMeasureGlare(t *testing.T) {
	cases := []struct {
		name      string
		white     float64 // share of the image at grey 255
		wantGlare bool
	}{
		{"no white", 0, false},
		{"a third white", 0.33, false},
		{"two fifths white", 0.40, false},
		{"half white", 0.5, true},
		{"washed out", 0.8, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const w, h = 800, 500
			m := gocv.NewMatWithSizeFromScalar(gocv.NewScalar(90, 90, 90, 0), h, w, gocv.MatTypeCV8UC3)
			defer m.Close()
			// Texture so the frame is sharp: a checkerboard of 10 px squares.
			for y := 0; y < h; y += 10 {
				for x := (y / 10 % 2) * 10; x < w; x += 20 {
					gocv.Rectangle(&m, image.Rect(x, y, x+10, y+10), color.RGBA{60, 60, 60, 0}, -1)
				}
			}
			if tc.white > 0 {
				gocv.Rectangle(&m, image.Rect(0, 0, int(tc.white*w), h), color.RGBA{255, 255, 255, 0}, -1)
			}
			q, err := Measure(m, Quad{{400, 300}, {1200, 300}, {1200, 800}, {400, 800}}, 1600, 1100)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(q.Problems, "glare"); got != tc.wantGlare {
				t.Errorf("glare %.2f, problems %v: glare flagged %v, want %v", q.Glare, q.Problems, got, tc.wantGlare)
			}
		})
	}
}
