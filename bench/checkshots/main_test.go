package main

import (
	"image"
	"image/color"
	"testing"
)

func TestBlank(t *testing.T) {
	flat := image.NewRGBA(image.Rect(0, 0, 300, 300))
	for i := range flat.Pix {
		flat.Pix[i] = 0xee
	}
	twoTone := image.NewRGBA(image.Rect(0, 0, 300, 300))
	drawn := image.NewRGBA(image.Rect(0, 0, 300, 300))
	for y := 0; y < 300; y++ {
		for x := 0; x < 300; x++ {
			if x < 150 {
				twoTone.Set(x, y, color.White)
			} else {
				twoTone.Set(x, y, color.Black)
			}
			drawn.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	for _, tc := range []struct {
		name  string
		img   image.Image
		blank bool
	}{{"flat", flat, true}, {"two tones", twoTone, true}, {"drawn", drawn, false}} {
		if got := Measure(tc.img).Blank(); got != tc.blank {
			t.Errorf("%s: blank %v, want %v (%+v)", tc.name, got, tc.blank, Measure(tc.img))
		}
	}
}
