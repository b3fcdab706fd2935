package cardiac

import (
	"image"
	"math"
)

// grid is the image resampled on a lattice: cell (i, j) is the mean grey
// level (0-1) around origin + i*du + j*dv; NaN outside the image.
type grid struct {
	nt, ns int
	v      []float64 // v[i*ns+j]
}

// sampleGrid averages up to colMaxSamples x colMaxSamples nearest pixels
// over each cell of the nt x ns lattice at origin + i*du + j*dv (pixels
// of img, which spans [0,W] x [0,H]).
func sampleGrid(img image.Image, origin, du, dv Point, nt, ns int) grid {
	px := newPixelReader(img)
	cell := norm(du)
	k := min(colMaxSamples, max(1, int(math.Ceil(cell))))
	g := grid{nt: nt, ns: ns, v: make([]float64, nt*ns)}
	for i := range nt {
		for j := range ns {
			c := Point{origin.X + float64(i)*du.X + float64(j)*dv.X, origin.Y + float64(i)*du.Y + float64(j)*dv.Y}
			var s float64
			cnt := 0
			for a := range k {
				fa := (float64(a)+0.5)/float64(k) - 0.5
				for b := range k {
					fb := (float64(b)+0.5)/float64(k) - 0.5
					x := c.X + fa*du.X + fb*dv.X
					y := c.Y + fa*du.Y + fb*dv.Y
					if val, ok := px.at(x, y); ok {
						s += val
						cnt++
					}
				}
			}
			if cnt == k*k {
				g.v[i*ns+j] = s / float64(cnt)
			} else {
				g.v[i*ns+j] = math.NaN()
			}
		}
	}
	return g
}

// bandProfile writes into out (length nt) the band's profile: at column
// i, the mean over rows row + slope*(i - pivot) +/- half of the grid
// (linear between rows). Cells outside the image are filled with the
// mean of those inside; false when under colMinValid of the band is
// inside or it leaves the grid.
func (g grid) bandProfile(row, slope, pivot, half float64, out []float64) bool {
	valid := 0
	var sum float64
	lines := max(3, int(math.Ceil(2*half))+1)
	for i := range g.nt {
		c := row + slope*(float64(i)-pivot)
		var s float64
		ok := true
		for l := range lines {
			r := c - half + 2*half*float64(l)/float64(lines-1)
			j := int(math.Floor(r))
			f := r - float64(j)
			if j < 0 || j+1 >= g.ns {
				return false
			}
			a, b := g.v[i*g.ns+j], g.v[i*g.ns+j+1]
			val := a*(1-f) + b*f
			if math.IsNaN(val) {
				ok = false
				break
			}
			s += val
		}
		if ok {
			out[i] = s / float64(lines)
			valid++
			sum += out[i]
		} else {
			out[i] = math.NaN()
		}
	}
	if float64(valid) < colMinValid*float64(g.nt) {
		return false
	}
	fill := sum / float64(valid)
	for i, x := range out {
		if math.IsNaN(x) {
			out[i] = fill
		}
	}
	return true
}

// pixelReader reads grey levels (0-1; luma for colour) at the nearest
// pixel, with fast paths for the decoders' usual image types.
type pixelReader struct {
	img  image.Image
	b    image.Rectangle
	gray *image.Gray
	g16  *image.Gray16
	ycc  *image.YCbCr
	rgba *image.RGBA
	nrgb *image.NRGBA
}

func newPixelReader(img image.Image) pixelReader {
	r := pixelReader{img: img, b: img.Bounds()}
	switch m := img.(type) {
	case *image.Gray:
		r.gray = m
	case *image.Gray16:
		r.g16 = m
	case *image.YCbCr:
		r.ycc = m
	case *image.RGBA:
		r.rgba = m
	case *image.NRGBA:
		r.nrgb = m
	}
	return r
}

// at is the grey level of the pixel containing (x, y) (continuous
// coordinates from the bounds' corner) and whether it is inside.
func (r pixelReader) at(x, y float64) (float64, bool) {
	if !(x >= 0 && y >= 0) {
		return 0, false
	}
	i, j := int(x), int(y)
	if i >= r.b.Dx() || j >= r.b.Dy() {
		return 0, false
	}
	return r.pixel(i, j), true
}

// pixel is the grey level of pixel (i, j) counted from the bounds'
// corner, which must be inside.
func (r pixelReader) pixel(i, j int) float64 {
	px, py := r.b.Min.X+i, r.b.Min.Y+j
	switch {
	case r.gray != nil:
		return float64(r.gray.Pix[r.gray.PixOffset(px, py)]) / 255
	case r.g16 != nil:
		o := r.g16.PixOffset(px, py)
		return float64(uint16(r.g16.Pix[o])<<8|uint16(r.g16.Pix[o+1])) / 65535
	case r.ycc != nil:
		return float64(r.ycc.Y[r.ycc.YOffset(px, py)]) / 255
	case r.rgba != nil:
		o := r.rgba.PixOffset(px, py)
		p := r.rgba.Pix[o : o+3]
		return (0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])) / 255
	case r.nrgb != nil:
		o := r.nrgb.PixOffset(px, py)
		p := r.nrgb.Pix[o : o+4]
		a := float64(p[3]) / 255
		return a * (0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])) / 255
	}
	cr, cg, cb, _ := r.img.At(px, py).RGBA()
	return (0.299*float64(cr) + 0.587*float64(cg) + 0.114*float64(cb)) / 0xffff
}
