package live

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// alwaysOutliner finds a screen in every frame (a false positive on a
// radiograph file, as the learned corner model can give).
type alwaysOutliner struct{}

func (alwaysOutliner) Corners(context.Context, []byte) ([4][2]float64, bool, error) {
	return [4][2]float64{{10, 10}, {90, 10}, {90, 90}, {10, 90}}, true, nil
}

// pngFrame encodes a 160x120 frame, grey or with colour.
func pngFrame(t *testing.T, colour bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 160, 120))
	for y := range 120 {
		for x := range 160 {
			v := uint8((x*7 + y*3) % 256)
			c := color.RGBA{v, v, v, 255}
			if colour {
				c = color.RGBA{v, uint8(255 - int(v)), uint8((int(v) * 3) % 256), 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFileOutliner: a grey frame from a file (a radiograph file) gets no
// screen outline whatever the detector says; a colour frame keeps the
// detector's.
func TestFileOutliner(t *testing.T) {
	o := FileOutliner(alwaysOutliner{})
	for _, tc := range []struct {
		name   string
		colour bool
		want   bool
	}{{"radiograph file", false, false}, {"photo", true, true}} {
		_, ok, err := o.Corners(context.Background(), pngFrame(t, tc.colour))
		if err != nil || ok != tc.want {
			t.Errorf("%s: outline %v, %v; want %v", tc.name, ok, err, tc.want)
		}
	}
}
