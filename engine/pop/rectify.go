package pop

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"

	"gocv.io/x/gocv"
)

// Rectified image size limits (pixels of the long side).
const (
	// MaxRectifiedSide caps the rectified image's long side.
	MaxRectifiedSide = 2048
	// MinRectifiedSide is the shortest side a rectification may have; a
	// smaller one cannot show a measurable thorax.
	MinRectifiedSide = 64
)

// ErrBadQuad means the corners cannot be rectified: not convex, degenerate
// or too small.
var ErrBadQuad = errors.New("corners do not form a usable quadrilateral")

// RectifiedSize is the output size for a quad in a w x h frame: the height
// is the longer of the quad's left and right sides, the width follows the
// estimated true aspect (Aspect), and the long side is capped at
// MaxRectifiedSide.
func RectifiedSize(q Quad, w, h int) (int, int, error) {
	if !q.Convex() || q.Area() < 1 {
		return 0, 0, fmt.Errorf("%w: %v", ErrBadQuad, q)
	}
	asp, _ := Aspect(q, w, h)
	return SizeForAspect(q, asp)
}

// SizeForAspect is the rectified size of q for a known aspect (width over
// height): the height is the longer of q's left and right sides, the long
// side capped at MaxRectifiedSide; ErrBadQuad when a side comes out under
// MinRectifiedSide.
func SizeForAspect(q Quad, asp float64) (int, int, error) {
	hh := math.Max(dist(q[0], q[3]), dist(q[1], q[2]))
	ww := hh * asp
	if m := math.Max(ww, hh); m > MaxRectifiedSide {
		ww, hh = ww*MaxRectifiedSide/m, hh*MaxRectifiedSide/m
	}
	rw, rh := int(math.Round(ww)), int(math.Round(hh))
	if rw < MinRectifiedSide || rh < MinRectifiedSide {
		return 0, 0, fmt.Errorf("%w: rectified size %dx%d under %d pixels", ErrBadQuad, rw, rh, MinRectifiedSide)
	}
	return rw, rh, nil
}

// Rectify warps the quad q of frame onto an upright rw x rh image
// (continuous coordinates: q's corners land on the output's corners). The
// caller closes the returned Mat.
func Rectify(frame gocv.Mat, q Quad, rw, rh int) (gocv.Mat, error) {
	m, err := rectifyTransform(q, rw, rh)
	if err != nil {
		return gocv.NewMat(), err
	}
	defer m.Close()
	out := gocv.NewMat()
	gocv.WarpPerspectiveWithParams(frame, &out, m, image.Point{rw, rh}, gocv.InterpolationLinear, gocv.BorderReplicate, color.RGBA{})
	return out, nil
}

// rectifyTransform is the perspective transform (3 x 3, CV_64F, in
// OpenCV's pixel indices) that takes the quad q onto an upright rw x rh
// image, as Rectify warps with it. The caller closes it.
func rectifyTransform(q Quad, rw, rh int) (gocv.Mat, error) {
	dst := Rect(float64(rw), float64(rh))
	// OpenCV works in pixel indices: continuous minus 0.5.
	src := make([]gocv.Point2f, 4)
	dp := make([]gocv.Point2f, 4)
	for i := range 4 {
		src[i] = gocv.Point2f{X: float32(q[i].X - 0.5), Y: float32(q[i].Y - 0.5)}
		dp[i] = gocv.Point2f{X: float32(dst[i].X - 0.5), Y: float32(dst[i].Y - 0.5)}
	}
	sv := gocv.NewPoint2fVectorFromPoints(src)
	defer sv.Close()
	dv := gocv.NewPoint2fVectorFromPoints(dp)
	defer dv.Close()
	m := gocv.GetPerspectiveTransform2f(sv, dv)
	if m.Empty() {
		m.Close()
		return gocv.NewMat(), fmt.Errorf("rectify: %w", ErrBadQuad)
	}
	return m, nil
}

// rectifyRegion is the region [x0, x1) x [y0, y1) of what Rectify(frame,
// q, rw, rh) returns, warped alone (the transform m of rectifyTransform
// moved by the region's origin), so a caller that reads a few bands of a
// rectified image does not warp all of it. The caller closes the result.
func rectifyRegion(frame, m gocv.Mat, x0, y0, x1, y1 int) (gocv.Mat, error) {
	if x1 <= x0 || y1 <= y0 {
		return gocv.NewMat(), fmt.Errorf("rectify region: empty %dx%d", x1-x0, y1-y0)
	}
	mr := gocv.NewMatWithSize(3, 3, gocv.MatTypeCV64F)
	defer mr.Close()
	for c := range 3 {
		w := m.GetDoubleAt(2, c)
		mr.SetDoubleAt(0, c, m.GetDoubleAt(0, c)-float64(x0)*w)
		mr.SetDoubleAt(1, c, m.GetDoubleAt(1, c)-float64(y0)*w)
		mr.SetDoubleAt(2, c, w)
	}
	out := gocv.NewMat()
	gocv.WarpPerspectiveWithParams(frame, &out, mr, image.Point{x1 - x0, y1 - y0}, gocv.InterpolationLinear, gocv.BorderReplicate, color.RGBA{})
	return out, nil
}

