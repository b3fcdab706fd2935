package pop

import (
	"context"
	"fmt"
	"math"

	"gocv.io/x/gocv"
)

// DetectCorners finds the screen and the displayed radiograph in a BGR
// frame with the learned models (see detect).
func (m *Models) DetectCorners(ctx context.Context, frame gocv.Mat) (Corners, Learned, error) {
	if frame.Channels() != 3 {
		return Corners{Width: frame.Cols(), Height: frame.Rows()}, Learned{}, fmt.Errorf("learned corners: %d channels, want BGR", frame.Channels())
	}
	work := workCopy(frame)
	defer work.Close()
	c, lr, _, err := m.detect(ctx, frame, work)
	return c, lr, err
}

// classicalRun is the classical detector working on a frame in its own
// goroutine (startClassical), beside the models. prepared carries its
// scene once prepared (nil if that failed), done its result; detect
// always receives done, so the frame must stay open until detect returns.
type classicalRun struct {
	prepared chan *scene
	done     chan classicalResult
}

// classicalResult is the classical detector's finding and its prepared
// scene (for the guided search; detect closes it).
type classicalResult struct {
	c   Corners
	sc  *scene
	err error
}

// startClassical starts the classical detector on frame: first the scene
// (the grey frame, its reduction and edge fields), then the search.
func startClassical(frame gocv.Mat) *classicalRun {
	r := &classicalRun{prepared: make(chan *scene, 1), done: make(chan classicalResult, 1)}
	go func() {
		sc, err := newScene(frame)
		res := classicalResult{c: Corners{Width: frame.Cols(), Height: frame.Rows()}, sc: sc, err: err}
		if err != nil {
			r.prepared <- nil
		} else {
			r.prepared <- sc
			res.c = sc.detect(nil, 0)
		}
		r.done <- res
	}()
	return r
}

// detect runs the two corner models on the working copy (their mean is
// the quad, their agreement the confidence), the presence model, a
// classical sub-pixel edge fit of the screen quad at full resolution, and
// the viewport model on the rectified screen for the displayed image.
// Corners.Confidence is p_screen times the agreement factor. It also
// returns the displayed image's aspect (width over height) from the
// screen's aspect and the viewport's shares (0 when unknown).
func (m *Models) detect(ctx context.Context, frame, work gocv.Mat) (Corners, Learned, float64, error) {
	// The classical detector runs beside the models (its own goroutine;
	// always joined before returning, so the frame outlives it). The
	// learned quad's edge fit samples its scene's blurred grey frame, and
	// its scene comes back for the guided search.
	run := startClassical(frame)
	edges := func() (gray, bool) {
		if sc := <-run.prepared; sc != nil {
			return sc.fg, true
		}
		return gray{}, false
	}
	c, lr, aspect, err := m.learned(ctx, frame, work, edges)
	cl := <-run.done
	defer cl.sc.close()
	if err != nil {
		return c, lr, aspect, err
	}
	if cl.err != nil {
		return c, lr, aspect, fmt.Errorf("classical corners: %w", cl.err)
	}
	lr.Classical = cl.c.Confidence
	// The classical quad is sub-pixel exact when it is the same screen.
	// It is taken when it lies within classicalAgreement of the learned
	// screen quad, or when the two corner models disagree (the learned
	// quad is then no evidence against it).
	diag := math.Hypot(float64(c.Width), float64(c.Height))
	d := meanQuadDist(cl.c.Screen, c.Screen) / diag
	// take keeps a classical screen and places the displayed image in it
	// with the viewport model.
	take := func(k Corners, src string) (Corners, Learned, float64, error) {
		lr.Source = src
		k.Confidence = math.Max(k.Confidence, c.Confidence)
		img, asp, err := m.displayed(ctx, frame, work, k.Screen, k.Width, k.Height)
		if err != nil {
			return k, lr, 0, err
		}
		diag := math.Hypot(float64(k.Width), float64(k.Height))
		if meanQuadDist(k.Quad, img) <= viewportAgreement*diag {
			// The classical viewport (or full screen) is the same
			// area, fitted on its edges: keep it, with its aspect from
			// the screen's (as for the viewport model's area).
			return k, lr, areaAspect(k.Screen, k.Quad, k.Width, k.Height), nil
		}
		k.Quad = img
		k.Viewer = meanQuadDist(k.Screen, img) > 0.002*math.Hypot(float64(k.Width), float64(k.Height))
		if cutOff(img, k.Width, k.Height) {
			// The viewport model placed the displayed image partly
			// outside the frame.
			lr.CutOff = true
		}
		k.Found = k.Found && img.Convex() && img.minAngle() >= learnedMinAngle
		return k, lr, asp, nil
	}
	if cl.c.Found && d <= classicalAgreement {
		return take(cl.c, "classical")
	}
	// They disagree, or the classical detector found nothing: look again
	// for a classical quad near the learned one (the classical detector's
	// best candidate may be a desk, a stand or a second monitor; a dark
	// bezel in a dark room or a stand joined to the screen's outline
	// leaves no candidate at all, and the learned quad seeds the edge fit).
	if lr.Agreement <= guidedAgreement {
		prior := c.Screen
		if g := cl.sc.detect(&prior, priorTolerance); g.Found {
			// Kept when the displayed image placed in it lies within
			// priorTolerance of the corner models' own displayed image:
			// the edges of a viewport inside the screen can pull a side
			// of the guided fit inwards, and the viewport model then
			// places another area in that quad.
			cut := lr.CutOff
			k, l, a, err := take(g, "classical_guided")
			if err != nil || meanQuadDist(k.Quad, c.Quad) <= priorTolerance*diag {
				return k, l, a, err
			}
			lr.Source, lr.CutOff = "learned", cut
		}
	}
	if cl.c.Found && (lr.Agreement > maxAgreement || !c.Found && !lr.CutOff) {
		return take(cl.c, "classical")
	}
	return c, lr, aspect, nil
}

