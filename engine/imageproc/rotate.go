package imageproc

import (
	"image"
	"math"
)

// Rotated is a grey copy of an image turned about its centre onto a
// canvas grown to hold all of it (the corners filled black), at a
// resolution reduced by the largest whole factor that keeps its longer
// side at least the maxSide asked for. ToOriginal and FromOriginal map
// points between it and the original image, both in continuous pixel
// units (0..W).
type Rotated struct {
	Image *image.Gray

	cos, sin float64 // of the turn, counter-clockwise on screen
	f        float64 // original pixels per pixel of Image
	cx, cy   float64 // the original image's centre, original pixels
	rcx, rcy float64 // the canvas's centre, original pixels
}

// RotateGray turns img by deg degrees counter-clockwise on screen (y grows
// downwards, so a point right of the centre moves up) about its centre.
// The grey values are Pillow's convert("L") luma, as LetterboxGray reads
// them; the image is first averaged over f x f blocks, f the largest
// whole factor that leaves the grown canvas's longer side at least
// maxSide (so under 2 x maxSide once reduced), then sampled bilinearly.
// maxSide <= 0 keeps full resolution.
func RotateGray(img image.Image, deg float64, maxSide int) *Rotated {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	cw := float64(w)*math.Abs(c) + float64(h)*math.Abs(s)
	ch := float64(w)*math.Abs(s) + float64(h)*math.Abs(c)
	f := 1
	if maxSide > 0 {
		f = max(1, int(max(cw, ch)/float64(maxSide)))
	}
	src, gw, gh := shrinkGray(img, f)
	ff := float64(f)
	ow := max(1, int(math.Round(cw/ff)))
	oh := max(1, int(math.Round(ch/ff)))
	r := &Rotated{
		Image: image.NewGray(image.Rect(0, 0, ow, oh)),
		cos:   c, sin: s, f: ff,
		cx: float64(w) / 2, cy: float64(h) / 2,
		rcx: float64(ow) * ff / 2, rcy: float64(oh) * ff / 2,
	}
	// Output pixel (i, j) samples the shrunk plane at (u0 + i*c, v0 + i*s)
	// along its row: the turn is affine, so each row steps evenly.
	for j := range oh {
		row := r.Image.Pix[j*r.Image.Stride:][:ow]
		x, y := r.ToOriginal(0.5, float64(j)+0.5)
		u, v := x/ff-0.5, y/ff-0.5
		for i := range row {
			row[i] = bilinear(src, gw, gh, u, v)
			u += c
			v += s
		}
	}
	return r
}

// ToOriginal maps a point of Image (its pixels, continuous) to the
// original image's pixels.
func (r *Rotated) ToOriginal(x, y float64) (float64, float64) {
	qx, qy := x*r.f-r.rcx, y*r.f-r.rcy
	return r.cx + r.cos*qx - r.sin*qy, r.cy + r.sin*qx + r.cos*qy
}

// FromOriginal maps a point of the original image to Image's pixels; the
// inverse of ToOriginal.
func (r *Rotated) FromOriginal(x, y float64) (float64, float64) {
	dx, dy := x-r.cx, y-r.cy
	return (r.rcx + r.cos*dx + r.sin*dy) / r.f, (r.rcy - r.sin*dx + r.cos*dy) / r.f
}

// shrinkGray returns img's luma averaged over f x f blocks (the last
// partial blocks dropped, but never below one pixel) as a row-major plane.
func shrinkGray(img image.Image, f int) ([]float32, int, int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	gw, gh := max(1, w/f), max(1, h/f)
	fw, fh := min(f, w), min(f, h)
	out := make([]float32, gw*gh)
	read := grayRows(img)
	rows := [][]float32{make([]float32, w)}
	for y := range gh * fh {
		read(y, rows)
		dst := out[(y/fh)*gw:][:gw]
		for i := range dst {
			var acc float32
			for _, v := range rows[0][i*fw : i*fw+fw] {
				acc += v
			}
			dst[i] += acc
		}
	}
	inv := 1 / float32(fw*fh)
	for i := range out {
		out[i] *= inv
	}
	return out, gw, gh
}

// bilinear samples plane p (gw x gh, pixel centres at whole coordinates)
// at (u, v), reading 0 outside it, and rounds to a byte.
func bilinear(p []float32, gw, gh int, u, v float64) uint8 {
	x0, y0 := math.Floor(u), math.Floor(v)
	ax, ay := float32(u-x0), float32(v-y0)
	i, j := int(x0), int(y0)
	var a, b, c, d float32 // (i, j), (i+1, j), (i, j+1), (i+1, j+1)
	if i >= 0 && j >= 0 && i+1 < gw && j+1 < gh {
		k := j*gw + i
		a, b, c, d = p[k], p[k+1], p[k+gw], p[k+gw+1]
	} else {
		if i < -1 || j < -1 || i >= gw || j >= gh {
			return 0
		}
		at := func(x, y int) float32 {
			if x < 0 || y < 0 || x >= gw || y >= gh {
				return 0
			}
			return p[y*gw+x]
		}
		a, b, c, d = at(i, j), at(i+1, j), at(i, j+1), at(i+1, j+1)
	}
	top := a + (b-a)*ax
	bot := c + (d-c)*ax
	val := top + (bot-top)*ay
	return uint8(min(255, max(0, val+0.5)))
}
