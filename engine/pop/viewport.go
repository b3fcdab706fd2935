package pop

import (
	"context"
	"fmt"
	"math"

	"gocv.io/x/gocv"
)

// displayed places the displayed radiograph inside the screen quad
// (frame pixels): the viewport model on the screen rectified from the
// working copy, mapped back through the screen's homography. It also
// returns the radiograph's aspect (width over height): the screen's
// aspect times the viewport's width share over its height share (0 when
// unknown). Without a usable screen quad the screen itself is returned.
func (m *Models) displayed(ctx context.Context, frame, work gocv.Mat, screen Quad, W, H int) (Quad, float64, error) {
	xt, err := cropTensor(work, scaleQuadXY(screen, float64(work.Cols())/float64(W), float64(work.Rows())/float64(H)))
	if err != nil {
		return screen, 0, nil
	}
	rv, err := m.viewport.Run(ctx, xt)
	if err != nil {
		return screen, 0, fmt.Errorf("learned viewport: %w", err)
	}
	vp := quadOfPoints(points(rv[0].Data, 4, 1, 1))
	hm, err := HomographyFrom(Rect(1, 1), screen)
	if err != nil {
		return screen, 0, nil
	}
	vp = snapViewport(frame, screen, vp)
	return hm.ApplyQuad(vp), sharesAspect(screen, vp, W, H), nil
}

// sharesAspect is the aspect (width over height) of an area whose corners
// are vp in shares of the screen quad: the screen's aspect (vanishing
// points of the screen quad, larger and better conditioned than the
// area's own) times the area's width share over its height share; 0 when
// the area is under 5 % of the screen either way.
func sharesAspect(screen, vp Quad, W, H int) float64 {
	vw := (dist(vp[0], vp[1]) + dist(vp[3], vp[2])) / 2
	vh := (dist(vp[0], vp[3]) + dist(vp[1], vp[2])) / 2
	if vw <= 0.05 || vh <= 0.05 {
		return 0
	}
	sa, _ := Aspect(screen, W, H)
	return sa * vw / vh
}

// areaAspect is the aspect of area q (frame pixels) inside the screen
// quad: q mapped into the screen's shares (sharesAspect); 0 when the
// screen quad is degenerate.
func areaAspect(screen, q Quad, W, H int) float64 {
	inv, err := HomographyFrom(screen, Rect(1, 1))
	if err != nil {
		return 0
	}
	return sharesAspect(screen, inv.ApplyQuad(q), W, H)
}

// scaleQuadXY scales x and y separately.
func scaleQuadXY(q Quad, sx, sy float64) Quad {
	for i := range q {
		q[i].X *= sx
		q[i].Y *= sy
	}
	return q
}

// Viewport snapping: the viewport model's box (shares of the rectified
// screen) moves each side onto the strongest straight edge within
// snapReach of it, on the screen rectified from the full frame at
// snapWidth pixels, when that edge's median step reaches snapStep grey
// levels. A displayed radiograph is an axis-aligned box on the screen, so
// its sides are rows and columns there.
const (
	snapWidth = 640
	snapReach = 0.03
	snapStep  = 8.0
)

// snapViewport refines the viewport box vp (TL, TR, BR, BL as shares of
// the screen quad) on the edges of the screen rectified from frame; it
// returns vp unchanged when the screen cannot be rectified. Only the four
// bands it searches are rectified (rectifyRegion), not the whole screen.
func snapViewport(frame gocv.Mat, screen Quad, vp Quad) Quad {
	asp, _ := Aspect(screen, frame.Cols(), frame.Rows())
	rw := snapWidth
	rh := int(math.Round(float64(rw) / asp))
	if rh < 64 || rh > 4*rw {
		return vp
	}
	left := (vp[0].X + vp[3].X) / 2
	right := (vp[1].X + vp[2].X) / 2
	top := (vp[0].Y + vp[1].Y) / 2
	bottom := (vp[3].Y + vp[2].Y) / 2
	if right-left < 0.1 || bottom-top < 0.1 {
		return vp
	}
	tm, err := rectifyTransform(screen, rw, rh)
	if err != nil {
		return vp
	}
	defer tm.Close()
	steps := make([]float64, 0, rw)
	// best returns the position (pixels, on the boundary between two
	// rows or columns) of the strongest edge within reach of at, along
	// [from, to) of the other axis; ok false when none is strong enough.
	best := func(at, from, to float64, n, m int, rows bool) (float64, bool) {
		c := int(math.Round(at * float64(n)))
		reach := int(math.Ceil(snapReach * float64(n)))
		i0, i1 := max(1, c-reach), min(n-2, c+reach)
		k0, k1 := max(0, int(from*float64(m))), min(m, int(to*float64(m)))
		if i0 > i1 || k0 >= k1 {
			return 0, false
		}
		// The band read: rows (or columns) i0-1 to i1+1, along k0 to k1-1.
		x0, y0, x1, y1 := k0, i0-1, k1, i1+2
		if !rows {
			x0, y0, x1, y1 = i0-1, k0, i1+2, k1
		}
		band, err := rectifyRegion(frame, tm, x0, y0, x1, y1)
		defer band.Close()
		if err != nil {
			return 0, false
		}
		g := gocv.NewMat()
		defer g.Close()
		gocv.CvtColor(band, &g, gocv.ColorBGRToGray)
		r, err := grayView(g)
		if err != nil {
			return 0, false
		}
		bi, bv := 0, 0.0
		for i := i0; i <= i1; i++ {
			steps = steps[:0]
			for k := k0; k < k1; k++ {
				if rows {
					steps = append(steps, math.Abs(r.at(k-x0, i+1-y0)-r.at(k-x0, i-1-y0)))
				} else {
					steps = append(steps, math.Abs(r.at(i+1-x0, k-y0)-r.at(i-1-x0, k-y0)))
				}
			}
			if v := median(steps); v > bv {
				bi, bv = i, v
			}
		}
		if bv < snapStep {
			return 0, false
		}
		return (float64(bi) + 0.5) / float64(n), true
	}
	// Along the middle 60 % of each side (away from corners and panels).
	mx0, mx1 := left+0.2*(right-left), right-0.2*(right-left)
	my0, my1 := top+0.2*(bottom-top), bottom-0.2*(bottom-top)
	if v, ok := best(top, mx0, mx1, rh, rw, true); ok {
		top = v
	}
	if v, ok := best(bottom, mx0, mx1, rh, rw, true); ok {
		bottom = v
	}
	if v, ok := best(left, my0, my1, rw, rh, false); ok {
		left = v
	}
	if v, ok := best(right, my0, my1, rw, rh, false); ok {
		right = v
	}
	return Quad{{left, top}, {right, top}, {right, bottom}, {left, bottom}}
}
