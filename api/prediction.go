package api

import (
	"encoding/json"

	"vetlens/engine/cardiac"
)

// Dated is one entry of historic_vhs or historic_vlas: an earlier value
// of the uuid and its day (YYYY-MM-DD, UTC), written [day, value].
type Dated struct {
	Day   string
	Value float64
}

// MarshalJSON writes [day, value].
func (d Dated) MarshalJSON() ([]byte, error) { return json.Marshal([2]any{d.Day, d.Value}) }

// SingleBody is the single-image prediction response: the engine's body
// plus history and billing. HistoricVHS/VLAS hold a JSON null without a
// uuid (a nil slice), an array with one, and are omitted on rejection
// (code 6: nil pointers, SetHistoric not called).
type SingleBody struct {
	CardiacResponse
	HistoricVHS  *[]Dated `json:"historic_vhs,omitempty"`
	HistoricVLAS *[]Dated `json:"historic_vlas,omitempty"`
	Billing      Billing  `json:"billing"`
}

// SetHistoric sets historic_vhs and historic_vlas: nil slices are a
// JSON null (no uuid), empty ones [] (a uuid without earlier values).
func (b *SingleBody) SetHistoric(vhs, vlas []Dated) { b.HistoricVHS, b.HistoricVLAS = &vhs, &vlas }

// PhotoResult is one per_photo entry (and the body of a stream photo
// event, with Index, NTotal and ModelVersion set: NewPhotoEvent).
type PhotoResult struct {
	Index                *int     `json:"index,omitempty"`
	VHS                  *float64 `json:"vhs"`
	VLAS                 *float64 `json:"vlas"`
	Spread               *float64 `json:"spread"`
	ModelConfidence      string   `json:"model_confidence,omitempty"`
	LandmarksDetected    bool     `json:"landmarks_detected"`
	AxesPerpendicular    bool     `json:"axes_perpendicular"`
	PopDetected          *bool    `json:"pop_detected,omitempty"`
	Rejected             bool     `json:"rejected,omitempty"`
	RejectionReason      string   `json:"rejection_reason,omitempty"`
	ClassifierConfidence *float64 `json:"classifier_confidence,omitempty"`
	NTotal               *int     `json:"n_total,omitempty"`
	ModelVersion         string   `json:"model_version,omitempty"`
}

// InvalidImage is the rejection_reason of a batch image that could not
// be decoded.
const InvalidImage = "invalid_image"

// NewPhotoResult is the per_photo entry of one batch image's result; r
// nil is an image that could not be decoded (rejected, invalid_image).
func NewPhotoResult(r *cardiac.Result) PhotoResult {
	if r == nil {
		zero := 0.0
		return PhotoResult{Rejected: true, RejectionReason: InvalidImage, ClassifierConfidence: &zero}
	}
	if r.Code == cardiac.CodeRejected {
		cc := cardiac.Round(r.ClassifierConfidence, cardiac.DecimalsClassifier)
		return PhotoResult{Rejected: true, RejectionReason: cardiac.RejectionReason, ClassifierConfidence: &cc}
	}
	p := PhotoResult{VHS: r.VHS, VLAS: r.VLAS, LandmarksDetected: r.LandmarksDetected, AxesPerpendicular: r.AxesPerpendicular}
	p.Spread, p.ModelConfidence = SpreadConfidence(r)
	if r.LandmarksDetected {
		pop := r.PopDetected
		p.PopDetected = &pop
	}
	return p
}

// NewPhotoEvent is the stream's photo event of image index of n: its
// per_photo entry with index, n_total and model_version, without
// pop_detected (not a field of the spec's photo event).
func NewPhotoEvent(r *cardiac.Result, index, n int, modelVersion string) PhotoResult {
	p := NewPhotoResult(r)
	p.Index, p.NTotal, p.ModelVersion = &index, &n, modelVersion
	p.PopDetected = nil
	return p
}

// Summary is the batch-level result (the stream's summary event). Its
// fields are app.Summary's, in its order, so the adapter converts one to
// the other (Summary(s)).
type Summary struct {
	BestVHS              *float64 `json:"best_vhs"`
	BestVLAS             *float64 `json:"best_vlas"`
	MedianVHS            *float64 `json:"median_vhs"`
	MedianVLAS           *float64 `json:"median_vlas"`
	VHSStd               *float64 `json:"vhs_std"`
	VLASStd              *float64 `json:"vlas_std"`
	VHSConfidence        string   `json:"vhs_confidence"`
	VLASConfidence       string   `json:"vlas_confidence"`
	BestPhotoIndex       *int     `json:"best_photo_index"`
	NPhotosProcessed     int      `json:"n_photos_processed"`
	NPhotosWithLandmarks int      `json:"n_photos_with_landmarks"`
}

// BatchBody is the batch prediction response.
type BatchBody struct {
	VHS  *float64 `json:"vhs"`
	VLAS *float64 `json:"vlas"`
	Summary
	ProcessingStarted bool          `json:"processing_started"`
	PerPhoto          []PhotoResult `json:"per_photo"`
	HistoricVHS       []Dated       `json:"historic_vhs"`
	HistoricVLAS      []Dated       `json:"historic_vlas"`
	ModelVersion      string        `json:"model_version"`
	Billing           Billing       `json:"billing"`
}

// NewBatchBody is the batch response of the images' results in order (nil
// for an image that could not be decoded), their summary, the uuid's
// earlier values (nil slices: no uuid, a JSON null) and the billing. vhs
// and vlas are the summary's best.
func NewBatchBody(results []*cardiac.Result, sum Summary, historicVHS, historicVLAS []Dated, modelVersion string, billing Billing) BatchBody {
	photos := make([]PhotoResult, 0, len(results))
	for _, r := range results {
		photos = append(photos, NewPhotoResult(r))
	}
	return BatchBody{VHS: sum.BestVHS, VLAS: sum.BestVLAS, Summary: sum, ProcessingStarted: true, PerPhoto: photos,
		HistoricVHS: historicVHS, HistoricVLAS: historicVLAS, ModelVersion: modelVersion, Billing: billing}
}
