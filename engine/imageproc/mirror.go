package imageproc

import (
	"image"
	"image/draw"
)

// MirrorX returns img mirrored left to right, as a new image with bounds
// starting at (0, 0): pixel (x, y) of the result is pixel (W-1-x, y) of
// img. *image.Gray stays *image.Gray; every other image becomes
// *image.RGBA (draw.Draw's conversion, exact for *image.RGBA).
func MirrorX(img image.Image) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if g, ok := img.(*image.Gray); ok {
		out := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			src := g.Pix[g.PixOffset(b.Min.X, b.Min.Y+y):][:w]
			dst := out.Pix[y*out.Stride:][:w]
			for x := range w {
				dst[x] = src[w-1-x]
			}
		}
		return out
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	for y := range h {
		row := out.Pix[y*out.Stride:][:4*w]
		for i, j := 0, w-1; i < j; i, j = i+1, j-1 {
			a, c := row[4*i:4*i+4], row[4*j:4*j+4]
			for k := range 4 {
				a[k], c[k] = c[k], a[k]
			}
		}
	}
	return out
}
