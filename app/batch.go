package app

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"

	"vetlens/engine/cardiac"
	"vetlens/internal/stats"
)

// Summary is the batch-level result (the stream's summary event). Its
// wire body is api.Summary, a conversion of this.
type Summary struct {
	BestVHS              *float64
	BestVLAS             *float64
	MedianVHS            *float64
	MedianVLAS           *float64
	VHSStd               *float64
	VLASStd              *float64
	VHSConfidence        string
	VLASConfidence       string
	BestPhotoIndex       *int
	NPhotosProcessed     int
	NPhotosWithLandmarks int
}

// BatchAnswer is a batch prediction: each image's result, the summary,
// the uuid's earlier values and how the batch was metered. Its wire body
// is api.BatchBody (api.NewBatchBody), whose vhs and vlas are the
// summary's best.
type BatchAnswer struct {
	// Results are the images' results in order; nil for an image that
	// could not be decoded (a rejected photo, invalid_image).
	Results      []*cardiac.Result
	Summary      Summary
	Historic     Historic
	ModelVersion string
	Billing      Billing
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
	// Photo reports image index of n, measured (never nil).
	Photo(index, n int, modelVersion string, r *cardiac.Result) error
	ImageError(index int, uuid string, err error) error
	Summary(s Summary) error
	Billing(b Billing) error
}

// PredictBatch measures the images one by one, summarizes and bills the
// batch once at the session rate when any image gave a valid VHS. With
// events non-nil (the stream) it reports progress and per-image errors;
// otherwise a bad image is already refused by cardiacv3.ReadCardiacRequest (strict)
// and a pixel-level decode failure is reported as a rejected photo with
// rejection_reason "invalid_image". Batch mode never renders images.
func (s *Cardiac) PredictBatch(ctx context.Context, c Caller, req *CardiacRequest, events StreamEvents) (*BatchAnswer, error) {
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
	var results []*cardiac.Result // nil for a failed image
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
			results = append(results, nil)
			continue
		}
		res, err := s.predictImage(ctx, img, cardiac.PredictOptions{})
		release()
		if err != nil {
			return nil, fmt.Errorf("predict images[%d]: %w", i, err)
		}
		results = append(results, res)
		if events != nil {
			if err := events.Photo(i, n, mv, res); err != nil {
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
	h, err := s.history(ctx, c, req.UUID)
	if err != nil {
		return nil, err
	}
	body := &BatchAnswer{Results: results, Summary: sum, Historic: h, ModelVersion: mv}
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
