package capture

import (
	"context"
	"errors"
	"fmt"
	"image"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/engine/pop"
)

// Service is the PoP pipeline as the application serves it: it implements
// app.PoP over a session Manager, the engine/pop geometry and a cardiac
// predictor, and it is the PoP-aware single-image predictor.
type Service struct {
	m       *Manager
	pred    Predictor
	an      Analyzer
	corners CornerFinder
	models  ModelInfo
}

// ServiceConfig is what a Service runs on, its optional ports named.
type ServiceConfig struct {
	// Manager runs the capture sessions; nil: corners and rectification
	// only (StartSession answers app.ErrPoPUnavailable).
	Manager *Manager
	// Predictor measures the rectified images (Predict, Measure).
	Predictor Predictor
	// Analyzer finds and grades screens in frames.
	Analyzer Analyzer
	// Corners finds corners alone (DetectCorners); nil: the classical
	// detector (PoP{}).
	Corners CornerFinder
	// Models reports the PoP model files loaded; nil: none (0, and the
	// classical pipeline's pop.Version).
	Models ModelInfo
}

// NewService wraps a session manager and the predictor it runs on, with
// an as the analyzer, the corner finder and the model report.
func NewService(m *Manager, p Predictor, an PoP) *Service {
	return NewServiceWith(ServiceConfig{Manager: m, Predictor: p, Analyzer: an, Corners: an, Models: an})
}

// NewServiceWith builds a Service from its ports, for an Analyzer other
// than PoP (a test double).
func NewServiceWith(c ServiceConfig) *Service {
	return &Service{m: c.Manager, pred: c.Predictor, an: c.Analyzer, corners: c.Corners, models: c.Models}
}

var _ app.PoP = (*Service)(nil)

// ModelInfo is the port that reports an analyzer's model files (PoP does).
type ModelInfo interface {
	ModelsLoaded() int
	ModelVersion() string
}

// CornerFinder is the port that finds a screen's corners alone (PoP
// does).
type CornerFinder interface {
	CornersBytes(ctx context.Context, b []byte) (pop.Corners, error)
}

// ModelsLoaded is the number of PoP model files the analyzer loaded (the
// classical geometry pipeline loads none).
func (s *Service) ModelsLoaded() int {
	if s.models != nil {
		return s.models.ModelsLoaded()
	}
	return 0
}

// ModelVersion is the PoP pipeline's version.
func (s *Service) ModelVersion() string {
	if s.models != nil {
		return s.models.ModelVersion()
	}
	return pop.Version
}

// PlainFile reports whether an encoded frame (JPEG or PNG) read from an
// image file is a radiograph file rather than a photograph of a screen
// (pop.Analysis.PlainFile, on this service's analyzer; without one the
// classical pipeline's). A colour frame is never one, so it is answered
// from its chroma alone: only grey frames are analysed, which keeps the
// live outline of a folder of camera frames (live.FileOutliner) at one
// corner detection a frame.
func (s *Service) PlainFile(ctx context.Context, frame []byte) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m, err := pop.DecodeFrame(frame)
	colour := err == nil && pop.Chroma(m) >= pop.MinChroma
	m.Close()
	if err != nil {
		return false, fmt.Errorf("plain file: %w", err)
	}
	if colour {
		return false, nil
	}
	var an Analyzer = PoP{}
	if s.an != nil {
		an = s.an
	}
	a, err := an.AnalyzeBytes(frame)
	if err != nil {
		return false, fmt.Errorf("plain file: %w", err)
	}
	return a.PlainFile(), nil
}

// DetectCorners finds the displayed image's corners, TL, TR, BR, BL.
func (s *Service) DetectCorners(ctx context.Context, img []byte) ([4][2]float64, int, int, error) {
	if err := ctx.Err(); err != nil {
		return [4][2]float64{}, 0, 0, err
	}
	cf := s.corners
	if cf == nil {
		cf = PoP{}
	}
	c, err := cf.CornersBytes(ctx, img)
	if err != nil {
		return [4][2]float64{}, 0, 0, fmt.Errorf("detect corners: %w", err)
	}
	if !c.Found {
		return [4][2]float64{}, c.Width, c.Height, fmt.Errorf("%w (confidence %.2f)", app.ErrNoCorners, c.Confidence)
	}
	var out [4][2]float64
	for i, p := range c.Quad {
		out[i] = [2]float64{p.X, p.Y}
	}
	return out, c.Width, c.Height, nil
}

// Rectify warps the quadrilateral to an upright rectangle of the screen's
// true aspect and returns it as JPEG.
func (s *Service) Rectify(ctx context.Context, img []byte, corners [4][2]float64) ([]byte, int, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	frame, err := pop.DecodeFrame(img)
	defer frame.Close()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("decode frame: %w", err)
	}
	var q pop.Quad
	for i, p := range corners {
		q[i] = pop.Point{X: p[0], Y: p[1]}
	}
	b, w, h, err := pop.RectifyJPEG(frame, q)
	if errors.Is(err, pop.ErrBadQuad) {
		return nil, 0, 0, fmt.Errorf("%w: %w", app.ErrBadCorners, err)
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("rectify: %w", err)
	}
	return b, w, h, nil
}

// StartSession opens a capture session owned by owner, within maxOpen
// open sessions of its key (Manager.Start).
func (s *Service) StartSession(ctx context.Context, owner app.SessionOwner, maxOpen int) (app.Session, error) {
	if err := ctx.Err(); err != nil {
		return app.Session{}, err
	}
	if s.m == nil {
		return app.Session{}, app.ErrPoPUnavailable // a corners-only service
	}
	return s.m.Start(owner, maxOpen)
}

// OwnsSession reports whether id is a session held for customer.
func (s *Service) OwnsSession(id, customer string) bool {
	return s.m != nil && s.m.Owns(id, customer)
}

// Frame feeds one frame to customer's session and returns its outcome,
// with the final prediction rendered on the rectified best frame when
// the session completes. The Manager's errors are app's
// (app.ErrSessionNotFound, app.ErrSessionClosed) already.
func (s *Service) Frame(ctx context.Context, customer, id string, frame []byte) (app.FrameOutcome, error) {
	if s.m == nil {
		return app.FrameOutcome{}, app.ErrSessionNotFound // a corners-only service holds none
	}
	out, err := s.m.Frame(ctx, customer, id, frame)
	if err != nil || out.Status != app.StatusComplete {
		return out, err
	}
	img, _, err := imageproc.Decode(out.Rectified)
	if err != nil {
		return app.FrameOutcome{}, fmt.Errorf("decode rectified best frame: %w", err)
	}
	if out.Rendered, err = cardiac.RenderJPEG(img, out.Result); err != nil {
		return app.FrameOutcome{}, fmt.Errorf("render best frame: %w", err)
	}
	return out, nil
}

// Measure measures one image, correcting it first when it is a
// photograph of a screen (pop_detected; code 7 when the correction
// fails), and returns the image the result's positions refer to
// (rectified for a corrected screen photo; nil for code 7): app's
// PoPMeasurer, for the single predictions and the desktop's review.
func (s *Service) Measure(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error) {
	r, err := PredictImage(ctx, s.pred, s.an, img, o)
	if err != nil {
		return nil, nil, err
	}
	return r.Result, r.Measured, nil
}
