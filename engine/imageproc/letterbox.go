package imageproc

import (
	"fmt"
	"image"
	"image/color"
	"math"
)

// Letterbox is the placement of a W x H image inside an S x S model input,
// as docs/model-contract.md defines it.
type Letterbox struct {
	S, W, H int // model input side and original image size
	NW, NH  int // resized image size inside the square
	OX, OY  int // top-left offset of the resized image
}

// NewLetterbox computes the placement: s = S/max(W,H), nw = max(1, round(W*s)),
// nh = max(1, round(H*s)), ox = (S-nw) div 2, oy = (S-nh) div 2. round is
// half-to-even, as Python's round() in the trainer.
func NewLetterbox(w, h, s int) Letterbox {
	m := max(w, h)
	scale := float64(s) / float64(m)
	nw := max(1, int(math.RoundToEven(float64(w)*scale)))
	nh := max(1, int(math.RoundToEven(float64(h)*scale)))
	return Letterbox{S: s, W: w, H: h, NW: nw, NH: nh, OX: (s - nw) / 2, OY: (s - nh) / 2}
}

// ToOriginal maps letterbox coordinates (0..S, continuous) to pixel
// coordinates of the original image (0..W, 0..H, continuous).
func (l Letterbox) ToOriginal(u, v float64) (x, y float64) {
	return (u - float64(l.OX)) * float64(l.W) / float64(l.NW), (v - float64(l.OY)) * float64(l.H) / float64(l.NH)
}

// FromOriginal is the inverse of ToOriginal.
func (l Letterbox) FromOriginal(x, y float64) (u, v float64) {
	return x*float64(l.NW)/float64(l.W) + float64(l.OX), y*float64(l.NH)/float64(l.H) + float64(l.OY)
}

// coeffs holds separable resampling weights: output sample i reads inputs
// start[i] .. start[i]+n[i]-1 with weights w[i*k : i*k+n[i]].
type coeffs struct {
	start, n []int
	w        []float32
	k        int
}

// boxCoeffs reproduces Pillow's precompute_coeffs for the BOX filter
// (support 0.5): an input pixel contributes with weight 1 to the output
// pixel whose footprint (of width in/out) contains the input pixel's centre,
// the half-open interval (c-0.5, c+0.5] in scaled units; weights are then
// normalised. For integer reduction factors this is exact area averaging;
// for upscaling it is nearest-neighbour.
func boxCoeffs(in, out int) coeffs {
	scale := float64(in) / float64(out)
	fs := max(scale, 1.0)
	support := 0.5 * fs
	ss := 1.0 / fs
	k := int(math.Ceil(support))*2 + 1
	c := coeffs{start: make([]int, out), n: make([]int, out), w: make([]float32, out*k), k: k}
	for i := 0; i < out; i++ {
		center := (float64(i) + 0.5) * scale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), in) - xmin
		ww := 0.0
		tmp := make([]float64, xmax)
		for x := 0; x < xmax; x++ {
			// Same expression and rounding as Pillow: at exact ties
			// (a pixel centre on a footprint edge) the result decides.
			t := (float64(x+xmin) - center + 0.5) * ss
			if t > -0.5 && t <= 0.5 {
				tmp[x] = 1
				ww++
			}
		}
		c.start[i] = xmin
		c.n[i] = xmax
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				c.w[i*k+x] = float32(tmp[x] / ww)
			}
		}
	}
	return c
}

// rowReader fills one float row per channel (values 0..255) for source row y.
type rowReader func(y int, rows [][]float32)

// LetterboxGray returns the [1,S,S] grayscale letterbox of img in [0,1]
// (ITU-R 601 luma, Pillow convert("L")), resampled like Pillow's BOX filter.
// *image.YCbCr uses its Y plane and *image.Gray its pixels directly.
func LetterboxGray(img image.Image, s int) ([]float32, Letterbox, error) {
	return letterbox(img, s, 1)
}

// LetterboxRGB returns the [3,S,S] RGB letterbox of img in [0,1], channel
// planes in R, G, B order. Alpha is ignored (colour channels are taken
// unpremultiplied, as Pillow's convert("RGB") does).
func LetterboxRGB(img image.Image, s int) ([]float32, Letterbox, error) {
	return letterbox(img, s, 3)
}

