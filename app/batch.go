package app

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"slices"

	"vetlens/api"
	"vetlens/engine/cardiac"
	"vetlens/internal/stats"
)

// PhotoResult is one per_photo entry (and the body of a stream photo
// event, with Index, NTotal and ModelVersion set).
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

// Summary is the batch-level result (the stream's summary event).
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
	ProcessingStarted bool            `json:"processing_started"`
	PerPhoto          []PhotoResult   `json:"per_photo"`
	HistoricVHS       json.RawMessage `json:"historic_vhs"`
	HistoricVLAS      json.RawMessage `json:"historic_vlas"`
	ModelVersion      string          `json:"model_version"`
	Billing           Billing         `json:"billing"`
}

// Batch-level confidence: the level of the median spread of the photos
// with landmarks, lowered one step (optimal to good, good to review) when
// the measure's standard deviation across photos exceeds these bounds.
const (
	BatchVHSStdBound  = 0.3
	BatchVLASStdBound = 0.15
)

// StreamEvents receives the stream's events as they happen. A non-nil
// error (the client went away) stops the batch; nothing is billed.
type StreamEvents interface {
	Started(nImages int, modelVersion string) error
	Photo(p PhotoResult) error
	ImageError(index int, uuid string, err error) error
	Summary(s Summary) error
	Billing(b Billing) error
}

// PredictBatch measures the images one by one, summarizes and bills the
// batch once at the session rate when any image gave a valid VHS. With
// events non-nil (the stream) it reports progress and per-image errors;
// otherwise a bad image is already refused by ParseCardiacRequest (strict)
// and a pixel-level decode failure is reported as a rejected photo with
// rejection_reason "invalid_image". Batch mode never renders images.
func (s *Cardiac) PredictBatch(ctx context.Context, c Caller, req *CardiacRequest, events StreamEvents) (*BatchBody, error) {
	ctx = withSlotKey(ctx, c)
	if s.cardiac == nil {
		return nil, ErrCardiacUnavailable
	}
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	mv := s.cardiac.ModelVersion()
	n := len(req.Images)
	if events != nil {
		if err := events.Started(n, mv); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
	}
	var photos []PhotoResult
	var results []*cardiac.Result // parallel to photos; nil for a failed image
	for i, b := range req.Images {
		var imgErr error
		if i < len(req.ImageErrs) && req.ImageErrs[i] != nil {
			imgErr = req.ImageErrs[i]
		}
		var (
			img     image.Image
			release func()
		)
		if imgErr == nil {
			img, release, imgErr = s.decodeReserved(ctx, b, 0)
			if k := KindOf(imgErr); imgErr != nil && k != KindInvalid && k != KindTooLarge {
				// No room in the budget, or the context ended: not the image's fault.
				return nil, fmt.Errorf("images[%d]: %w", i, imgErr)
			}
		}
		if imgErr != nil {
			if events != nil {
				if err := events.ImageError(i, req.UUID, imgErr); err != nil {
					return nil, fmt.Errorf("stream: %w", err)
				}
			}
			zero := 0.0
			photos = append(photos, PhotoResult{Rejected: true, RejectionReason: "invalid_image", ClassifierConfidence: &zero})
			results = append(results, nil)
			continue
		}
		res, err := s.predictImage(ctx, img, cardiac.PredictOptions{})
		release()
		if err != nil {
			return nil, fmt.Errorf("predict images[%d]: %w", i, err)
		}
		p := photoOf(res)
		photos = append(photos, p)
		results = append(results, res)
		if events != nil {
			idx, nt := i, n
			p.Index, p.NTotal, p.ModelVersion = &idx, &nt, mv
			p.PopDetected = nil // not a field of the spec's photo event
			if err := events.Photo(p); err != nil {
				return nil, fmt.Errorf("stream: %w", err)
			}
		}
	}
	sum := summarize(results)
	if events != nil {
		if err := events.Summary(sum); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
	}
	body := &BatchBody{Summary: sum, ProcessingStarted: true, PerPhoto: photos, ModelVersion: mv}
	if body.PerPhoto == nil {
		body.PerPhoto = []PhotoResult{}
	}
	if sum.BestPhotoIndex != nil {
		best := results[*sum.BestPhotoIndex]
		body.VHS, body.VLAS = best.VHS, sum.BestVLAS
	}
	hv, hl, err := s.history(ctx, c, req.UUID)
	if err != nil {
		return nil, err
	}
	body.HistoricVHS, body.HistoricVLAS = hv, hl
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("predict batch: %w", err)
	}
	valid := sum.NPhotosWithLandmarks > 0
	body.Billing = s.accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: valid, UUID: req.UUID})
	if valid {
		if err := s.record(ctx, c, req.UUID, true, sum.BestVHS, sum.BestVLAS); err != nil {
			return nil, err
		}
	}
	if events != nil {
		if err := events.Billing(body.Billing); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
	}
	return body, nil
}

