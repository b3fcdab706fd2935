package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"vetlens/engine/cardiac"
)

// PoP is what the API needs from the picture-of-picture pipeline
// (engine/pop and app/capture implement it). Methods must be safe for
// concurrent use. Images are the request's JPEG/PNG bytes, already checked
// by the app: JPEG or PNG by signature, at most MaxImageBytes, header
// dimensions within imageproc's limits. Errors other than the sentinels
// below are internal (500), except that an error wrapping
// imageproc.ErrCorrupt or ErrFormat is a bad image (400).
type PoP interface {
	// ModelsLoaded is the number of PoP models loaded (health's
	// pop_models_loaded; 0 for a pipeline without model files).
	ModelsLoaded() int
	// ModelVersion is the version reported by corners/rectify/preprocess.
	ModelVersion() string

	// DetectCorners finds the screen's corners in pixels, ordered TL, TR,
	// BR, BL, and returns the image size. ErrNoCorners when none (422).
	DetectCorners(ctx context.Context, img []byte) (corners [4][2]float64, width, height int, err error)
	// PlainFile reports whether a frame read from an image file (JPEG or
	// PNG) is a radiograph file rather than a photograph of a screen: the
	// one rule for frames from files (pop.Analysis.PlainFile), which a
	// session from a folder (DesktopSession.FromFiles) and the live
	// preview's outline (live.FileOutliner) follow, as `predict` does.
	PlainFile(ctx context.Context, frame []byte) (bool, error)
	// Rectify warps the quadrilateral to an upright rectangle and returns
	// it as JPEG with its size.
	Rectify(ctx context.Context, img []byte, corners [4][2]float64) (jpeg []byte, width, height int, err error)

	// StartSession opens a capture session owned by owner, unless
	// owner.Key already holds maxOpen open sessions (neither complete nor
	// failed, and not past their TTL; maxOpen <= 0: no limit): then it
	// returns a *SessionLimitError. Counting and opening are one step, so
	// concurrent starts of one key never exceed maxOpen.
	StartSession(ctx context.Context, owner SessionOwner, maxOpen int) (Session, error)
	// OwnsSession reports whether sessionID is a session the pipeline
	// still holds, started by customer.
	OwnsSession(sessionID, customer string) bool
	// Frame feeds one frame to customer's session. ErrSessionNotFound for
	// an unknown or swept id, or another customer's session (404);
	// ErrSessionClosed for a frame sent after the session completed or
	// failed (409). A session past its TTL or its max_frames answers a
	// StatusFailed outcome (not an error). The pipeline runs the cardiac
	// prediction itself.
	Frame(ctx context.Context, customer, sessionID string, frame []byte) (FrameOutcome, error)
}

// SessionOwner is who started a PoP session: only Customer may send it
// frames, and it counts against Key's limit of open sessions.
type SessionOwner struct {
	// Customer is Caller.Customer.
	Customer string
	// Key is the API key's prefix (Caller.KeyPrefix).
	Key string
}

// SessionLimitError is PoP.StartSession's answer when the key already
// holds its limit of open sessions (429).
type SessionLimitError struct {
	// RetryAfter is the time until the key's first open session expires,
	// at least a second.
	RetryAfter time.Duration
}

// Error says the limit was reached and when to retry.
func (e *SessionLimitError) Error() string {
	return fmt.Sprintf("too many open sessions for this key; retry after %v", e.RetryAfter)
}

// Errors a PoP implementation returns (match with errors.Is).
var (
	ErrNoCorners = errors.New("screen corners not detected")
	// ErrBadCorners: the corners given to Rectify do not form a usable
	// quadrilateral (collinear, self-crossing, too small): 400.
	ErrBadCorners      = errors.New("corners do not form a usable quadrilateral")
	ErrSessionNotFound = errors.New("unknown or expired session")
	ErrSessionClosed   = errors.New("session already finished")
)

// SessionConfig is a session's limits: the spec's session_config (its
// wire body is cardiacv3.SessionConfig, a conversion of this), and how
// many agreeing good frames complete a session (not in the spec's body).
type SessionConfig struct {
	MaxFrames              int
	MaxConsecutiveFailures int
	SessionTTLSeconds      int
	// GoodFramesNeeded is how many good frames whose VHS agree complete
	// the session (the desktop's progress counts up to it).
	GoodFramesNeeded int
}

// Session is a started capture session.
type Session struct {
	ID     string
	Config SessionConfig
}

// Session statuses.
const (
	StatusReady    = "ready"
	StatusContinue = "continue"
	StatusComplete = "complete"
	StatusFailed   = "failed"
)

// Session failure errors (FrameOutcome.Error).
const (
	ErrMaxFrames = "max_frames_exceeded"
	ErrTimeout   = "session_timeout"
)

// FrameOutcome is the result of one frame.
type FrameOutcome struct {
	// Status is StatusContinue, StatusComplete or StatusFailed.
	Status          string
	FrameIndex      int
	FramesProcessed int
	GoodFrames      int
	// Reason is the continue text ("2 of 3 good frames ...").
	Reason string
	// Result is the frame's prediction (continue; nil when no screen was
	// seen, reported as result code 5) or the session's final prediction
	// on the rectified image (complete); nil on failed.
	Result *cardiac.Result
	// Rectified is the rectified JPEG (complete only).
	Rectified []byte
	// Rendered is the annotated JPEG of the final prediction (complete).
	Rendered []byte
	// Error is ErrMaxFrames or ErrTimeout (failed only).
	Error string
}
