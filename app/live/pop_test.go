package live

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"testing"

	"vetlens/app"
)

// screenEverywhere is a PoP pipeline that finds a screen in every frame
// (a false positive on a radiograph file, as the learned corner model can
// give) and whose PlainFile rule is plain: a grey frame is a file unless
// the frame's first pixel is white (standing for a grey photo of a screen
// the learned pipeline recognises). The rest of app.PoP is not used.
type screenEverywhere struct{ app.PoP }

func (screenEverywhere) DetectCorners(context.Context, []byte) ([4][2]float64, int, int, error) {
	return [4][2]float64{{10, 10}, {90, 10}, {90, 90}, {10, 90}}, 160, 120, nil
}

func (screenEverywhere) PlainFile(_ context.Context, b []byte) (bool, error) {
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return false, err
	}
	first, _, _, _ := img.At(0, 0).RGBA()
	grey := true
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			r, g, b, _ := img.At(x, y).RGBA()
			grey = grey && r == g && g == b
		}
	}
	return grey && first != 0xffff, nil
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

// TestFileOutliner: a frame from a file that the pipeline's PlainFile
// rule calls a radiograph file gets no screen outline whatever the corner
// finder says; any other frame (a colour photo, a grey photo of a screen,
// an undecodable frame) keeps the finder's.
func TestFileOutliner(t *testing.T) {
	o := FileOutliner(screenEverywhere{})
	greyScreen := pngFrame(t, false)
	{
		img, _, err := image.Decode(bytes.NewReader(greyScreen))
		if err != nil {
			t.Fatal(err)
		}
		m := image.NewGray(img.Bounds())
		draw.Draw(m, m.Bounds(), img, image.Point{}, draw.Src)
		m.SetGray(0, 0, color.Gray{Y: 255})
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		greyScreen = b.Bytes()
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		want  bool
	}{
		{"radiograph file", pngFrame(t, false), false},
		{"colour photo", pngFrame(t, true), true},
		{"grey photo of a screen", greyScreen, true},
		{"undecodable", []byte("not an image"), true},
	} {
		_, ok, err := o.Corners(context.Background(), tc.frame)
		if err != nil || ok != tc.want {
			t.Errorf("%s: outline %v, %v; want %v", tc.name, ok, err, tc.want)
		}
	}
}
