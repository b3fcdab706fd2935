package capture

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"time"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

// Frame processes one encoded frame (JPEG or PNG) of customer's session
// id. Errors: app.ErrSessionNotFound (also for another customer's
// session), app.ErrSessionClosed, or a failure to run the models
// (wrapped). A frame that cannot be decoded or shows no screen is not an
// error: it is a frame that is not good. The outcome's Result is this
// frame's result (continue) or the best frame's (complete, with the best
// frame's rectified JPEG in Rectified; Rendered is left to the caller).
func (m *Manager) Frame(ctx context.Context, customer, id string, b []byte) (app.FrameOutcome, error) {
	s, err := m.get(id, customer)
	if err != nil {
		return app.FrameOutcome{}, err
	}
	// Reserve this frame's index, or answer timeout / closed.
	s.mu.Lock()
	if s.status == app.StatusComplete || s.status == app.StatusFailed {
		s.mu.Unlock()
		return app.FrameOutcome{}, fmt.Errorf("session %s: %w", id, app.ErrSessionClosed)
	}
	now := m.now()
	if now.Sub(s.created) > m.ttl() {
		out := m.fail(s, app.ErrTimeout, s.frames, now)
		s.mu.Unlock()
		return out, nil
	}
	if s.frames >= m.cfg.MaxFrames {
		// Earlier frames still in flight will decide; this one is over
		// the limit.
		s.mu.Unlock()
		return app.FrameOutcome{}, fmt.Errorf("session %s: frame over max_frames while others are processed: %w", id, app.ErrSessionClosed)
	}
	index := s.frames
	s.frames++
	// The same bytes twice are one photograph: agreement must come from
	// distinct frames. (The same picture with other bytes is caught after
	// decoding, by its pixels: seenPicture.)
	sum := sha256.Sum256(b)
	dup := s.seen[sum]
	if s.seen == nil {
		s.seen = map[[32]byte]bool{}
	}
	s.seen[sum] = true
	s.mu.Unlock()

	var fr FrameResult
	var jpeg []byte
	if dup {
		fr.Problem = "duplicate of an earlier frame"
	} else {
		fr, jpeg, err = m.measure(ctx, b, s.seenPicture)
	}
	if err != nil {
		s.mu.Lock()
		s.done++
		if s.done >= m.cfg.MaxFrames && s.status != app.StatusComplete && s.status != app.StatusFailed {
			m.fail(s, app.ErrMaxFrames, index, m.now())
		}
		s.mu.Unlock()
		return app.FrameOutcome{}, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
	if s.status == app.StatusComplete || s.status == app.StatusFailed {
		return app.FrameOutcome{}, fmt.Errorf("session %s: %w", id, app.ErrSessionClosed)
	}
	now = m.now()
	if now.Sub(s.created) > m.ttl() {
		return m.fail(s, app.ErrTimeout, index, now), nil
	}
	if fr.Good {
		s.failRun = 0
		s.good = append(s.good, goodFrame{index: index, vhs: *fr.Result.VHS, res: fr.Result, jpeg: jpeg, sharp: fr.Analysis.Quality.Sharpness})
	} else {
		s.failRun++
		if s.failRun >= m.cfg.MaxConsecutiveFailures && len(s.good) > 0 {
			s.good = nil
			fr.Problem += fmt.Sprintf("; %d frames in a row not good: earlier good frames discarded", s.failRun)
		}
	}
	out := app.FrameOutcome{FrameIndex: index, FramesProcessed: s.done, GoodFrames: len(s.good), Result: fr.Result}
	if best, ok := m.agree(s.good); ok {
		s.status, s.finished = app.StatusComplete, now
		out.Status = app.StatusComplete
		out.FrameIndex = best.index
		out.Result = best.res
		out.Rectified = best.jpeg
		return out, nil
	}
	if s.done >= m.cfg.MaxFrames {
		return m.fail(s, app.ErrMaxFrames, index, now), nil
	}
	s.status = app.StatusContinue
	out.Status = app.StatusContinue
	out.Reason = fmt.Sprintf("%d of %d good frames", len(s.good), m.cfg.GoodFramesNeeded)
	if !fr.Good {
		out.Reason += ": " + fr.Problem
	}
	return out, nil
}

// seenPicture records a decoded frame's hash (pop.FrameHash) and reports
// whether the session had it already: the same picture with other bytes
// (appended data, other metadata) is the same photograph and must not
// count as a second agreeing frame. A zero hash (an analyzer that does not
// hash) is never a duplicate.
func (s *session) seenPicture(h [32]byte) bool {
	if h == ([32]byte{}) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pictures == nil {
		s.pictures = map[[32]byte]bool{}
	}
	dup := s.pictures[h]
	s.pictures[h] = true
	return dup
}

// fail moves s to failed; s.mu is held.
func (m *Manager) fail(s *session, reason string, index int, now time.Time) app.FrameOutcome {
	s.status, s.finished = app.StatusFailed, now
	return app.FrameOutcome{Status: app.StatusFailed, FrameIndex: index, FramesProcessed: s.done,
		GoodFrames: len(s.good), Error: reason}
}

// agree looks for GoodFramesNeeded good frames whose VHS lie within
// VHSAgreement of each other (the largest such group, earliest first) and
// returns its best frame: the lowest ensemble spread, then the sharpest.
func (m *Manager) agree(good []goodFrame) (goodFrame, bool) {
	n := m.cfg.GoodFramesNeeded
	if len(good) < n {
		return goodFrame{}, false
	}
	g := append([]goodFrame(nil), good...)
	sort.SliceStable(g, func(i, j int) bool { return g[i].vhs < g[j].vhs })
	bi, bj := -1, -1
	for i := range g {
		j := i
		for j+1 < len(g) && g[j+1].vhs-g[i].vhs <= m.cfg.VHSAgreement+1e-9 {
			j++
		}
		if j-i+1 >= n && (bi < 0 || j-i > bj-bi) {
			bi, bj = i, j
		}
	}
	if bi < 0 {
		return goodFrame{}, false
	}
	best := g[bi]
	for _, f := range g[bi : bj+1] {
		if f.res.Spread < best.res.Spread || (f.res.Spread == best.res.Spread && f.sharp > best.sharp) {
			best = f
		}
	}
	return best, true
}

// measure analyses one frame and, when its screen was corrected, runs the
// cardiac engine on the rectified image. It returns the frame result and,
// for a good frame, the rectified JPEG. seen reports whether the decoded
// picture (Analysis.FrameHash) was in the session already: such a frame
// is not measured.
func (m *Manager) measure(ctx context.Context, b []byte, seen func([32]byte) bool) (FrameResult, []byte, error) {
	an, err := m.an.AnalyzeBytes(b)
	if err != nil {
		// Undecodable, empty, tiny or huge: a bad frame, not an error of
		// the session.
		return FrameResult{Problem: "unreadable frame: " + err.Error()}, nil, nil
	}
	fr := FrameResult{Analysis: an}
	if seen(an.FrameHash) {
		fr.Problem = "duplicate of an earlier frame (the same picture)"
		return fr, nil, nil
	}
	switch {
	case !an.PoPDetected:
		fr.Problem = "no screen found"
		return fr, nil, nil
	case !an.Corrected:
		// Code 7 only for a screen that shows a radiograph (PredictImage's
		// rule, ShowsRadiograph); a scene's rectangles are no screen.
		img, _, err := imageproc.Decode(b)
		if err != nil {
			return FrameResult{Problem: "unreadable frame: " + err.Error()}, nil, nil
		}
		shows, err := suspectedScreenShows(ctx, m.pred, an, img)
		if err != nil {
			return FrameResult{}, nil, fmt.Errorf("measure frame: %w", err)
		}
		if !shows {
			fr.Problem = "no screen found"
			return fr, nil, nil
		}
		fr.Result, fr.Problem = CorrectionFailed(an), "screen corners not found confidently"
		return fr, nil, nil
	}
	// A rectified screen photo: first stage only (docs/cardiac.md).
	r, err := m.pred.Predict(ctx, an.Rectified, cardiac.PredictOptions{SkipRefinement: true})
	if err != nil {
		return FrameResult{}, nil, fmt.Errorf("predict frame: %w", err)
	}
	r.PopDetected = true
	fr.Result = r
	switch p := FrameProblem(an, m.cfg.MinCornerConfidence); {
	case p != "":
		fr.Problem = p
	case r.Code != cardiac.CodeHighConfidence && r.Code != cardiac.CodeModerate:
		fr.Problem = fmt.Sprintf("measurement not confident: result code %d", r.Code)
	default:
		fr.Good = true
		// Only a kept frame can become the session's picture: encode it.
		if err := an.EncodeRectified(); err != nil {
			return FrameResult{}, nil, fmt.Errorf("measure frame: %w", err)
		}
	}
	return fr, an.RectifiedJPEG, nil
}
