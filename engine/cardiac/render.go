package cardiac

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Landmark colours, indexed like ClassNames.
var landmarkColors = [NumLandmarks]color.RGBA{
	{255, 64, 64, 255},  // heart_top: red
	{255, 160, 0, 255},  // heart_bottom: orange
	{64, 160, 255, 255}, // heart_right: blue
	{0, 220, 220, 255},  // heart_left: cyan
	{230, 80, 255, 255}, // VLAS: magenta
	{80, 230, 80, 255},  // Vertebra A: green
	{255, 240, 60, 255}, // Vertebra B: yellow
}

var (
	longAxisColor  = color.RGBA{255, 110, 60, 255}
	shortAxisColor = color.RGBA{60, 190, 255, 255}
	vlasColor      = color.RGBA{230, 80, 255, 255}
	rulerColor     = color.RGBA{120, 240, 120, 255}
	outlineColor   = color.RGBA{0, 0, 0, 255}
	panelColor     = color.RGBA{0, 0, 0, 170}
	textColor      = color.RGBA{255, 255, 255, 255}
)

// JPEGQuality is the quality of rendered images.
const JPEGQuality = 90

// Render draws the result onto a copy of img: the 7 landmarks (each its
// colour, labelled), the long axis (heart_top to heart_bottom), the short
// axis (heart_right to heart_left), the heart_top to VLAS segment, the
// vertebral ruler from Vertebra A to Vertebra B with a tick at every
// vertebral unit, and a panel with the VHS and VLAS values. Line widths and
// text scale with the image. Landmarks that are not finite are skipped.
func Render(img image.Image, r *Result) *image.RGBA {
	return RenderLabelled(img, r, ClassNames)
}

// LandmarkColor is the colour landmark k is drawn in.
func LandmarkColor(k int) color.RGBA { return landmarkColors[k] }

// RenderLabelled is Render with each landmark labelled labels[k] instead
// of its class name (a report labels them 1-7 and names them in a
// legend). Labels are placed so that they do not cover one another.
func RenderLabelled(img image.Image, r *Result, labels [NumLandmarks]string) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	side := float64(max(b.Dx(), b.Dy()))
	th := math.Max(1.5, side/400) // line thickness in pixels
	l := r.Landmarks
	if r.Rejected || len(r.ModelLandmarks) == 0 {
		drawPanel(out, r, side)
		return out
	}

	// Vertebral ruler with 7 ticks (0..6 vertebral units).
	a, bb := l[VertebraA], l[VertebraB]
	line(out, a, bb, th, rulerColor)
	if d := a.Dist(bb); d > 0 {
		nx, ny := -(bb.Y-a.Y)/d, (bb.X-a.X)/d // unit normal
		tick := 4 * th
		for i := 0; i <= 6; i++ {
			t := float64(i) / 6
			c := Point{a.X + t*(bb.X-a.X), a.Y + t*(bb.Y-a.Y)}
			line(out, Point{c.X - nx*tick, c.Y - ny*tick}, Point{c.X + nx*tick, c.Y + ny*tick}, th, rulerColor)
		}
	}
	line(out, l[HeartTop], l[HeartBottom], th, longAxisColor)
	line(out, l[HeartRight], l[HeartLeft], th, shortAxisColor)
	line(out, l[HeartTop], l[VLASPoint], th*0.7, vlasColor)

	scale := textScale(side, 700)
	var placed []image.Rectangle
	for k, p := range l {
		if !isFinite(p.X) || !isFinite(p.Y) {
			continue
		}
		disc(out, p, 3.2*th, outlineColor)
		disc(out, p, 2.4*th, landmarkColors[k])
	}
	for k, p := range l {
		if !isFinite(p.X) || !isFinite(p.Y) {
			continue
		}
		r := labelRect(out.Bounds(), labels[k], p, th, scale, placed)
		placed = append(placed, r)
		draw.Draw(out, r, image.NewUniform(panelColor), image.Point{}, draw.Over)
		drawText(out, labels[k], r.Min.X+scale, r.Min.Y+scale, scale, landmarkColors[k])
	}
	drawPanel(out, r, side)
	return out
}

// RenderJPEG renders the result and encodes it as JPEG.
func RenderJPEG(img image.Image, r *Result) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, Render(img, r), &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return nil, fmt.Errorf("encode rendered image: %w", err)
	}
	return buf.Bytes(), nil
}

// textScale is the integer magnification of the 7x13 bitmap font for an
// image whose longer side is side pixels: one step per perSide pixels, at
// least 1.
func textScale(side, perSide float64) int {
	return max(1, int(math.Round(side/perSide)))
}

