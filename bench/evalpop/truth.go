package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"gocv.io/x/gocv"

	"vetlens/engine/cardiac"
	"vetlens/engine/pop"
)

// rectifiedTruthVHS is the VHS of the frame's true landmarks carried into
// a rw x rh rectification of quad q (frame pixels, continuous coordinates
// as pop.Rectify): the VHS error the rectification itself causes, before
// any landmark model runs. False without landmarks in the truth.
func rectifiedTruthVHS(it item, q pop.Quad, rw, rh int) (float64, bool) {
	var pts map[string][2]float64
	if len(it.Landmarks) == 0 || json.Unmarshal(it.Landmarks, &pts) != nil {
		return 0, false
	}
	h, err := pop.HomographyFrom(q, pop.Rect(float64(rw), float64(rh)))
	if err != nil {
		return 0, false
	}
	var l cardiac.Landmarks
	for k, name := range cardiac.ClassNames {
		p, ok := pts[name]
		if !ok {
			return 0, false
		}
		r := h.Apply(pop.Point{X: p[0], Y: p[1]})
		l[k] = cardiac.Point{X: r.X, Y: r.Y}
	}
	v := cardiac.Measure(l).VHS
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// rectifyTruth rectifies frame file path from its true displayed-image
// corners at the displayed radiograph's true aspect (pop.SizeForAspect,
// as the product sizes it), as a JPEG at pop.JPEGQuality.
func rectifyTruth(path string, it item) ([]byte, error) {
	if len(it.Corners) != 4 || len(it.DisplayedSize) != 2 || it.DisplayedSize[1] <= 0 {
		return nil, fmt.Errorf("%s: --truth-corners needs corners and displayed_size in the truth", it.File)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := pop.DecodeFrame(raw) // as the product reads a frame (upright by EXIF)
	defer f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var q pop.Quad
	for i := range 4 {
		q[i] = pop.Point{X: it.Corners[i][0], Y: it.Corners[i][1]}
	}
	rw, rh, err := pop.SizeForAspect(q, it.DisplayedSize[0]/it.DisplayedSize[1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.File, err)
	}
	r, err := pop.Rectify(f, q, rw, rh)
	defer r.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.File, err)
	}
	b, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, r, []int{gocv.IMWriteJpegQuality, pop.JPEGQuality})
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", it.File, err)
	}
	defer b.Close()
	return append([]byte(nil), b.GetBytes()...), nil
}

// cornerErr is the mean distance of the four corners to the truth, as a
// share of the frame diagonal.
func cornerErr(q pop.Quad, it item) float64 { return quadErr(q, it.Corners, it) }

// quadErr is the mean distance of q's corners to truth, over the diagonal;
// NaN when the frame has no truth quad (frames without a screen).
func quadErr(q pop.Quad, truth [][2]float64, it item) float64 {
	if len(truth) < 4 {
		return math.NaN()
	}
	var s float64
	for i := range 4 {
		s += math.Hypot(q[i].X-truth[i][0], q[i].Y-truth[i][1])
	}
	return s / 4 / math.Hypot(float64(it.Width), float64(it.Height))
}

// sideDevs lists each side's angle to the nearer image axis (degrees).
func sideDevs(q pop.Quad) string {
	var p []string
	for i := range 4 {
		p = append(p, fmt.Sprintf("%.2f", pop.Quad{q[i], q[(i+1)%4], q[i], q[(i+1)%4]}.AxisDeviation()))
	}
	return strings.Join(p, "/")
}

func quadString(q pop.Quad) string {
	var p []string
	for _, c := range q {
		p = append(p, fmt.Sprintf("%.1f,%.1f", c.X, c.Y))
	}
	return strings.Join(p, ",")
}
