package cardiacv3

import (
	"encoding/base64"
	"errors"
	"fmt"

	"vetlens/api"
	"vetlens/engine/cardiac"
)

// A PoP session's statuses as the spec writes them (session_status).
const (
	StatusReady    = "ready"
	StatusContinue = "continue"
	StatusComplete = "complete"
	StatusFailed   = "failed"
)

// SessionConfig is the spec's session_config. Its fields are
// app.SessionConfig's, in its order, so the adapter converts one to the
// other (SessionConfig(c)); GoodFramesNeeded is not on the wire.
type SessionConfig struct {
	MaxFrames              int `json:"max_frames"`
	MaxConsecutiveFailures int `json:"max_consecutive_failures"`
	SessionTTLSeconds      int `json:"session_ttl_seconds"`
	GoodFramesNeeded       int `json:"-"`
}

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

// NewSessionStart is the body of a session just opened (status ready).
func NewSessionStart(sessionID string, cfg SessionConfig, modelsLoaded, popModelsLoaded int, modelVersion string) SessionStart {
	return SessionStart{SessionID: sessionID, SessionStatus: StatusReady, PopPipelineEnabled: true,
		ModelsLoaded: modelsLoaded, PopModelsLoaded: popModelsLoaded, ModelVersion: modelVersion, SessionConfig: cfg}
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
	SessionID         string               `json:"session_id"`
	SessionStatus     string               `json:"session_status"`
	Reason            string               `json:"reason,omitempty"`
	FrameIndex        int                  `json:"frame_index"`
	FramesProcessed   *int                 `json:"frames_processed,omitempty"`
	GoodFrames        *int                 `json:"good_frames,omitempty"`
	ResultCode        *cardiac.Code        `json:"result_code,omitempty"`
	ResultDescription string               `json:"result_description,omitempty"`
	FrameResult       *FrameResult         `json:"frame_result,omitempty"`
	RectifiedImage    string               `json:"rectified_image,omitempty"`
	Prediction        *api.CardiacResponse `json:"prediction,omitempty"`
	Error             string               `json:"error,omitempty"`
	ModelVersion      string               `json:"model_version,omitempty"`
	Billing           *api.Billing         `json:"billing,omitempty"`
}

// FrameOutcome is one frame's outcome. Its fields are app.FrameOutcome's,
// in its order, so the adapter converts one to the other
// (FrameOutcome(o)).
type FrameOutcome struct {
	Status          string
	FrameIndex      int
	FramesProcessed int
	GoodFrames      int
	Reason          string
	Result          *cardiac.Result
	Rectified       []byte
	Rendered        []byte
	Error           string
}

// NewFrameBody is the /v3/pop-session body of one frame outcome with its
// billing (nil for none): continue carries the reason, counts and
// frame_result; complete the prediction (with rendered_image when
// out.Rendered is set) and rectified_image; failed the error.
func NewFrameBody(sessionID string, out FrameOutcome, modelVersion string, billing *api.Billing) (*FrameBody, error) {
	body := &FrameBody{SessionID: sessionID, SessionStatus: out.Status, FrameIndex: out.FrameIndex, Billing: billing}
	switch out.Status {
	case StatusContinue:
		body.Reason = out.Reason
		body.FramesProcessed, body.GoodFrames = &out.FramesProcessed, &out.GoodFrames
		body.ModelVersion = modelVersion
		code := cardiac.CodeNoLandmarks
		fr := &FrameResult{ModelConfidence: string(cardiac.ConfidenceReview)}
		if r := out.Result; r != nil {
			code = r.Code
			fr = &FrameResult{VHS: r.VHS, VLAS: r.VLAS, LandmarksDetected: r.LandmarksDetected, PopDetected: r.PopDetected}
			fr.Spread, fr.ModelConfidence = api.SpreadConfidence(r)
			if fr.ModelConfidence == "" {
				fr.ModelConfidence = string(cardiac.ConfidenceReview)
			}
		}
		body.ResultCode, body.ResultDescription, body.FrameResult = &code, code.Description(), fr
	case StatusComplete:
		if out.Result == nil {
			return nil, errors.New("complete without a result")
		}
		r := *out.Result
		r.Rendered = out.Rendered
		resp := api.NewCardiacResponse(&r, modelVersion)
		body.Prediction = &resp
		body.RectifiedImage = base64.StdEncoding.EncodeToString(out.Rectified)
	case StatusFailed:
		body.Error = out.Error
	default:
		return nil, fmt.Errorf("unknown status %q", out.Status)
	}
	return body, nil
}