// presenceWeight is p_screen's share of the corners' confidence: p over
// MinPresence, capped at 1. The presence model says whether there is a
// screen; once it does, how well the corners are known is the corner
// models' agreement (a screen photo at p_screen 0.5 is no less a screen
// photo than one at 0.99).
func presenceWeight(p float64) float64 { return math.Min(1, p/MinPresence) }

// learned is the models' own finding: see detect. edges is the frame in
// grey blurred 3 x 3 for the sub-pixel edge fit (false when unavailable);
// it is called at most once.
func (m *Models) learned(ctx context.Context, frame, work gocv.Mat, edges func() (gray, bool)) (Corners, Learned, float64, error) {
	lr := Learned{Blurred: math.NaN(), GlareHeart: math.NaN(), Moire: math.NaN(), Source: "learned"}
	W, H := frame.Cols(), frame.Rows()
	out := Corners{Width: W, Height: H}
	x := frameTensor(work)
	ra, err := m.cornersA.Run(ctx, x)
	if err != nil {
		return out, lr, 0, fmt.Errorf("learned corners: %w", err)
	}
	rb, err := m.cornersB.Run(ctx, x)
	if err != nil {
		return out, lr, 0, fmt.Errorf("learned corners: %w", err)
	}
	rp, err := m.presence.Run(ctx, x)
	if err != nil {
		return out, lr, 0, fmt.Errorf("learned presence: %w", err)
	}
	lr.Presence = float64(rp[0].Data[0])
	pa := points(ra[0].Data, 8, float64(W), float64(H))
	pb := points(rb[0].Data, 8, float64(W), float64(H))
	mean := make([]Point, 8)
	for i := range mean {
		mean[i] = Point{(pa[i].X + pb[i].X) / 2, (pa[i].Y + pb[i].Y) / 2}
	}
	diag := math.Hypot(float64(W), float64(H))
	screen, img := quadOfPoints(mean[:4]), quadOfPoints(mean[4:])
	lr.Agreement = meanQuadDist(quadOfPoints(pa[:4]), quadOfPoints(pb[:4])) / diag
	out.Confidence = presenceWeight(lr.Presence) * math.Max(0, 1-lr.Agreement/maxAgreement)
	out.Screen, out.Quad = screen, img
	if !screen.Convex() || screen.minAngle() < learnedMinAngle || screen.Area() < 1 {
		out.Confidence = math.Min(out.Confidence, SuspectConfidence)
		return out, lr, 0, nil
	}
	// Sub-pixel: fit the screen's edges at full resolution near the
	// learned quad; kept only when the fit is well supported and close.
	if fg, ok := edges(); ok {
		if rq, ok := refineLearned(fg, screen, diag); ok {
			screen, lr.Refined = rq, true
		}
	}
	img, aspect, err := m.displayed(ctx, frame, work, screen, W, H)
	if err != nil {
		return out, lr, 0, err
	}
	lr.CutOff = cutOff(img, W, H)
	out.Screen, out.Quad = screen, img
	out.Viewer = meanQuadDist(screen, img) > 0.002*diag
	out.Found = out.Confidence >= FoundConfidence && !lr.CutOff && img.Convex() && img.minAngle() >= learnedMinAngle
	return out, lr, aspect, nil
}

// cutOff reports whether a corner of the displayed image quad q lies
// outside the w x h frame by more than cutOffMargin of its diagonal.
func cutOff(q Quad, w, h int) bool {
	m := cutOffMargin * math.Hypot(float64(w), float64(h))
	for _, p := range q {
		if p.X < -m || p.Y < -m || p.X > float64(w)+m || p.Y > float64(h)+m {
			return true
		}
	}
	return false
}

// refineLearned fits the screen's four edges on fg, the full-resolution
// frame in grey blurred 3 x 3, within a search radius around the learned
// quad (1.2 % of the diagonal, then 2 px) and accepts the fit when its
// support reaches FoundConfidence and it moved the corners by less than
// 1 % of the diagonal on average.
func refineLearned(fg gray, q Quad, diag float64) (Quad, bool) {
	r, conf := refine(fg, q, 0.012*diag, edgeStep)
	if conf < FoundConfidence {
		return q, false
	}
	r, conf = refine(fg, r, 2, edgeStep)
	if conf < FoundConfidence || !r.Convex() || meanQuadDist(r, q) > 0.01*diag {
		return q, false
	}
	return r, true
}

// DetectCornersBytes decodes a JPEG or PNG frame (DecodeFrame) and finds
// its corners with the learned models.
func (m *Models) DetectCornersBytes(ctx context.Context, b []byte) (Corners, error) {
	f, err := DecodeFrame(b)
	defer f.Close()
	if err != nil {
		return Corners{}, err
	}
	c, _, err := m.DetectCorners(ctx, f)
	return c, err
}
