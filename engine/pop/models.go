package pop

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"

	"gocv.io/x/gocv"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// The PoP model family (models/manifest.json, family "pop"; docs/pop.md,
// "Learned screen finder"). Every model runs on a working copy of the
// frame whose long side is WorkSide pixels, as in training.
const (
	// FamilyName is the manifest family of the PoP models.
	FamilyName = "pop"
	// RoleCornersA and RoleCornersB are the two corner-heatmap models:
	// frame 3 x 160 x 160 -> points 8 x 2 (screen TL, TR, BR, BL, then
	// displayed image TL, TR, BR, BL, as shares of the frame's width and
	// height) and spread 8. Their agreement is the corners' confidence.
	RoleCornersA = "pop_corners_a"
	RoleCornersB = "pop_corners_b"
	// RolePresence is the screen-present classifier: frame 3 x 160 x 160
	// -> p_screen (a photographed display showing an image; plain
	// radiograph files, rooms without a screen and black frames are 0).
	RolePresence = "pop_presence"
	// RoleViewport finds the displayed radiograph inside the rectified
	// screen: grey 1 x 128 x 128 -> points 4 x 2 (shares of the rectified
	// screen) and spread 4.
	RoleViewport = "pop_viewport"
	// RoleQuality rates the rectified displayed image: grey 1 x 128 x 128
	// -> problems 3 (probabilities: blurred, glare over the heart, moire).
	RoleQuality = "pop_quality"

	// WorkSide is the long side of the working copy the models see.
	WorkSide = 512
	// frameSide and cropSide are the model input sizes.
	frameSide, cropSide = 160, 128
	// ExpectedModels is the size of the PoP family.
	ExpectedModels = 5
)

// Decision thresholds of the learned finder, set on development
// composites (pop/variety.py, split train, seeds 30,800,000+; docs/pop.md).
const (
	// MinPresence is the p_screen from which a colour frame is a screen
	// photo. Set for the .7 presence model (trained with plain-file
	// negatives of both simulator worlds) on development data, in the gap
	// between the two: 102 of 105 usable development screen photos score
	// 0.30 or more (the other three under 0.07), and the colour validation
	// radiograph files of both worlds score under 0.16 but for one (0.57,
	// its corners not found). Checked on 1,000 development frames: it
	// takes 866 of the 881 usable, as many as .3 did at 0.15.
	// experiments/2026-pop-journal.md, "Presence model .7".
	MinPresence = 0.2
	// maxAgreement is the mean distance between the two corner models'
	// screen corners, as a share of the frame diagonal, at which the
	// corners' confidence reaches 0.
	maxAgreement = 0.04
	// cutOffMargin: a displayed-image corner further outside the frame
	// than this share of the diagonal makes the frame cut off.
	cutOffMargin = 0.005
	// MaxGlareHeart, MaxBlurred: the quality model's probabilities above
	// which a frame has glare over the heart or is blurred.
	MaxGlareHeart, MaxBlurred = 0.5, 0.5
	// learnedMinAngle is the smallest interior angle (degrees) of a
	// learned quad: perspective up to 45 degrees with roll.
	learnedMinAngle = 25
	// classicalAgreement is the largest mean distance, as a share of the
	// frame diagonal, between the classical and the learned screen quads
	// at which both are taken to be the same screen.
	classicalAgreement = 0.05
	// priorTolerance is how far (mean corner distance over the diagonal)
	// a classical candidate may lie from the learned screen quad when the
	// learned quad guides the classical search.
	priorTolerance = 0.1
	// guidedAgreement is the largest disagreement of the two corner models
	// (as maxAgreement) at which the learned quad still guides the
	// classical search: twice maxAgreement. The guided search only keeps
	// a quad the edges support (classical confidence), so a learned quad
	// too uncertain to count as found on its own still tells which edges
	// are the screen (a wall picture or a desk otherwise wins).
	guidedAgreement = 2 * maxAgreement
	// viewportAgreement is the largest mean corner distance (share of the
	// diagonal) between the classical displayed area (its viewer viewport,
	// or the whole screen when it found none) and the viewport model's
	// snapped area at which the classical one is kept. 0.5 %: the snapped
	// viewport is itself fitted on the displayed image's edges, and the
	// classical area differs from it mostly when it is another area (the
	// whole screen around a letterboxed radiograph or a light viewer's
	// panels, a viewer window instead of its viewport); 3 % before. Set on
	// development frames (experiments/2026-pop-journal.md, "Gates").
	viewportAgreement = 0.005
)

