package imageproc

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// brightest returns the centre of the brightest pixel of g.
func brightest(g *image.Gray) (float64, float64) {
	b := g.Bounds()
	best, bx, by := -1, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if v := int(g.GrayAt(x, y).Y); v > best {
				best, bx, by = v, x, y
			}
		}
	}
	return float64(bx) + 0.5, float64(by) + 0.5
}

func TestRotateGrayMovesContentWithItsMapping(t *testing.T) {
	const w, h = 300, 200
	cases := []struct {
		name    string
		deg     float64
		maxSide int
		wantW   int // canvas size, 0: not checked
		wantH   int
	}{
		{"no turn keeps the image", 0, 0, w, h},
		{"quarter turn swaps the sides", 90, 0, h, w},
		{"25 degrees grows the canvas", 25, 0, int(math.Round(w*math.Cos(25*math.Pi/180) + h*math.Sin(25*math.Pi/180))), 0},
		{"-30 degrees at reduced size", -30, 120, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A 3x3 bright square at a known place, off the origin and the centre.
			img := image.NewRGBA(image.Rect(7, 9, 7+w, 9+h))
			const px, py = 220, 60
			for y := py - 1; y <= py+1; y++ {
				for x := px - 1; x <= px+1; x++ {
					img.SetRGBA(7+x, 9+y, color.RGBA{255, 255, 255, 255})
				}
			}
			r := RotateGray(img, tc.deg, tc.maxSide)
			rb := r.Image.Bounds()
			if tc.wantW != 0 && rb.Dx() != tc.wantW {
				t.Errorf("width %d, want %d", rb.Dx(), tc.wantW)
			}
			if tc.wantH != 0 && rb.Dy() != tc.wantH {
				t.Errorf("height %d, want %d", rb.Dy(), tc.wantH)
			}
			if long := max(rb.Dx(), rb.Dy()); tc.maxSide > 0 && (long < tc.maxSide || long >= 2*tc.maxSide) {
				t.Errorf("canvas %v: longer side not in [%d, %d)", rb, tc.maxSide, 2*tc.maxSide)
			}
			// The bright square lands where FromOriginal says, and
			// ToOriginal brings it back (within the resampling's pixel).
			bx, by := brightest(r.Image)
			fx, fy := r.FromOriginal(px+0.5, py+0.5)
			if math.Hypot(bx-fx, by-fy) > 1.5 {
				t.Errorf("square at (%.1f, %.1f) in the turned image, mapping says (%.1f, %.1f)", bx, by, fx, fy)
			}
			ox, oy := r.ToOriginal(fx, fy)
			if math.Hypot(ox-(px+0.5), oy-(py+0.5)) > 1e-9 {
				t.Errorf("round trip (%.3f, %.3f), want (%.1f, %.1f)", ox, oy, px+0.5, py+0.5)
			}
			// Counter-clockwise on screen: a point right of the centre moves up.
			if tc.deg > 0 {
				cx, cy := r.FromOriginal(w/2, h/2)
				_, ry := r.FromOriginal(w/2+50, h/2)
				if !(ry < cy) {
					t.Errorf("a point right of the centre went from y %.1f to %.1f; want up (cx %.1f)", cy, ry, cx)
				}
			}
		})
	}
}

func TestRotateGrayKeepsGreyValues(t *testing.T) {
	// A flat grey field stays that grey inside the turned canvas; the
	// grown corners are black.
	img := image.NewGray(image.Rect(0, 0, 200, 100))
	for i := range img.Pix {
		img.Pix[i] = 140
	}
	r := RotateGray(img, 20, 0)
	cx, cy := r.FromOriginal(100, 50)
	if v := r.Image.GrayAt(int(cx), int(cy)).Y; v != 140 {
		t.Errorf("centre %d, want 140", v)
	}
	if v := r.Image.GrayAt(0, 0).Y; v != 0 {
		t.Errorf("grown corner %d, want 0", v)
	}
}

func BenchmarkRotateGray1024(b *testing.B) {
	img := image.NewGray(image.Rect(0, 0, 1024, 1024))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	b.ResetTimer()
	for b.Loop() {
		RotateGray(img, 23, 448)
	}
}
