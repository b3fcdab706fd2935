package live

import (
	"context"
	"errors"
	"fmt"

	"vetlens/app"
)

// PoPOutliner is an Outliner over a PoP pipeline's corner detection
// (app.PoP.DetectCorners; capture.Service in the application): no corners
// (app.ErrNoCorners) is ok false, not an error.
func PoPOutliner(p app.PoP) Outliner { return popOutliner{p} }

type popOutliner struct{ p app.PoP }

func (o popOutliner) Corners(ctx context.Context, jpeg []byte) ([4][2]float64, bool, error) {
	c, _, _, err := o.p.DetectCorners(ctx, jpeg)
	if errors.Is(err, app.ErrNoCorners) {
		return [4][2]float64{}, false, nil
	}
	if err != nil {
		return [4][2]float64{}, false, fmt.Errorf("outline: %w", err)
	}
	return c, true, nil
}

// SessionSink is a FrameSink over one session of a PoP pipeline, without
// billing or history (the command line and the tests use it; the desktop
// app bills through app.Service).
type SessionSink struct {
	// Session is the started session (its id and session_config).
	Session app.Session
	p       app.PoP
}

// PoPSink starts a session on p and returns it as a FrameSink.
func PoPSink(ctx context.Context, p app.PoP) (*SessionSink, error) {
	s, err := p.StartSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("start capture session: %w", err)
	}
	return &SessionSink{Session: s, p: p}, nil
}

// Frame sends one frame to the session.
func (s *SessionSink) Frame(ctx context.Context, jpeg []byte) (app.FrameOutcome, error) {
	out, err := s.p.Frame(ctx, s.Session.ID, jpeg)
	if err != nil {
		return app.FrameOutcome{}, fmt.Errorf("session %s: %w", s.Session.ID, err)
	}
	return out, nil
}
