package imageproc

import (
	"image"
	"image/color"
	"testing"
)

func TestMirrorX(t *testing.T) {
	const w, h = 5, 3
	gray := image.NewGray(image.Rect(10, 20, 10+w, 20+h)) // bounds not at the origin
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	for y := range h {
		for x := range w {
			v := uint8(10*x + 60*y)
			gray.SetGray(10+x, 20+y, color.Gray{Y: v})
			rgba.SetRGBA(x, y, color.RGBA{R: v, G: 255 - v, B: uint8(x), A: 255})
			ycc.Y[ycc.YOffset(x, y)] = v
			ycc.Cb[ycc.COffset(x, y)] = uint8(100 + x)
			ycc.Cr[ycc.COffset(x, y)] = uint8(150 - y)
		}
	}
	cases := []struct {
		name     string
		in       image.Image
		wantGray bool
	}{
		{"gray off the origin stays gray", gray, true},
		{"RGBA", rgba, false},
		{"YCbCr becomes RGBA", ycc, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := MirrorX(tc.in)
			if _, isGray := out.(*image.Gray); isGray != tc.wantGray {
				t.Fatalf("result type %T", out)
			}
			ob, ib := out.Bounds(), tc.in.Bounds()
			if ob != image.Rect(0, 0, w, h) {
				t.Fatalf("bounds %v", ob)
			}
			for y := range h {
				for x := range w {
					got := color.RGBAModel.Convert(out.At(x, y))
					want := color.RGBAModel.Convert(tc.in.At(ib.Min.X+w-1-x, ib.Min.Y+y))
					if got != want {
						t.Fatalf("(%d,%d): got %v, want %v", x, y, got, want)
					}
				}
			}
			if again := MirrorX(out); color.RGBAModel.Convert(again.At(0, 0)) != color.RGBAModel.Convert(tc.in.At(ib.Min.X, ib.Min.Y)) {
				t.Fatal("mirroring twice does not give the image back")
			}
		})
	}
}
