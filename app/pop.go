package app

import (
	"context"
	"errors"
	"image"

	"vetlens/engine/cardiac"
)

// PoP is what the API needs from the picture-of-picture pipeline
// (engine/pop and app/capture implement it). All methods must be safe for
// concurrent use. Images are decoded JPEG/PNG frames; errors other than
// the sentinels below are internal (500).
type PoP interface {
	// ModelsLoaded is the number of PoP models loaded (expected 5).
	ModelsLoaded() int
	// ModelVersion is the version reported beside corners/rectify results.
	ModelVersion() string

	// DetectCorners finds the screen's corners in pixels, ordered TL, TR,
	// BR, BL. ErrNoCorners when none are found (422).
	DetectCorners(ctx context.Context, img image.Image) ([4][2]float64, error)
	// Rectify warps the quadrilateral to an upright rectangle.
	Rectify(ctx context.Context, img image.Image, corners [4][2]float64) (image.Image, error)

	// StartSession opens a capture session owned by owner (the customer).
	StartSession(ctx context.Context, owner string) (Session, error)
	// Frame feeds one frame to the owner's session. ErrSessionNotFound
	// for an unknown id, another owner's session or an expired session
	// that was already reported (404). The pipeline runs the cardiac
	// prediction on the rectified frame itself (FrameOutcome.Result).
	Frame(ctx context.Context, owner, sessionID string, img image.Image) (FrameOutcome, error)
}

// Errors a PoP implementation returns (match with errors.Is).
var (
	ErrNoCorners       = errors.New("screen corners not detected")
	ErrSessionNotFound = errors.New("unknown or expired session")
)

// SessionConfig is the spec's session_config.
type SessionConfig struct {
	MaxFrames              int `json:"max_frames"`
	MaxConsecutiveFailures int `json:"max_consecutive_failures"`
	SessionTTLSeconds      int `json:"session_ttl_seconds"`
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
	// Result is the frame's prediction (continue) or the session's final
	// prediction on the rectified image (complete); nil on failed.
	Result *cardiac.Result
	// Rectified is the rectified JPEG (complete only).
	Rectified []byte
	// Rendered is the annotated JPEG of the final prediction (complete).
	Rendered []byte
	// Error is ErrMaxFrames or ErrTimeout (failed only).
	Error string
}