// Models is the loaded PoP model family. Its methods are safe for
// concurrent use.
type Models struct {
	cornersA, cornersB, presence, viewport, quality infer.Session
	version                                         string
}

// LoadModelsWith loads the five PoP models listed in dir/manifest.json
// after verifying their checksums, opening each with open. The product
// opens them in ONNX Runtime through engine/pop/poport.Load; package pop
// itself links no model runtime.
func LoadModelsWith(dir string, open infer.Opener) (*Models, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("pop models: %w", err)
	}
	fam, err := m.Family(FamilyName)
	if err != nil {
		return nil, fmt.Errorf("pop models: %w", err)
	}
	out := &Models{version: fam.ModelVersion}
	slots := []struct {
		role string
		s    *infer.Session
	}{{RoleCornersA, &out.cornersA}, {RoleCornersB, &out.cornersB}, {RolePresence, &out.presence}, {RoleViewport, &out.viewport}, {RoleQuality, &out.quality}}
	for _, sl := range slots {
		es := m.ByRole(sl.role)
		if len(es) != 1 {
			out.Close()
			return nil, fmt.Errorf("pop models: manifest has %d models of role %s, want 1", len(es), sl.role)
		}
		if err := m.Verify(es[0]); err != nil {
			out.Close()
			return nil, fmt.Errorf("pop models: %w", err)
		}
		s, err := open(m.Path(es[0]), es[0].Inputs, es[0].Outputs)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("pop models: %w", err)
		}
		*sl.s = s
	}
	return out, nil
}

// Close releases the sessions.
func (m *Models) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, s := range []infer.Session{m.cornersA, m.cornersB, m.presence, m.viewport, m.quality} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// Count is the number of PoP model files loaded (0 for nil).
func (m *Models) Count() int {
	if m == nil {
		return 0
	}
	n := 0
	for _, s := range []infer.Session{m.cornersA, m.cornersB, m.presence, m.viewport, m.quality} {
		if s != nil {
			n++
		}
	}
	return n
}

// Version is the family's model_version (Version when m is nil: the
// classical pipeline).
func (m *Models) Version() string {
	if m == nil {
		return Version
	}
	return m.version
}

// Learned is what the learned finder measured on a frame.
type Learned struct {
	// Presence is p_screen.
	Presence float64
	// Agreement is the mean distance between the two corner models'
	// screen corners over the frame diagonal.
	Agreement float64
	// CutOff: a displayed-image corner lies outside the frame.
	CutOff bool
	// Refined: the classical edge fit moved the screen quad onto the
	// display's edges (sub-pixel).
	Refined bool
	// Blurred, GlareHeart and Moire are the quality model's
	// probabilities; NaN when it did not run.
	Blurred, GlareHeart, Moire float64
	// Source is where the corners came from: "learned", or "classical"
	// when the classical detector's quad was taken (see detect).
	Source string
	// Classical is the classical detector's confidence (0 when it found
	// no candidate).
	Classical float64
}

// workCopy resizes frame (BGR) so its long side is WorkSide (area
// averaging down, bilinear up). The caller closes it.
func workCopy(frame gocv.Mat) gocv.Mat {
	W, H := frame.Cols(), frame.Rows()
	s := float64(WorkSide) / float64(max(W, H))
	w, h := max(1, int(math.Round(float64(W)*s))), max(1, int(math.Round(float64(H)*s)))
	out := gocv.NewMat()
	interp := gocv.InterpolationArea
	if s > 1 {
		interp = gocv.InterpolationLinear
	}
	gocv.Resize(frame, &out, image.Point{w, h}, 0, 0, interp)
	return out
}