// drawPanel writes the VHS and VLAS values in the top-left corner.
func drawPanel(dst *image.RGBA, r *Result, side float64) {
	lines := []string{"VHS " + valueText(r.VHS), "VLAS " + valueText(r.VLAS)}
	if r.Rejected {
		lines = []string{"Rejected: " + RejectionReason}
	}
	scale := textScale(side, 450)
	lh := basicfont.Face7x13.Height * scale
	pad := lh / 3
	w := 0
	for _, s := range lines {
		w = max(w, textWidth(s)*scale)
	}
	box := image.Rect(pad, pad, pad+w+2*pad, pad+len(lines)*lh+2*pad)
	draw.Draw(dst, box, image.NewUniform(panelColor), image.Point{}, draw.Over)
	for i, s := range lines {
		drawText(dst, s, box.Min.X+pad, box.Min.Y+pad+i*lh, scale, textColor)
	}
}

func valueText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

// labelRect places the backing box of a landmark's label: above-right of
// the point (clear of the lines through it), else below-right, above-left
// or below-left, then the same four and the four sides at twice and three
// times the distance, whichever first stays inside the image without
// covering a label already placed; the first in-image choice if all
// collide.
func labelRect(b image.Rectangle, s string, p Point, th float64, scale int, placed []image.Rectangle) image.Rectangle {
	w := textWidth(s)*scale + 2*scale
	h := basicfont.Face7x13.Height*scale + 2*scale
	x, y := int(p.X), int(p.Y)
	var cands []image.Point
	for _, m := range []int{1, 2, 3} {
		gap := int(3*th) + (m-1)*h
		cands = append(cands,
			image.Point{x + gap, y - gap - h}, image.Point{x + gap, y + gap}, image.Point{x - gap - w, y - gap - h}, image.Point{x - gap - w, y + gap},
			image.Point{x + gap, y - h/2}, image.Point{x - gap - w, y - h/2}, image.Point{x - w/2, y - gap - h}, image.Point{x - w/2, y + gap})
	}
	var first image.Rectangle
	for i, c := range cands {
		r := image.Rect(c.X, c.Y, c.X+w, c.Y+h)
		// Keep the box inside the image.
		r = r.Add(image.Pt(max(b.Min.X-r.Min.X, 0)+min(b.Max.X-r.Max.X, 0), max(b.Min.Y-r.Min.Y, 0)+min(b.Max.Y-r.Max.Y, 0)))
		if i == 0 {
			first = r
		}
		free := true
		for _, q := range placed {
			if r.Overlaps(q) {
				free = false
				break
			}
		}
		if free {
			return r
		}
	}
	return first
}

// textWidth is the unscaled width of s in the 7x13 font.
func textWidth(s string) int { return font.MeasureString(basicfont.Face7x13, s).Ceil() }

// drawText draws s with its top-left at (x, y), the 7x13 bitmap font
// magnified scale times (nearest neighbour, so it stays crisp).
func drawText(dst *image.RGBA, s string, x, y, scale int, c color.RGBA) {
	face := basicfont.Face7x13
	mask := image.NewAlpha(image.Rect(0, 0, textWidth(s), face.Height))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString(s)
	b := dst.Bounds()
	mb := mask.Bounds()
	for my := 0; my < mb.Dy(); my++ {
		for mx := 0; mx < mb.Dx(); mx++ {
			if mask.AlphaAt(mx, my).A < 128 {
				continue
			}
			for yy := y + my*scale; yy < y+(my+1)*scale; yy++ {
				for xx := x + mx*scale; xx < x+(mx+1)*scale; xx++ {
					if image.Pt(xx, yy).In(b) {
						dst.SetRGBA(xx, yy, c)
					}
				}
			}
		}
	}
}

// line draws a segment of the given thickness by stamping discs.
func line(dst *image.RGBA, p, q Point, thickness float64, c color.RGBA) {
	if !isFinite(p.X) || !isFinite(p.Y) || !isFinite(q.X) || !isFinite(q.Y) {
		return
	}
	r := thickness / 2
	d := p.Dist(q)
	step := math.Max(0.5, r/2)
	n := int(d/step) + 1
	for i := 0; i <= n; i++ {
		t := float64(i) / float64(n)
		disc(dst, Point{p.X + t*(q.X-p.X), p.Y + t*(q.Y-p.Y)}, r, c)
	}
}

// disc fills the pixels whose centres lie within radius r of c.
func disc(dst *image.RGBA, c Point, r float64, col color.RGBA) {
	b := dst.Bounds()
	x0, x1 := max(int(math.Floor(c.X-r)), b.Min.X), min(int(math.Ceil(c.X+r)), b.Max.X-1)
	y0, y1 := max(int(math.Floor(c.Y-r)), b.Min.Y), min(int(math.Ceil(c.Y+r)), b.Max.Y-1)
	rr := r * r
	for y := y0; y <= y1; y++ {
		dy := float64(y) + 0.5 - c.Y
		for x := x0; x <= x1; x++ {
			dx := float64(x) + 0.5 - c.X
			if dx*dx+dy*dy <= rr {
				dst.SetRGBA(x, y, col)
			}
		}
	}
}