func letterbox(img image.Image, s, ch int) ([]float32, Letterbox, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 || s <= 0 {
		return nil, Letterbox{}, fmt.Errorf("letterbox %dx%d image to %d: empty size", w, h, s)
	}
	if ch == 3 && isGray(img) {
		// R = G = B: resample once and copy, 3x less work.
		g, lb, err := letterbox(img, s, 1)
		if err != nil {
			return nil, lb, err
		}
		out := make([]float32, 3*s*s)
		for c := 0; c < 3; c++ {
			copy(out[c*s*s:], g)
		}
		return out, lb, nil
	}
	lb := NewLetterbox(w, h, s)
	var read rowReader
	if ch == 1 {
		read = grayRows(img)
	} else {
		read = rgbRows(img)
	}
	hc := boxCoeffs(w, lb.NW)
	vc := boxCoeffs(h, lb.NH)

	// Horizontal pass over the source rows the vertical pass reads.
	y0 := vc.start[0]
	y1 := vc.start[lb.NH-1] + vc.n[lb.NH-1]
	rows := make([][]float32, ch)
	tmp := make([][]float32, ch)
	for c := range rows {
		rows[c] = make([]float32, w)
		tmp[c] = make([]float32, (y1-y0)*lb.NW)
	}
	for y := y0; y < y1; y++ {
		read(y, rows)
		for c := 0; c < ch; c++ {
			src := rows[c]
			dst := tmp[c][(y-y0)*lb.NW : (y-y0+1)*lb.NW]
			for i := range dst {
				ws := hc.w[i*hc.k : i*hc.k+hc.n[i]]
				xs := src[hc.start[i] : hc.start[i]+hc.n[i]]
				var acc float32
				for t, wt := range ws {
					acc += wt * xs[t]
				}
				dst[i] = acc
			}
		}
	}

	// Vertical pass into the zero canvas.
	out := make([]float32, ch*s*s)
	const inv = 1.0 / 255.0
	for c := 0; c < ch; c++ {
		plane := out[c*s*s : (c+1)*s*s]
		for j := 0; j < lb.NH; j++ {
			dst := plane[(lb.OY+j)*s+lb.OX : (lb.OY+j)*s+lb.OX+lb.NW]
			ws := vc.w[j*vc.k : j*vc.k+vc.n[j]]
			for t, wt := range ws {
				if wt == 0 {
					continue
				}
				src := tmp[c][(vc.start[j]+t-y0)*lb.NW : (vc.start[j]+t-y0+1)*lb.NW]
				for i, v := range src {
					dst[i] += wt * v
				}
			}
			for i := range dst {
				dst[i] *= inv
			}
		}
	}
	return out, lb, nil
}

// luma is Pillow's convert("L"): ITU-R 601 with 16-bit fixed point rounding.
func luma(r, g, b uint32) float32 {
	return float32((19595*r + 38470*g + 7471*b + 0x8000) >> 16)
}

// isGray reports whether img's pixels are gray by type (its RGB letterbox
// is then its gray letterbox in all three channels).
func isGray(img image.Image) bool {
	switch img.(type) {
	case *image.Gray, *image.Gray16:
		return true
	}
	return false
}

func grayRows(img image.Image) rowReader {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.Gray16:
		// 8-bit value = high byte, as color.NRGBAModel reduces it.
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			px := m.Pix[off : off+2*b.Dx()]
			for x := range rows[0] {
				rows[0][x] = float32(px[2*x])
			}
		}
	case *image.Gray:
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			for x, p := range m.Pix[off : off+b.Dx()] {
				rows[0][x] = float32(p)
			}
		}
	case *image.YCbCr:
		return func(y int, rows [][]float32) {
			off := m.YOffset(b.Min.X, b.Min.Y+y)
			for x, p := range m.Y[off : off+b.Dx()] {
				rows[0][x] = float32(p)
			}
		}
	case *image.NRGBA:
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			px := m.Pix[off : off+4*b.Dx()]
			for x := range rows[0] {
				rows[0][x] = luma(uint32(px[4*x]), uint32(px[4*x+1]), uint32(px[4*x+2]))
			}
		}
	case *image.RGBA:
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			px := m.Pix[off : off+4*b.Dx()]
			for x := range rows[0] {
				rows[0][x] = luma(uint32(px[4*x]), uint32(px[4*x+1]), uint32(px[4*x+2]))
			}
		}
	}
	return func(y int, rows [][]float32) {
		for x := range rows[0] {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			rows[0][x] = luma(uint32(c.R), uint32(c.G), uint32(c.B))
		}
	}
}

func rgbRows(img image.Image) rowReader {
	b := img.Bounds()
	switch m := img.(type) { // gray types never get here (isGray)
	case *image.YCbCr:
		hs, vs := chromaFactors(m.SubsampleRatio)
		return func(y int, rows [][]float32) {
			yy := b.Min.Y + y
			yrow := m.Y[m.YOffset(b.Min.X, yy):]
			crow := (yy/vs - m.Rect.Min.Y/vs) * m.CStride
			cx0 := m.Rect.Min.X / hs
			for x := range rows[0] {
				ci := crow + (b.Min.X+x)/hs - cx0
				r, g, bl := color.YCbCrToRGB(yrow[x], m.Cb[ci], m.Cr[ci])
				rows[0][x], rows[1][x], rows[2][x] = float32(r), float32(g), float32(bl)
			}
		}
	case *image.NRGBA:
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			px := m.Pix[off : off+4*b.Dx()]
			for x := range rows[0] {
				rows[0][x], rows[1][x], rows[2][x] = float32(px[4*x]), float32(px[4*x+1]), float32(px[4*x+2])
			}
		}
	case *image.RGBA:
		return func(y int, rows [][]float32) {
			off := m.PixOffset(b.Min.X, b.Min.Y+y)
			px := m.Pix[off : off+4*b.Dx()]
			for x := range rows[0] {
				rows[0][x], rows[1][x], rows[2][x] = float32(px[4*x]), float32(px[4*x+1]), float32(px[4*x+2])
			}
		}
	}
	return func(y int, rows [][]float32) {
		for x := range rows[0] {
			c := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			rows[0][x], rows[1][x], rows[2][x] = float32(c.R), float32(c.G), float32(c.B)
		}
	}
}

// chromaFactors returns the horizontal and vertical chroma subsampling
// factors, matching image.YCbCr.COffset.
func chromaFactors(r image.YCbCrSubsampleRatio) (h, v int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}
