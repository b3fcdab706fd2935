package pop

import (
	"fmt"
	"math"
	"sort"

	"gocv.io/x/gocv"
)

// gray is an 8-bit single-channel image copied out of a gocv.Mat, for the
// per-pixel work that is simpler in Go than through cgo calls.
type gray struct {
	w, h int
	pix  []uint8
}

// grayOf copies a CV_8UC1 Mat.
func grayOf(m gocv.Mat) (gray, error) {
	if m.Type() != gocv.MatTypeCV8UC1 {
		return gray{}, fmt.Errorf("gray image: mat type %v, want CV_8UC1", m.Type())
	}
	return gray{w: m.Cols(), h: m.Rows(), pix: m.ToBytes()}, nil
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

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
