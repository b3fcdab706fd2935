package app

import (
	"context"
	"errors"

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
	// Rectify warps the quadrilateral to an upright rectangle and returns
	// it as JPEG with its size.
	Rectify(ctx context.Context, img []byte, corners [4][2]float64) (jpeg []byte, width, height int, err error)

	// StartSession opens a capture session. Ownership (which customer may
	// send frames) is kept by the app, not the pipeline.
	StartSession(ctx context.Context) (Session, error)
	// Frame feeds one frame to a session. ErrSessionNotFound for an
	// unknown or swept id (404); ErrSessionClosed for a frame sent after
	// the session completed or failed (409). A session past its TTL or its
	// max_frames answers a StatusFailed outcome (not an error). The
	// pipeline runs the cardiac prediction itself.
	Frame(ctx context.Context, sessionID string, frame []byte) (FrameOutcome, error)
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

// SessionConfig is the spec's session_config, and how many agreeing
// good frames complete a session (not in the spec's body).
type SessionConfig struct {
	MaxFrames              int `json:"max_frames"`
	MaxConsecutiveFailures int `json:"max_consecutive_failures"`
	SessionTTLSeconds      int `json:"session_ttl_seconds"`
	// GoodFramesNeeded is how many good frames whose VHS agree complete
	// the session (the desktop's progress counts up to it).
	GoodFramesNeeded int `json:"-"`
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
