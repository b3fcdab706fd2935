package pop

import (
	"image"
	"math"
	"slices"

	"vetlens/engine/imageproc"
)

// Screenshots. A screenshot of a viewer window (a PACS or a DICOM viewer,
// saved as PNG or JPEG and opened in VetLens) holds the radiograph as an
// axis-aligned rectangle inside the application's chrome: toolbars,
// panels, thumbnails, a dark or light background. Unlike a photographed
// monitor it has no perspective, bezel or room, and unlike a photograph
// its chrome is drawn in exactly flat colours, where a radiograph carries
// noise or structure nearly everywhere; where it does not (air clipped to
// black, an unexposed margin) its flat greys are its own.
// ScreenshotViewport finds the displayed radiograph as the largest
// connected region of texture, grown over the image's own flat greys; the
// caller measures it in place of the whole file (app/capture.PredictImage
// does so only for a file the validity model rejected as a whole).
// Parameters were set on the engine's test phantoms in a fixed viewer
// window and on validation screenshots (models/train/sim/screenshots.py;
// docs/cardiac.md, "Viewer screenshots").
const (
	// screenshotSide is the working resolution's longest side: larger
	// images are area-averaged down to it (imageproc.LetterboxGray).
	screenshotSide = 768
	// flatStep is the largest grey step (0..1) between neighbouring
	// working pixels that counts as flat: chrome is drawn in exact
	// colours (steps of 0 away from its edges and text); area averaging
	// keeps those exact while any radiograph keeps some noise.
	flatStep = 0.5 / 255
	// textureReach (working pixels) joins textured pixels this close
	// into one region, so smooth patches of a radiograph and the flat
	// 8 x 8 blocks of a strongly compressed JPEG do not split it.
	textureReach = 4
	// minViewportShare is the smallest share of the file the displayed
	// image may cover; minViewportFill the smallest share of its
	// bounding box the region must fill (a rectangle, not a scatter of
	// icons and text).
	minViewportShare = 0.15
	minViewportFill  = 0.85
	// minChromeMargin: the region must leave at least this share of the
	// file's width or height outside it, or there is no chrome to cut.
	minChromeMargin = 0.03
	// A line of chrome is uniform: at least chromeShare of it within
	// chromeTol of one grey (JPEG's ringing and a few icons allowed), in
	// a grey that is not one of the image's own flat greys, those that
	// cover at least imageFlatShare of the dense box in flat cells.
	chromeTol      = 2.0 / 255
	chromeShare    = 0.9
	imageFlatShare = 0.02
)

// greyBins is the number of chromeTol-wide grey bins in 0..1.
var greyBins = int(math.Ceil(1 / chromeTol))

// ScreenshotViewport finds the displayed image inside a screenshot of a
// viewer window: the largest connected textured region, when its dense
// part (denseBox) is a filled rectangle, grown outward over the image's
// own flat areas up to the chrome (growToChrome), covering at least
// minViewportShare of the file and leaving at least minChromeMargin of
// its width or height outside. ok is false when img does not look like
// that (textured to its edges, or no large textured rectangle). The
// rectangle is shrunk by a working pixel on each side so that no chrome
// is kept. A radiograph in a plain border or padding is found too.
func ScreenshotViewport(img image.Image) (image.Rectangle, bool) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w < imageproc.MinSide || h < imageproc.MinSide {
		return image.Rectangle{}, false
	}
	g, lb, err := imageproc.LetterboxGray(img, min(screenshotSide, max(w, h)))
	if err != nil {
		return image.Rectangle{}, false
	}
	s, nw, nh := lb.S, lb.NW, lb.NH
	at := func(x, y int) float32 { return g[(y+lb.OY)*s+x+lb.OX] }
	// textured: a step above flatStep to the right or below.
	tex := make([]bool, nw*nh)
	for y := range nh {
		for x := range nw {
			v := at(x, y)
			d := 0.0
			if x+1 < nw {
				d = math.Max(d, math.Abs(float64(at(x+1, y)-v)))
			}
			if y+1 < nh {
				d = math.Max(d, math.Abs(float64(at(x, y+1)-v)))
			}
			tex[y*nw+x] = d > flatStep
		}
	}
	near := dilate(tex, nw, nh, textureReach)
	label, best := largestRegion(near, nw, nh)
	if best == 0 {
		return image.Rectangle{}, false
	}
	r := denseBox(label, best, tex, nw, nh)
	if r.Empty() {
		return image.Rectangle{}, false
	}
	area, n := r.Dx()*r.Dy(), 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if near[y*nw+x] {
				n++
			}
		}
	}
	if float64(n) < minViewportFill*float64(area) {
		return image.Rectangle{}, false
	}
	r = growToChrome(at, nw, nh, r, flatGreys(at, tex, nw, r))
	if float64(r.Dx()*r.Dy()) < minViewportShare*float64(nw*nh) {
		return image.Rectangle{}, false
	}
	if float64(nw-r.Dx()) < minChromeMargin*float64(nw) && float64(nh-r.Dy()) < minChromeMargin*float64(nh) {
		return image.Rectangle{}, false
	}
	// Back to img's pixels, one working pixel inside on every side.
	x0, y0 := lb.ToOriginal(float64(r.Min.X+1+lb.OX), float64(r.Min.Y+1+lb.OY))
	x1, y1 := lb.ToOriginal(float64(r.Max.X-1+lb.OX), float64(r.Max.Y-1+lb.OY))
	out := image.Rect(int(math.Ceil(x0)), int(math.Ceil(y0)), int(math.Floor(x1)), int(math.Floor(y1))).Add(b.Min).Intersect(b)
	if out.Dx() < imageproc.MinSide || out.Dy() < imageproc.MinSide {
		return image.Rectangle{}, false
	}
	return out, true
}

