package pop

import (
	"fmt"
	"math"

	"gocv.io/x/gocv"

	"vetlens/internal/stats"
)

// gray is an 8-bit single-channel image viewing a gocv.Mat's memory
// (grayView), for the per-pixel work that is simpler in Go than through
// cgo calls.
type gray struct {
	w, h int
	pix  []uint8
}

// grayView is a CV_8UC1 Mat's pixels without a copy: it refers to m's
// memory, so it is valid only while m is open and unchanged. A Mat that is
// not continuous is copied.
func grayView(m gocv.Mat) (gray, error) {
	if m.Type() != gocv.MatTypeCV8UC1 {
		return gray{}, fmt.Errorf("gray image: mat type %v, want CV_8UC1", m.Type())
	}
	pix, err := matPixels(m)
	return gray{w: m.Cols(), h: m.Rows(), pix: pix}, err
}

// matPixels is m's bytes: its own memory where m is continuous, otherwise
// a copy of a continuous clone (a region of a larger Mat has gaps between
// its rows).
func matPixels(m gocv.Mat) ([]uint8, error) {
	if !m.IsContinuous() {
		c := m.Clone()
		defer c.Close()
		return c.ToBytes(), nil
	}
	pix, err := m.DataPtrUint8()
	if err != nil {
		return nil, fmt.Errorf("mat pixels: %w", err)
	}
	return pix, nil
}

func (g gray) at(x, y int) float64 {
	x = min(max(x, 0), g.w-1)
	y = min(max(y, 0), g.h-1)
	return float64(g.pix[y*g.w+x])
}

// sample is the bilinear value at continuous coordinates (pixel centres
// at i+0.5).
func (g gray) sample(x, y float64) float64 {
	x, y = x-0.5, y-0.5
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int(x0), int(y0)
	a := g.at(ix, iy)*(1-fx) + g.at(ix+1, iy)*fx
	b := g.at(ix, iy+1)*(1-fx) + g.at(ix+1, iy+1)*fx
	return a*(1-fy) + b*fy
}

// median is the one median rule (stats.Median).
func median(v []float64) float64 { return stats.Median(v) }

// field is an image the edge searches sample: grey (one channel) or
// colour (three). An edge's step is the largest step of any channel, so a
// bezel and a dark image of equal brightness but different tint still
// part.
type field interface {
	// nch is the number of channels, 1 or 3.
	nch() int
	// values writes the bilinear value of each channel at continuous
	// coordinates (x, y) into v.
	values(x, y float64, v *[3]float64)
}

func (g gray) nch() int { return 1 }

func (g gray) values(x, y float64, v *[3]float64) { v[0] = g.sample(x, y) }

// colour is an 8-bit three-channel image (BGR) viewing a gocv.Mat's memory
// (colourView).
type colour struct {
	w, h int
	pix  []uint8
}

// colourView is a CV_8UC3 Mat's pixels without a copy, valid only while m
// is open and unchanged (as grayView).
func colourView(m gocv.Mat) (colour, error) {
	if m.Type() != gocv.MatTypeCV8UC3 {
		return colour{}, fmt.Errorf("colour image: mat type %v, want CV_8UC3", m.Type())
	}
	pix, err := matPixels(m)
	return colour{w: m.Cols(), h: m.Rows(), pix: pix}, err
}

func (c colour) nch() int { return 3 }

func (c colour) values(x, y float64, v *[3]float64) {
	x, y = x-0.5, y-0.5
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix, iy := int(x0), int(y0)
	at := func(x, y int) int {
		x = min(max(x, 0), c.w-1)
		y = min(max(y, 0), c.h-1)
		return 3 * (y*c.w + x)
	}
	i00, i10, i01, i11 := at(ix, iy), at(ix+1, iy), at(ix, iy+1), at(ix+1, iy+1)
	for k := range 3 {
		a := float64(c.pix[i00+k])*(1-fx) + float64(c.pix[i10+k])*fx
		b := float64(c.pix[i01+k])*(1-fx) + float64(c.pix[i11+k])*fx
		v[k] = a*(1-fy) + b*fy
	}
}

// stepProfile appends to out the step across each offset o along the
// normal n from p: the largest per-channel absolute difference of f
// between p+(o-half)n and p+(o+half)n, for o from lo while o <= hi (o +=
// st, accumulated as a loop would; buf.offs holds the offsets). A
// sample at o+half is the sample at o'-half for o' = o+2*half: it is
// taken once when the two offsets are the same float, so each point
// along the normal is sampled once where the loop would sample it twice,
// with identical results.
func stepProfile(f field, px, py, nx, ny, lo, hi, st, half float64, out []float64, buf *stepBuf) []float64 {
	buf.offs = buf.offs[:0]
	for o := lo; o <= hi; o += st {
		buf.offs = append(buf.offs, o)
	}
	n := len(buf.offs)
	if cap(buf.minus) < n {
		buf.minus = make([][3]float64, n)
	}
	minus := buf.minus[:n]
	for k, o := range buf.offs {
		f.values(px+(o-half)*nx, py+(o-half)*ny, &minus[k])
	}
	shift := int(math.Round(2 * half / st))
	nch := f.nch()
	for k, o := range buf.offs {
		var plus [3]float64
		if j := k + shift; shift > 0 && j < n && buf.offs[j]-half == o+half {
			plus = minus[j]
		} else {
			f.values(px+(o+half)*nx, py+(o+half)*ny, &plus)
		}
		d := 0.0
		for c := range nch {
			d = math.Max(d, math.Abs(plus[c]-minus[k][c]))
		}
		out = append(out, d)
	}
	return out
}

// stepBuf holds stepProfile's scratch space between calls.
type stepBuf struct {
	offs  []float64
	minus [][3]float64
}