// frameTensor is the corner and presence models' input: the working copy
// stretched to frameSide x frameSide (area averaging, as in training),
// RGB over 255, channel-major.
func frameTensor(work gocv.Mat) infer.Tensor {
	b := gocv.NewMat()
	defer b.Close()
	gocv.Resize(work, &b, image.Point{frameSide, frameSide}, 0, 0, gocv.InterpolationArea)
	px := b.ToBytes()
	n := frameSide * frameSide
	x := make([]float32, 3*n)
	for i := range n {
		// BGR -> RGB planes.
		x[i] = float32(px[3*i+2]) / 255
		x[n+i] = float32(px[3*i+1]) / 255
		x[2*n+i] = float32(px[3*i]) / 255
	}
	return infer.Tensor{Shape: []int64{1, 3, frameSide, frameSide}, Data: x}
}

// cropTensor rectifies quad q of the working copy (work pixels) to a grey
// cropSide square, the viewport and quality models' input.
func cropTensor(work gocv.Mat, q Quad) (infer.Tensor, error) {
	r, err := Rectify(work, q, cropSide, cropSide)
	defer r.Close()
	if err != nil {
		return infer.Tensor{}, err
	}
	g := gocv.NewMat()
	defer g.Close()
	gocv.CvtColor(r, &g, gocv.ColorBGRToGray)
	px := g.ToBytes()
	x := make([]float32, len(px))
	for i, v := range px {
		x[i] = float32(v) / 255
	}
	return infer.Tensor{Shape: []int64{1, 1, cropSide, cropSide}, Data: x}, nil
}

// points converts n model points (shares) into a slice of Points scaled
// by w and h.
func points(d []float32, n int, w, h float64) []Point {
	out := make([]Point, n)
	for i := range n {
		out[i] = Point{float64(d[2*i]) * w, float64(d[2*i+1]) * h}
	}
	return out
}

func quadOfPoints(p []Point) Quad { return Quad{p[0], p[1], p[2], p[3]} }

func meanQuadDist(a, b Quad) float64 {
	var s float64
	for i := range 4 {
		s += dist(a[i], b[i])
	}
	return s / 4
}

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

// rateQuality runs the quality model on the displayed image quad q
// (frame pixels) of the working copy.
func (m *Models) rateQuality(ctx context.Context, frame, work gocv.Mat, q Quad, lr *Learned) error {
	sx, sy := float64(work.Cols())/float64(frame.Cols()), float64(work.Rows())/float64(frame.Rows())
	xt, err := cropTensor(work, scaleQuadXY(q, sx, sy))
	if err != nil {
		return err
	}
	r, err := m.quality.Run(ctx, xt)
	if err != nil {
		return fmt.Errorf("learned quality: %w", err)
	}
	lr.Blurred, lr.GlareHeart, lr.Moire = float64(r[0].Data[0]), float64(r[0].Data[1]), float64(r[0].Data[2])
	return nil
}