// dilate marks every cell within reach (a square) of a marked cell.
func dilate(m []bool, w, h, reach int) []bool {
	rows := make([]bool, w*h)
	for y := range h {
		dilateLine(m, rows, y*w, 1, w, reach)
	}
	out := make([]bool, w*h)
	for x := range w {
		dilateLine(rows, out, x, w, h, reach)
	}
	return out
}

// dilateLine marks out at off+i*stride (i < n) wherever in is marked
// within reach along the line.
func dilateLine(in, out []bool, off, stride, n, reach int) {
	last := -1 << 30 // index of the last marked cell seen from the start
	for i := range n {
		if in[off+i*stride] {
			last = i
		}
		out[off+i*stride] = i-last <= reach
	}
	last = 1 << 30
	for i := n - 1; i >= 0; i-- {
		if in[off+i*stride] {
			last = i
		}
		if last-i <= reach {
			out[off+i*stride] = true
		}
	}
}

// largestRegion labels the 4-connected regions of m and returns the
// labels and the label of the region with the most cells (0: none).
func largestRegion(m []bool, w, h int) ([]int32, int32) {
	label := make([]int32, w*h)
	stack := make([]int, 0, 1024)
	next, best, bestN := int32(0), int32(0), 0
	for i, on := range m {
		if !on || label[i] != 0 {
			continue
		}
		next++
		label[i] = next
		stack = append(stack[:0], i)
		n := 0
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n++
			x := j % w
			for _, k := range [4]int{j - 1, j + 1, j - w, j + w} {
				switch {
				case k < 0 || k >= w*h, k == j-1 && x == 0, k == j+1 && x == w-1:
					continue
				}
				if m[k] && label[k] == 0 {
					label[k] = next
					stack = append(stack, k)
				}
			}
		}
		if n > bestN {
			best, bestN = next, n
		}
	}
	return label, best
}

// denseBox is the rectangle where region id's textured cells are dense:
// the longest run of columns whose count of them reaches half the
// region's typical (90th percentile) column count, then the same for
// rows within those columns, then columns again within those rows.
// Chrome that touches the image (a thumbnail strip, a toolbar's icons)
// joins the region through its edges and text but fills few cells of any
// column or row, so it falls outside.
func denseBox(label []int32, id int32, tex []bool, w, h int) image.Rectangle {
	r := image.Rect(0, 0, w, h)
	for pass := range 3 {
		horiz := pass%2 == 0 // counting columns (x) within r's rows
		n := w
		if !horiz {
			n = h
		}
		count := make([]int, n)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if i := y*w + x; label[i] == id && tex[i] {
					if horiz {
						count[x]++
					} else {
						count[y]++
					}
				}
			}
		}
		lo, hi := longestRun(count, 0.5*percentile(count, 0.9))
		if hi <= lo {
			return image.Rectangle{}
		}
		if horiz {
			r.Min.X, r.Max.X = lo, hi
		} else {
			r.Min.Y, r.Max.Y = lo, hi
		}
	}
	return r
}