// RectifyJPEG warps the quad of a frame to an upright rectangle of the
// screen's true aspect (RectifiedSize, Rectify) and encodes it as JPEG at
// JPEGQuality, returning the JPEG and its size.
func RectifyJPEG(frame gocv.Mat, q Quad) ([]byte, int, int, error) {
	rw, rh, err := RectifiedSize(q, frame.Cols(), frame.Rows())
	if err != nil {
		return nil, 0, 0, err
	}
	out, err := Rectify(frame, q, rw, rh)
	defer out.Close()
	if err != nil {
		return nil, 0, 0, err
	}
	jpg, err := EncodeJPEG(out, JPEGQuality)
	if err != nil {
		return nil, 0, 0, err
	}
	return jpg, rw, rh, nil
}

// EncodeJPEG encodes a Mat as JPEG at the given quality.
func EncodeJPEG(m gocv.Mat, quality int) ([]byte, error) {
	buf, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, m, []int{gocv.IMWriteJpegQuality, quality})
	if err != nil {
		return nil, fmt.Errorf("encode JPEG: %w", err)
	}
	defer buf.Close()
	return append([]byte(nil), buf.GetBytes()...), nil
}

// viewerSearch bounds (shares of the rectified screen) where a viewer's
// panels may end: the toolbar at the top, a status bar at the bottom,
// thumbnail and information panels on the sides.
var viewerSearch = struct{ top, bottom, left, right [2]float64 }{
	top: [2]float64{0.03, 0.16}, bottom: [2]float64{0.86, 0.995}, left: [2]float64{0.03, 0.25}, right: [2]float64{0.72, 0.97},
}

// Viewer panel search parameters, set on development composites (seeds
// 31,000,000+; docs/pop.md).
const (
	// panelOuterShare: a boundary candidate nearer the screen's edge than
	// the strongest one wins when it reaches this share of its step.
	panelOuterShare = 0.3
	// panelTol is the largest difference (grey levels) between a panel's
	// median and the toolbar's: thumbnails and text make a panel's median
	// differ from the toolbar's by up to about 60 levels; a radiograph's
	// light margin differs by more.
	panelTol = 75.0
	// panelStand is how many times the band's median step a side panel's
	// or status bar's boundary must reach; toolbarStand the same for the
	// toolbar, whose band also has to show toolbar texture.
	panelStand   = 3.0
	toolbarStand = 2.0
)

