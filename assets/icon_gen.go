//go:build ignore

// icon_gen draws assets/icon.png, the VetLens icon: a white heart with
// its long and short axes on a clinic-blue rounded square, above a white
// ruler, 512x512 with anti-aliased edges (4x4 supersampling). Run with
// `go generate ./assets/`.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

const (
	size = 512
	ss   = 4 // samples per pixel side
)

var (
	blueTop    = [3]float64{0x2B, 0x86, 0xD1}
	blueBottom = [3]float64{0x17, 0x5E, 0xA6}
	white      = [3]float64{0xFF, 0xFF, 0xFF}
	axisBlue   = [3]float64{0x17, 0x5E, 0xA6}
)

// roundedRect reports whether (x, y) lies in the rectangle with corner
// radius r.
func roundedRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Max(x0+r, math.Min(x, x1-r))
	cy := math.Max(y0+r, math.Min(y, y1-r))
	return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
}

// heart reports whether (x, y) lies inside the heart centred at (cx, cy)
// of half-width s: (u^2 + v^2 - 1)^3 - u^2 v^3 <= 0.
func heart(x, y, cx, cy, s float64) bool {
	u := (x - cx) / s
	v := -(y - cy) / s
	a := u*u + v*v - 1
	return a*a*a-u*u*v*v*v <= 0
}

// segment reports whether (x, y) lies within w/2 of the segment a-b.
func segment(x, y, ax, ay, bx, by, w float64) bool {
	dx, dy := bx-ax, by-ay
	t := ((x-ax)*dx + (y-ay)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	px, py := ax+t*dx-x, ay+t*dy-y
	return px*px+py*py <= w*w/4
}

// sample is the colour at (x, y) in icon pixels; ok is false outside the
// rounded square (transparent).
func sample(x, y float64) (c [3]float64, ok bool) {
	if !roundedRect(x, y, 16, 16, 496, 496, 104) {
		return c, false
	}
	t := (y - 16) / 480
	for i := range c {
		c[i] = blueTop[i]*(1-t) + blueBottom[i]*t
	}
	const hx, hy, hs = 256, 196, 126
	if heart(x, y, hx, hy, hs) {
		c = white
		// The long axis (base to apex) and the short axis across it.
		if segment(x, y, 222, 118, 280, 276, 16) || segment(x, y, 180, 214, 326, 160, 16) {
			c = axisBlue
		}
	}
	// The ruler: a white bar with blue ticks, long ones every fifth.
	if roundedRect(x, y, 96, 364, 416, 428, 14) {
		c = white
		for i := 0; i <= 14; i++ {
			tx := 116 + float64(i)*20
			length := 22.0
			if i%5 == 0 {
				length = 38
			}
			if math.Abs(x-tx) <= 4 && y >= 364 && y <= 364+length {
				c = axisBlue
			}
		}
	}
	return c, true
}

func main() {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var sum [3]float64
			n := 0
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					c, ok := sample(float64(px)+(float64(sx)+0.5)/ss, float64(py)+(float64(sy)+0.5)/ss)
					if !ok {
						continue
					}
					for i := range sum {
						sum[i] += c[i]
					}
					n++
				}
			}
			if n == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(math.Round(sum[0] / float64(n))), G: uint8(math.Round(sum[1] / float64(n))), B: uint8(math.Round(sum[2] / float64(n))),
				A: uint8(math.Round(255 * float64(n) / (ss * ss))),
			})
		}
	}
	f, err := os.Create("icon.png")
	if err != nil {
		log.Fatal(err)
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