// percentile is the p quantile of the non-zero counts (0 when none).
func percentile(c []int, p float64) float64 {
	var nz []int
	for _, v := range c {
		if v > 0 {
			nz = append(nz, v)
		}
	}
	if len(nz) == 0 {
		return 0
	}
	slices.Sort(nz)
	return float64(nz[min(len(nz)-1, int(p*float64(len(nz))))])
}

// longestRun is the longest [lo, hi) with every c[i] above zero and at
// least threshold.
func longestRun(c []int, threshold float64) (lo, hi int) {
	start := -1
	for i := 0; i <= len(c); i++ {
		if i < len(c) && c[i] > 0 && float64(c[i]) >= threshold {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start > hi-lo {
			lo, hi = start, i
		}
		start = -1
	}
	return lo, hi
}

// flatGreys marks, in bins of chromeTol, the greys that cover at least
// imageFlatShare of r with flat (untextured) cells: the image's own flat
// areas, such as air clipped to black or an unexposed margin.
func flatGreys(at func(x, y int) float32, tex []bool, w int, r image.Rectangle) []bool {
	bins := greyBins + 2
	count := make([]int, bins)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !tex[y*w+x] {
				count[greyBin(at(x, y))]++
			}
		}
	}
	flat := make([]bool, bins)
	for i, n := range count {
		flat[i] = float64(n) >= imageFlatShare*float64(r.Dx()*r.Dy())
	}
	return flat
}

func greyBin(v float32) int { return min(max(int(float64(v)/chromeTol+0.5), 0), greyBins+1) }

// growToChrome moves each side of r outward, a working pixel at a time,
// while the line just outside it belongs to the image: a line that is not
// uniform (at least chromeShare of it within chromeTol of one grey) or is
// uniform in one of the image's own flat greys (flat, from flatGreys).
// The dense box stops short of an image's flat areas (air clipped to
// black, an unexposed margin); growing takes them back, up to the step
// to the viewer's background or panel, and stops at the file's edge.
func growToChrome(at func(x, y int) float32, w, h int, r image.Rectangle, flat []bool) image.Rectangle {
	// ofImage reports whether the line at a (a row when horiz) over
	// [lo, hi) belongs to the image.
	var v []float32 // one line's greys, reused
	ofImage := func(horiz bool, a, lo, hi int) bool {
		v = v[:0]
		for i := lo; i < hi; i++ {
			if horiz {
				v = append(v, at(i, a))
			} else {
				v = append(v, at(a, i))
			}
		}
		c, share := modeGrey(v)
		return share < chromeShare || flat[greyBin(c)] || flat[max(greyBin(c)-1, 0)] || flat[min(greyBin(c)+1, len(flat)-1)]
	}
	// grow steps one side while the line beyond it belongs to the image.
	grow := func(beyond func() bool, step func()) bool {
		moved := false
		for beyond() {
			step()
			moved = true
		}
		return moved
	}
	for changed := true; changed; {
		top := grow(func() bool { return r.Min.Y > 0 && ofImage(true, r.Min.Y-1, r.Min.X, r.Max.X) }, func() { r.Min.Y-- })
		bottom := grow(func() bool { return r.Max.Y < h && ofImage(true, r.Max.Y, r.Min.X, r.Max.X) }, func() { r.Max.Y++ })
		left := grow(func() bool { return r.Min.X > 0 && ofImage(false, r.Min.X-1, r.Min.Y, r.Max.Y) }, func() { r.Min.X-- })
		right := grow(func() bool { return r.Max.X < w && ofImage(false, r.Max.X, r.Min.Y, r.Max.Y) }, func() { r.Max.X++ })
		changed = top || bottom || left || right
	}
	return r
}

// modeGrey is the grey most of v lie within chromeTol of (the median,
// which is that grey whenever more than half do) and the share that do.
// It sorts v in place.
func modeGrey(v []float32) (float32, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	c := v[len(v)/2]
	n := 0
	for _, x := range v {
		if math.Abs(float64(x-c)) <= chromeTol {
			n++
		}
	}
	return c, float64(n) / float64(len(v))
}
