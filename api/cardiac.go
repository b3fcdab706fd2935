// Package api holds the wire bodies of the specs (cardiac v3) that more
// than one front door prints: the HTTP adapter (through app) and `vetlens
// predict` give the same JSON because they build it here. The engines
// return domain results (cardiac.Result); this package is the one place
// that turns them into the spec's shape: which fields are present, their
// names and their rounding.
//
// Its subpackages hold the rest of the wire layer: cardiacv3 (the cardiac
// spec's error body, image field, one-image PoP request body and the PoP
// session's start and frame bodies), usgv1
// (the USG spec's request parser, error codes and error body) and
// errstatus (the one error → HTTP status table of both specs).
package api

import (
	"encoding/base64"
	"math"

	"vetlens/engine/cardiac"
)

// Landmark is one entry of the spec's `prediction` array: a position
// normalized by the image width and height (0..1) and its class name.
type Landmark struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Class string  `json:"class"`
}

// CardiacResponse is the single-image prediction body of the cardiac v3
// spec without the fields that need storage (billing, historic_vhs,
// historic_vlas). For result code 6 it is the rejection body (less
// billing). Fields the spec omits carry omitempty; vhs and vlas are always
// present and null when not measured.
//
// SingleBody adds the storage fields by embedding, which encoding/json
// flattens into one object.
type CardiacResponse struct {
	VHS               *float64           `json:"vhs"`
	VLAS              *float64           `json:"vlas"`
	Prediction        []Landmark         `json:"prediction,omitempty"`
	ResultCode        cardiac.Code       `json:"result_code"`
	ResultDescription string             `json:"result_description"`
	ModelConfidence   cardiac.Confidence `json:"model_confidence,omitempty"`
	Spread            *float64           `json:"spread,omitempty"`
	PopDetected       *bool              `json:"pop_detected,omitempty"`
	ModelVersion      string             `json:"model_version"`
	RenderedImage     string             `json:"rendered_image,omitempty"`

	// Rejection body only (result code 6).
	ClassifierConfidence *float64 `json:"classifier_confidence,omitempty"`
	Rejected             bool     `json:"rejected,omitempty"`
	RejectionReason      string   `json:"rejection_reason,omitempty"`
}

// NewCardiacResponse builds the spec body for a result. modelVersion is
// the manifest's cardiac model_version (Engine.ModelVersion).
//
// Omission rules: a rejected result (code 6) carries only vhs/vlas (null),
// result_code, result_description, model_version, classifier_confidence,
// rejected and rejection_reason. Otherwise prediction, model_confidence,
// spread and pop_detected are present, except that prediction is omitted
// when no landmarks were computed or a coordinate is not finite, and
// spread and model_confidence when the spread is not finite (code 0 only:
// JSON has no NaN). rendered_image is present when Result.Rendered is set.
func NewCardiacResponse(r *cardiac.Result, modelVersion string) CardiacResponse {
	resp := CardiacResponse{
		VHS:               r.VHS,
		VLAS:              r.VLAS,
		ResultCode:        r.Code,
		ResultDescription: r.Code.Description(),
		ModelVersion:      modelVersion,
	}
	if r.Code == cardiac.CodeRejected {
		c := cardiac.Round(r.ClassifierConfidence, cardiac.DecimalsClassifier)
		resp.ClassifierConfidence = &c
		resp.Rejected = true
		resp.RejectionReason = cardiac.RejectionReason
		resp.VHS, resp.VLAS = nil, nil
		return resp
	}
	pop := r.PopDetected
	resp.PopDetected = &pop
	if isFinite(r.Spread) {
		s := r.Spread
		resp.Spread = &s
		resp.ModelConfidence = r.Confidence
	}
	resp.Prediction = Landmarks(r)
	if len(r.Rendered) > 0 {
		resp.RenderedImage = base64.StdEncoding.EncodeToString(r.Rendered)
	}
	return resp
}

// Landmarks returns the 7 ensemble landmarks of r in the spec's form: x
// and y divided by the image width and height (0..1), rounded to
// cardiac.DecimalsCoordinate, with the spec's class names, in model order.
// It is nil when no landmarks were computed (rejection) or any coordinate
// is not finite.
func Landmarks(r *cardiac.Result) []Landmark {
	if len(r.ModelLandmarks) == 0 {
		return nil
	}
	out := make([]Landmark, cardiac.NumLandmarks)
	for k, p := range r.Landmarks {
		x, y := p.X/float64(r.Width), p.Y/float64(r.Height)
		if !isFinite(x) || !isFinite(y) {
			return nil
		}
		out[k] = Landmark{X: cardiac.Round(x, cardiac.DecimalsCoordinate), Y: cardiac.Round(y, cardiac.DecimalsCoordinate), Class: cardiac.ClassNames[k]}
	}
	return out
}

// SpreadConfidence is a result's spread and model_confidence as the
// per-photo and frame bodies carry them: the spread when it is finite
// (JSON has no NaN) with the ensemble's confidence, else no spread and
// "review"; a rejected result (code 6) has neither spread nor confidence
// ("").
func SpreadConfidence(r *cardiac.Result) (*float64, string) {
	if r.Code == cardiac.CodeRejected {
		return nil, ""
	}
	if !isFinite(r.Spread) {
		return nil, string(cardiac.ConfidenceReview)
	}
	s := r.Spread
	return &s, string(r.Confidence)
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
