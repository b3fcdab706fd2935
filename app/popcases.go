package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"

	"vetlens/engine/cardiac"
)

// ErrPoPUnavailable means the PoP pipeline is not loaded (503).
var ErrPoPUnavailable = &Error{Kind: KindUnavailable, Msg: "PoP pipeline not loaded"}

// SessionStart is the /v3/pop-session/start body.
type SessionStart struct {
	SessionID          string        `json:"session_id"`
	SessionStatus      string        `json:"session_status"`
	PopPipelineEnabled bool          `json:"pop_pipeline_enabled"`
	ModelsLoaded       int           `json:"models_loaded"`
	PopModelsLoaded    int           `json:"pop_models_loaded"`
	ModelVersion       string        `json:"model_version"`
	SessionConfig      SessionConfig `json:"session_config"`
}

// FrameResult is the continue response's frame_result.
type FrameResult struct {
	VHS               *float64 `json:"vhs"`
	VLAS              *float64 `json:"vlas"`
	Spread            *float64 `json:"spread"`
	ModelConfidence   string   `json:"model_confidence"`
	LandmarksDetected bool     `json:"landmarks_detected"`
	PopDetected       bool     `json:"pop_detected"`
}

// FrameBody is the /v3/pop-session response; which fields are set
// depends on SessionStatus (continue, complete, failed) as in the spec.
type FrameBody struct {
	SessionID         string            `json:"session_id"`
	SessionStatus     string            `json:"session_status"`
	Reason            string            `json:"reason,omitempty"`
	FrameIndex        int               `json:"frame_index"`
	FramesProcessed   *int              `json:"frames_processed,omitempty"`
	GoodFrames        *int              `json:"good_frames,omitempty"`
	ResultCode        *cardiac.Code     `json:"result_code,omitempty"`
	ResultDescription string            `json:"result_description,omitempty"`
	FrameResult       *FrameResult      `json:"frame_result,omitempty"`
	RectifiedImage    string            `json:"rectified_image,omitempty"`
	Prediction        *cardiac.Response `json:"prediction,omitempty"`
	Error             string            `json:"error,omitempty"`
	ModelVersion      string            `json:"model_version,omitempty"`
	Billing           *Billing          `json:"billing,omitempty"`
}

func (s *Service) modelVersion() string {
	if s.cardiac != nil {
		return s.cardiac.ModelVersion()
	}
	return ""
}

// StartSession opens a PoP capture session for the caller. Never billed.
func (s *Service) StartSession(ctx context.Context, c Caller) (*SessionStart, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	sess, err := s.pop.StartSession(ctx, c.Customer)
	if err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	h := s.CardiacHealth()
	return &SessionStart{
		SessionID: sess.ID, SessionStatus: StatusReady, PopPipelineEnabled: true,
		ModelsLoaded: h.ModelsLoaded, PopModelsLoaded: h.PopModelsLoaded,
		ModelVersion: s.modelVersion(), SessionConfig: sess.Config,
	}, nil
}

// SessionFrame feeds one frame (base64 already decoded) to a session.
// Continue responses carry no billing; complete is billed once at the
// session rate when the final result has a valid VHS; failed carries
// billing {billable false, reason no_valid_vhs} and is not billed.
func (s *Service) SessionFrame(ctx context.Context, c Caller, sessionID string, frame []byte, uuid string) (*FrameBody, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	if sessionID == "" {
		return nil, errf(KindInvalid, "session_id is required")
	}
	img, err := decodeImage(frame)
	if err != nil {
		return nil, err
	}
	out, err := s.pop.Frame(ctx, c.Customer, sessionID, img)
	if errors.Is(err, ErrSessionNotFound) {
		return nil, &Error{Kind: KindNotFound, Msg: "unknown or expired session_id", Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("session frame: %w", err)
	}
	body := &FrameBody{SessionID: sessionID, SessionStatus: out.Status, FrameIndex: out.FrameIndex}
	switch out.Status {
	case StatusContinue:
		body.Reason = out.Reason
		body.FramesProcessed, body.GoodFrames = &out.FramesProcessed, &out.GoodFrames
		body.ModelVersion = s.modelVersion()
		if r := out.Result; r != nil {
			code := r.Code
			body.ResultCode, body.ResultDescription = &code, code.Description()
			p := photoOf(r)
			body.FrameResult = &FrameResult{VHS: r.VHS, VLAS: r.VLAS, Spread: p.Spread, ModelConfidence: p.ModelConfidence,
				LandmarksDetected: r.LandmarksDetected, PopDetected: r.PopDetected}
		}
	case StatusComplete:
		if out.Result == nil {
			return nil, errors.New("session frame: complete without a result")
		}
		r := *out.Result
		r.Rendered = out.Rendered
		resp := cardiac.NewResponse(&r, s.modelVersion())
		body.Prediction = &resp
		body.RectifiedImage = base64.StdEncoding.EncodeToString(out.Rectified)
		b := s.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: ValidCode(r.Code), UUID: uuid})
		body.Billing = &b
		if err := s.record(ctx, c, uuid, ValidCode(r.Code), r.VHS, r.VLAS); err != nil {
			return nil, err
		}
	case StatusFailed:
		body.Error = out.Error
		b := s.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: false})
		body.Billing = &b
	default:
		return nil, fmt.Errorf("session frame: unknown status %q", out.Status)
	}
	return body, nil
}

