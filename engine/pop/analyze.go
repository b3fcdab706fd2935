package pop

import (
	"context"
	"fmt"
	"slices"

	"gocv.io/x/gocv"
)

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
// the quality model's blur and glare over the heart). Whether the frame
// is a screen photo at all is ScreenPhoto's decision.
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
	a.PoPDetected = ScreenPhoto(a.Chroma, lr.Presence, c, a.FileFrame)
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