func photoOf(r *cardiac.Result) PhotoResult {
	if r.Code == cardiac.CodeRejected {
		cc := cardiac.Round(r.ClassifierConfidence, cardiac.DecimalsClassifier)
		return PhotoResult{Rejected: true, RejectionReason: cardiac.RejectionReason, ClassifierConfidence: &cc}
	}
	p := PhotoResult{VHS: r.VHS, VLAS: r.VLAS, LandmarksDetected: r.LandmarksDetected, AxesPerpendicular: r.AxesPerpendicular}
	p.Spread, p.ModelConfidence = api.SpreadConfidence(r)
	if r.LandmarksDetected {
		pop := r.PopDetected
		p.PopDetected = &pop
	}
	return p
}

// summarize applies the batch rules. Best image: among images with a
// valid VHS, the lowest result code (1 before 4: more confidence, VLAS
// present), then the lowest spread, then the lowest index. best_vlas is
// the VLAS of the best image among those with a VLAS. Medians over the
// images with a value; standard deviations (population) are null below 2
// values; the batch confidences follow BatchVHSStdBound/BatchVLASStdBound
// and are "review" when no image has the value.
func summarize(rs []*cardiac.Result) Summary {
	var sum Summary
	var withVHS, withVLAS []cand
	for i, r := range rs {
		if r == nil {
			continue
		}
		sum.NPhotosProcessed++
		if r.LandmarksDetected && r.VHS != nil {
			sum.NPhotosWithLandmarks++
			withVHS = append(withVHS, cand{i, r})
			if r.VLAS != nil {
				withVLAS = append(withVLAS, cand{i, r})
			}
		}
	}
	better := func(a, b cand) int {
		if a.r.Code != b.r.Code {
			return int(a.r.Code) - int(b.r.Code)
		}
		if a.r.Spread != b.r.Spread {
			if a.r.Spread < b.r.Spread {
				return -1
			}
			return 1
		}
		return a.i - b.i
	}
	slices.SortStableFunc(withVHS, better)
	slices.SortStableFunc(withVLAS, better)
	sum.VHSConfidence, sum.VLASConfidence = string(cardiac.ConfidenceReview), string(cardiac.ConfidenceReview)
	if len(withVHS) > 0 {
		i := withVHS[0].i
		sum.BestPhotoIndex = &i
		sum.BestVHS = withVHS[0].r.VHS
		sum.MedianVHS, sum.VHSStd, sum.VHSConfidence = seriesStats(withVHS, func(r *cardiac.Result) float64 { return *r.VHS }, BatchVHSStdBound)
	}
	if len(withVLAS) > 0 {
		sum.BestVLAS = withVLAS[0].r.VLAS
		sum.MedianVLAS, sum.VLASStd, sum.VLASConfidence = seriesStats(withVLAS, func(r *cardiac.Result) float64 { return *r.VLAS }, BatchVLASStdBound)
	}
	return sum
}

// cand is one batch image with its index.
type cand struct {
	i int
	r *cardiac.Result
}

// seriesStats gives one measure's batch median (rounded), standard
// deviation and batch-level confidence over the images that have it.
func seriesStats(cs []cand, get func(*cardiac.Result) float64, stdBound float64) (*float64, *float64, string) {
	vals, spreads := make([]float64, 0, len(cs)), make([]float64, 0, len(cs))
	for _, c := range cs {
		vals = append(vals, get(c.r))
		spreads = append(spreads, c.r.Spread)
	}
	std := stdOf(vals)
	return ptr(cardiac.Round(median(vals), cardiac.DecimalsScore)), std, batchConfidence(median(spreads), std, stdBound)
}

func batchConfidence(medianSpread float64, std *float64, bound float64) string {
	c := cardiac.ConfidenceFor(medianSpread)
	if std != nil && *std > bound {
		switch c {
		case cardiac.ConfidenceOptimal:
			c = cardiac.ConfidenceGood
		default:
			c = cardiac.ConfidenceReview
		}
	}
	return string(c)
}

// median is the one median rule (stats.Median).
func median(v []float64) float64 { return stats.Median(v) }

func stdOf(v []float64) *float64 {
	if len(v) < 2 {
		return nil
	}
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return ptr(math.Round(math.Sqrt(ss/float64(len(v)))*1e3) / 1e3)
}

func ptr[T any](v T) *T { return &v }
