package pop_test

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math/rand/v2"
	"testing"

	"vetlens/engine/cardiac/cardiactest"
	"vetlens/engine/imageproc"
	"vetlens/engine/pop"
)

// viewerWindow draws a viewer's window of w x h around img at (ox, oy):
// a background, a toolbar of icons, a strip of thumbnail panels with
// small copies of img, and a status bar, all in flat greys.
func viewerWindow(img image.Image, w, h, ox, oy int, bg, panel uint8) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	fill := func(r image.Rectangle, g uint8) {
		draw.Draw(out, r, image.NewUniform(color.RGBA{g, g, g + 4, 255}), image.Point{}, draw.Src)
	}
	fill(out.Bounds(), bg)
	fill(image.Rect(0, 0, w, 40), panel)   // toolbar
	fill(image.Rect(0, h-22, w, h), panel) // status bar
	for x := 8; x+26 < w; x += 36 {
		fill(image.Rect(x, 7, x+26, 33), uint8(90+x%120)) // icons
	}
	b := img.Bounds()
	for k := range 3 { // thumbnail panels with a coarse copy of the image
		p := image.Rect(10, 60+k*110, ox-20, 160+k*110)
		if p.Max.Y > h-30 || p.Dx() < 20 {
			break
		}
		fill(p, panel)
		in := p.Inset(6)
		for y := in.Min.Y; y < in.Max.Y; y++ {
			for x := in.Min.X; x < in.Max.X; x++ {
				sx := b.Min.X + (x-in.Min.X)*b.Dx()/in.Dx()
				sy := b.Min.Y + (y-in.Min.Y)*b.Dy()/in.Dy()
				out.Set(x, y, img.At(sx, sy))
			}
		}
	}
	draw.Draw(out, b.Sub(b.Min).Add(image.Pt(ox, oy)), img, b.Min, draw.Src)
	return out
}

// TestScreenshotViewport: the displayed radiograph of a viewer's window is
// found where it was drawn, for both generators' test phantoms, dark and
// light themes, PNG and JPEG: it keeps no more than a few pixels of
// chrome (JPEG blurs the edge; a light theme's grey may be one of the
// image's own flat greys) and loses at most the image's own flat margin;
// a radiograph in a plain padding is found too; a flat field and noise
// to the edges are not screenshots.
func TestScreenshotViewport(t *testing.T) {
	type tc struct {
		name string
		img  image.Image
		want image.Rectangle // empty: not found
	}
	var cases []tc
	jpegOf := func(m image.Image) image.Image {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 85}); err != nil {
			t.Fatal(err)
		}
		d, _, err := imageproc.Decode(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i, p := range cardiactest.Phantoms(t) {
		img := p.Image(t)
		b := img.Bounds()
		if b.Dx() > 1100 {
			continue // keep the test quick
		}
		ox, oy := 220+7*i, 80+3*i
		bg, panel := uint8(28), uint8(52)
		if i%2 == 1 {
			bg, panel = 236, 212
		}
		shot := image.Image(viewerWindow(img, b.Dx()+ox+60, b.Dy()+oy+50, ox, oy, bg, panel))
		if i%3 == 2 {
			shot = jpegOf(shot)
		}
		cases = append(cases, tc{"viewer window of " + p.Name, shot, b.Sub(b.Min).Add(image.Pt(ox, oy))})
		if i == 0 {
			pad := image.NewGray(image.Rect(0, 0, b.Dx()+160, b.Dy()+120))
			draw.Draw(pad, pad.Bounds(), image.NewUniform(color.Gray{200}), image.Point{}, draw.Src)
			draw.Draw(pad, b.Sub(b.Min).Add(image.Pt(80, 60)), img, b.Min, draw.Src)
			cases = append(cases, tc{"padded " + p.Name, pad, b.Sub(b.Min).Add(image.Pt(80, 60))})
		}
	}
	flat := image.NewGray(image.Rect(0, 0, 400, 300))
	noise := image.NewGray(image.Rect(0, 0, 400, 300))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(rng.IntN(256))
	}
	cases = append(cases, tc{"flat field", flat, image.Rectangle{}}, tc{"noise to the edges", noise, image.Rectangle{}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := pop.ScreenshotViewport(c.img)
			if c.want.Empty() {
				if ok {
					t.Fatalf("found %v in an image that is no screenshot", got)
				}
				return
			}
			if !ok {
				t.Fatalf("not found; want %v", c.want)
			}
			slack := max(3, c.want.Dx()/150, c.want.Dy()/150)
			if !got.In(c.want.Inset(-slack)) {
				t.Errorf("found %v keeps more than %d px of chrome around the displayed image %v", got, slack, c.want)
			}
			lost := c.want.Dx()*c.want.Dy() - got.Dx()*got.Dy()
			if float64(lost) > 0.2*float64(c.want.Dx()*c.want.Dy()) {
				t.Errorf("found %v, %.0f %% short of the displayed image %v", got, 100*float64(lost)/float64(c.want.Dx()*c.want.Dy()), c.want)
			}
		})
	}
}

// BenchmarkScreenshotViewport1080: one 1920x1080 viewer screenshot.
func BenchmarkScreenshotViewport1080(b *testing.B) {
	p := cardiactest.Phantoms(b)[0]
	img := p.Image(b)
	shot := viewerWindow(img, 1920, 1080, 300, 90, 28, 52)
	b.ResetTimer()
	for b.Loop() {
		pop.ScreenshotViewport(shot)
	}
}