// Corners is the /v3/corners body.
type Corners struct {
	Corners      [4][2]float64 `json:"corners"`
	Order        string        `json:"order"`
	ImageWidth   int           `json:"image_width"`
	ImageHeight  int           `json:"image_height"`
	ModelVersion string        `json:"model_version"`
}

// Rectified is the /v3/rectify body; /v3/preprocess adds corners and order.
type Rectified struct {
	RectifiedImage string         `json:"rectified_image"`
	Corners        *[4][2]float64 `json:"corners,omitempty"`
	Order          string         `json:"order,omitempty"`
	Width          int            `json:"width"`
	Height         int            `json:"height"`
	ModelVersion   string         `json:"model_version"`
}

// CornerOrder is the order of the corners.
const CornerOrder = "TL,TR,BR,BL"

// DetectCorners finds the screen corners (422 when none). Never billed.
func (s *Service) DetectCorners(ctx context.Context, imgBytes []byte) (*Corners, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	img, err := decodeImage(imgBytes)
	if err != nil {
		return nil, err
	}
	cs, err := s.corners(ctx, img)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	return &Corners{Corners: cs, Order: CornerOrder, ImageWidth: b.Dx(), ImageHeight: b.Dy(), ModelVersion: s.pop.ModelVersion()}, nil
}

func (s *Service) corners(ctx context.Context, img image.Image) ([4][2]float64, error) {
	cs, err := s.pop.DetectCorners(ctx, img)
	if errors.Is(err, ErrNoCorners) {
		return cs, &Error{Kind: KindUnprocessable, Msg: "corner detection failed", Err: err}
	}
	if err != nil {
		return cs, fmt.Errorf("corners: %w", err)
	}
	return cs, nil
}

// Rectify warps the image by the given corners. Never billed.
func (s *Service) Rectify(ctx context.Context, imgBytes []byte, corners [4][2]float64) (*Rectified, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	img, err := decodeImage(imgBytes)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	for _, p := range corners {
		if p[0] < 0 || p[1] < 0 || p[0] > float64(b.Dx()) || p[1] > float64(b.Dy()) {
			return nil, errf(KindInvalid, "corner %v lies outside the %dx%d image", p, b.Dx(), b.Dy())
		}
	}
	return s.rectify(ctx, img, corners)
}

func (s *Service) rectify(ctx context.Context, img image.Image, corners [4][2]float64) (*Rectified, error) {
	out, err := s.pop.Rectify(ctx, img, corners)
	if err != nil {
		return nil, fmt.Errorf("rectify: %w", err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: cardiac.JPEGQuality}); err != nil {
		return nil, fmt.Errorf("rectify: encode: %w", err)
	}
	b := out.Bounds()
	return &Rectified{RectifiedImage: base64.StdEncoding.EncodeToString(buf.Bytes()), Width: b.Dx(), Height: b.Dy(), ModelVersion: s.pop.ModelVersion()}, nil
}

// Preprocess is corners followed by rectify (422 when no corners).
func (s *Service) Preprocess(ctx context.Context, imgBytes []byte) (*Rectified, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	img, err := decodeImage(imgBytes)
	if err != nil {
		return nil, err
	}
	cs, err := s.corners(ctx, img)
	if err != nil {
		return nil, err
	}
	r, err := s.rectify(ctx, img, cs)
	if err != nil {
		return nil, err
	}
	r.Corners, r.Order = &cs, CornerOrder
	return r, nil
}