// Analyze is the learned pipeline on a decoded BGR frame: corners and
// presence (detect), PoP detection, rectification to the displayed
// radiograph's own aspect, and frame quality (the classical measures plus
// the quality model's blur and glare over the heart). A frame is a screen
// photo when it is a colour photograph (Chroma >= MinChroma), p_screen
// reaches MinPresence and the quad is not the file's own frame.
func (m *Models) Analyze(ctx context.Context, frame gocv.Mat) (*Analysis, error) {
	if frame.Channels() != 3 {
		return nil, fmt.Errorf("analyze: %d channels, want BGR", frame.Channels())
	}
	work := workCopy(frame)
	defer work.Close()
	c, lr, aspect, err := m.detect(ctx, frame, work)
	if err != nil {
		return nil, err
	}
	a := &Analysis{FrameHash: FrameHash(frame), Corners: c, Chroma: Chroma(frame), FileFrame: c.FileFrame(), Learned: &lr}
	a.PoPDetected = a.Chroma >= MinChroma && lr.Presence >= MinPresence && !a.FileFrame
	switch {
	case !a.PoPDetected:
		a.PossibleScreen = PossibleScreen(a.Chroma, lr.Presence, c, a.FileFrame)
		return a, nil
	case lr.CutOff:
		a.Failure = "the displayed image is cut off by the frame's edge"
		return a, nil
	case !c.Found:
		a.Failure = fmt.Sprintf("screen corners not found confidently (confidence %.2f < %.2f)", c.Confidence, FoundConfidence)
		return a, nil
	}
	rw, rh, err := learnedSize(c.Quad, c.Width, c.Height, aspect)
	if err != nil {
		a.Failure = err.Error()
		return a, nil
	}
	if err := m.rateQuality(ctx, frame, work, c.Quad, &lr); err != nil {
		return nil, err
	}
	return a, a.rectify(frame, rw, rh, func(q *Quality) {
		if lr.Blurred > MaxBlurred && !slices.Contains(q.Problems, "blurred") {
			q.Problems = append(q.Problems, "blurred")
		}
		if lr.GlareHeart > MaxGlareHeart {
			q.Problems = append(q.Problems, "glare_heart")
		}
	})
}

// Below MinPresence, a frame may still be a screen photo the presence
// model was unsure of (a full-screen radiograph filling a dark room's
// frame looks like a file). Measured as a file, such a photo carries the
// perspective: at 28 degrees the foreshortening is 12 %, and a VHS of
// 12.4 came back as 10.8 with code 2. PossibleScreen flags it so that no
// number is returned (docs/pop.md, "Possible screen photos").
const (
	// PossiblePresence is the p_screen from which a colour frame below
	// MinPresence may be a screen photo. With the .7 presence model the
	// colour validation radiograph files (sim/heldout.py --validation: 95 of
	// 120 of world 1, 101 of 120 of world 2) score under it but for four
	// of world 2 (0.098, 0.139, 0.159, and 0.573, which is taken for a
	// screen photo anyway).
	PossiblePresence = 0.05
	// MinPossibleTilt is the viewing tilt (degrees, Tilt of the learned
	// quad) from which the perspective matters: 1 - cos 15 degrees is a
	// 3.4 % foreshortening, about 0.35 v on a VHS of 10 along one axis.
	MinPossibleTilt = 15.0
)

// PossibleScreen reports whether a frame that is not taken for a screen
// photo may still be one: a colour frame (chroma >= MinChroma), p_screen
// from PossiblePresence up to MinPresence, corners found confidently
// (c.Found) on a quad that is not the file's own frame, seen at a tilt of
// at least MinPossibleTilt.
func PossibleScreen(chroma, presence float64, c Corners, fileFrame bool) bool {
	if chroma < MinChroma || presence < PossiblePresence || presence >= MinPresence || !c.Found || fileFrame {
		return false
	}
	_, f := Aspect(c.Quad, c.Width, c.Height)
	return Tilt(c.Quad, c.Width, c.Height, f) >= MinPossibleTilt
}

// AnalyzeBytes decodes a JPEG or PNG frame (DecodeFrame) and analyses it
// with the learned pipeline.
func (m *Models) AnalyzeBytes(ctx context.Context, b []byte) (*Analysis, error) {
	f, err := DecodeFrame(b)
	defer f.Close()
	if err != nil {
		return nil, err
	}
	return m.Analyze(ctx, f)
}

// learnedSize is the rectified size of the displayed image quad q: the
// height is the longer of q's left and right sides, the width follows the
// displayed radiograph's own aspect (from the screen's aspect and the
// viewport's shares; the quad's own vanishing-point estimate when
// unknown), the long side capped at MaxRectifiedSide.
func learnedSize(q Quad, w, h int, aspect float64) (int, int, error) {
	if aspect <= 0 {
		return RectifiedSize(q, w, h)
	}
	if !q.Convex() || q.Area() < 1 {
		return 0, 0, fmt.Errorf("%w: %v", ErrBadQuad, q)
	}
	return SizeForAspect(q, aspect)
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