// viewport looks for a viewer window's image viewport inside the screen
// quad q of the grey frame g: it rectifies the screen to 640 pixels wide
// and searches, in each panel band, for a row (column) whose median
// intensity step across the band's middle is strong and stands out from
// the band. A viewer always has a toolbar; without one no viewport is
// reported. The viewport is mapped back into frame pixels.
func viewport(g gocv.Mat, q Quad) (Quad, bool) {
	asp, _ := Aspect(q, g.Cols(), g.Rows())
	rw := 640
	rh := int(math.Round(float64(rw) / asp))
	if rh < 64 || rh > 4*rw {
		return q, false
	}
	m, err := Rectify(g, q, rw, rh)
	if err != nil {
		m.Close()
		return q, false
	}
	defer m.Close()
	r, err := grayView(m)
	if err != nil {
		return q, false
	}
	// Row profile over the middle columns; column profile over the rows
	// strictly inside the found top and bottom.
	// Steps are integers 0..255: medians by counting.
	var hist [256]int
	histMedian := func(n int) float64 {
		c := 0
		for v := range hist {
			c += hist[v]
			if 2*c > n {
				clear(hist[:])
				return float64(v)
			}
		}
		clear(hist[:])
		return 0
	}
	rowStep := func(y, x0, x1 int) float64 {
		for x := x0; x < x1; x++ {
			hist[int(math.Abs(r.at(x, y+1)-r.at(x, y-1)))]++
		}
		return histMedian(x1 - x0)
	}
	colStep := func(x, y0, y1 int) float64 {
		for y := y0; y < y1; y++ {
			hist[int(math.Abs(r.at(x+1, y)-r.at(x-1, y)))]++
		}
		return histMedian(y1 - y0)
	}
	// find returns the boundary in [lo, hi] x n: among the local maxima
	// of f that are strong (>= 6), stand out from the band (>= stand x
	// its median) and reach panelOuterShare of the strongest, the one
	// nearest the screen's edge (toward lo for a band in the first half,
	// toward hi otherwise) that accept takes (nil: any). A radiograph
	// often has its own straight edges just inside the viewport (a light
	// or dark margin, collimation), stronger than the panel's boundary;
	// they lie further from the screen's edge.
	find := func(lo, hi float64, n int, f func(int) float64, stand float64, accept func(int) bool) (int, bool) {
		a, b := int(lo*float64(n)), int(hi*float64(n))
		vs := make([]float64, b-a+1)
		best, bi := 0.0, -1
		for i := a; i <= b; i++ {
			v := f(i)
			vs[i-a] = v
			if v > best {
				best, bi = v, i
			}
		}
		thr := math.Max(6, stand*median(vs))
		if best < thr {
			return bi, false
		}
		thr = math.Max(thr, panelOuterShare*best)
		idx := func(k int) int { return k }
		if lo > 0.5 {
			idx = func(k int) int { return len(vs) - 1 - k }
		}
		for k := range vs {
			i := idx(k)
			if vs[i] >= thr && (i == 0 || vs[i] >= vs[i-1]) && (i == len(vs)-1 || vs[i] >= vs[i+1]) {
				if accept == nil || accept(a+i) {
					return a + i, true
				}
			}
		}
		if accept != nil {
			return bi, false
		}
		return bi, true
	}
	// The toolbar's boundary: the outermost candidate row with toolbar
	// texture above it (an icon's own top edge, nearer the screen's edge,
	// has none). The radiograph below a toolbar has soft gradients that
	// raise the band's median step, so the boundary need only stand out
	// toolbarStand times from it; the texture test keeps a radiograph's
	// margin from passing for a toolbar.
	top, ok := find(viewerSearch.top[0], viewerSearch.top[1], rh, func(y int) float64 { return rowStep(y, rw/5, 4*rw/5) },
		toolbarStand, func(y int) bool { return toolbarLike(r, y) })
	if !ok {
		return q, false
	}
	// A side panel or status bar is UI on the viewer's background, not far
	// from the toolbar's grey; a radiograph's light margin taken for a
	// panel is not.
	tbMed := regionMedian(r, 0, max(1, r.h/100), r.w, top-1)
	panel := func(x0, y0, x1, y1 int) bool {
		return math.Abs(regionMedian(r, x0, y0, x1, y1)-tbMed) <= panelTol
	}
	bottom, ok := find(viewerSearch.bottom[0], viewerSearch.bottom[1], rh, func(y int) float64 { return rowStep(y, rw/5, 4*rw/5) }, panelStand, nil)
	if !ok || !panel(rw/5, bottom+2, 4*rw/5, rh) {
		bottom = rh
	}
	y0, y1 := top+(bottom-top)/5, bottom-(bottom-top)/5
	left, ok := find(viewerSearch.left[0], viewerSearch.left[1], rw, func(x int) float64 { return colStep(x, y0, y1) }, panelStand, nil)
	if !ok || !panel(0, y0, left-1, y1) {
		left = 0
	}
	right, ok := find(viewerSearch.right[0], viewerSearch.right[1], rw, func(x int) float64 { return colStep(x, y0, y1) }, panelStand, nil)
	if !ok || !panel(right+2, y0, rw, y1) {
		right = rw
	}
	// The step between rows y-1 and y+1 puts the boundary at y+0.5.
	edge := func(i, n int) float64 {
		if i == 0 || i == n {
			return float64(i)
		}
		return float64(i) + 0.5
	}
	hm, err := HomographyFrom(Rect(float64(rw), float64(rh)), q)
	if err != nil {
		return q, false
	}
	vp := Quad{{edge(left, rw), edge(top, rh)}, {edge(right, rw), edge(top, rh)}, {edge(right, rw), edge(bottom, rh)}, {edge(left, rw), edge(bottom, rh)}}
	return hm.ApplyQuad(vp), true
}

// Toolbar texture: the band above a toolbar's boundary is cut into
// toolbarBins columns, and a column is textured when at least
// toolbarBinShare of its pixels have a horizontal step of 12 grey levels
// or more. A toolbar's icons (and menu text) run along most of the
// window's width; a radiograph's burned-in text and side marker in a
// light or dark top margin cover a few columns only.
const (
	toolbarBins     = 16
	toolbarBinShare = 0.01
	toolbarMinBins  = 10
)

// toolbarLike reports whether the band above row y (from 1 % of the height)
// has the texture of a toolbar (icons along most of its width), unlike a
// flat collimation border of a radiograph shown full screen or a margin
// with a line of burned-in text.
func toolbarLike(r gray, y int) bool {
	y0 := max(1, r.h/100)
	if y-2 <= y0 {
		return false
	}
	textured := 0
	for b := range toolbarBins {
		x0, x1 := max(1, b*r.w/toolbarBins), min(r.w-1, (b+1)*r.w/toolbarBins)
		var n, strong int
		for yy := y0; yy < y-2; yy++ {
			for x := x0; x < x1; x++ {
				n++
				if math.Abs(r.at(x+1, yy)-r.at(x-1, yy)) >= 12 {
					strong++
				}
			}
		}
		if n > 0 && float64(strong)/float64(n) >= toolbarBinShare {
			textured++
		}
	}
	return textured >= toolbarMinBins
}

// regionMedian is the median grey level of [x0,x1) x [y0,y1); 0 when empty.
func regionMedian(r gray, x0, y0, x1, y1 int) float64 {
	var hist [256]int
	n := 0
	for y := max(0, y0); y < min(r.h, y1); y++ {
		for x := max(0, x0); x < min(r.w, x1); x++ {
			hist[r.pix[y*r.w+x]]++
			n++
		}
	}
	c := 0
	for v, k := range hist {
		c += k
		if 2*c > n {
			return float64(v)
		}
	}
	return 0
}
