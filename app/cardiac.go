package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"time"

	"vetlens/api"
	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/internal/membudget"
	"vetlens/internal/stats"
)

// ErrCardiacUnavailable means the cardiac models are not loaded (503).
var ErrCardiacUnavailable = &Error{Kind: KindUnavailable, Msg: "cardiac models not loaded"}

// SingleBody is the single-image prediction response: the engine's body
// plus history and billing. HistoricVHS/VLAS hold the JSON `null` without
// a uuid, an array with one, and are omitted on rejection (code 6).
type SingleBody struct {
	api.CardiacResponse
	HistoricVHS  json.RawMessage `json:"historic_vhs,omitempty"`
	HistoricVLAS json.RawMessage `json:"historic_vlas,omitempty"`
	Billing      Billing         `json:"billing"`
}

// decodeImage decodes JPEG/PNG bytes, mapping imageproc's sentinels:
// ErrTooLarge is KindTooLarge (413), the rest KindInvalid (400).
func decodeImage(b []byte) (image.Image, error) {
	img, _, err := imageproc.Decode(b)
	if err == nil {
		return img, nil
	}
	if mapped := imageError(err); mapped != err {
		return nil, mapped
	}
	return nil, &Error{Kind: KindInvalid, Msg: "image is not a usable JPEG, PNG or DICOM", Err: err}
}

// imageError maps an error wrapping imageproc's sentinels to the API's
// kinds: ErrTooLarge is KindTooLarge (413), the other sentinels
// KindInvalid (400); any other error is returned unchanged.
func imageError(err error) error {
	if errors.Is(err, imageproc.ErrTooLarge) {
		return &Error{Kind: KindTooLarge, Msg: "image too large", Err: err}
	}
	for _, bad := range []error{imageproc.ErrEmpty, imageproc.ErrFormat, imageproc.ErrCorrupt, imageproc.ErrTooSmall} {
		if errors.Is(err, bad) {
			return &Error{Kind: KindInvalid, Msg: "image is not a usable JPEG, PNG or DICOM", Err: err}
		}
	}
	return err
}

// DecodeImage is decodeImage for the transports (corners, rectify).
func DecodeImage(b []byte) (image.Image, error) { return decodeImage(b) }

// popBytesPerPixel is what an image passed to the PoP pipeline reserves
// per pixel: OpenCV's BGR frame (3 bytes), its grey copy (1), the grey
// copy corner detection reads in Go (1) and the working copies of
// detection and rectification. Measured on /v3/corners with 8 concurrent
// 8 MP PNGs and no budget: RSS +610 MB, 9.5 bytes per pixel (issue 13:
// about 320 MB for a 39.7 MP PNG, 8). The Go decode and render of a
// screen-aware prediction (at most 4 + 4) fit in it too.
const popBytesPerPixel = 10

// renderBytesPerPixel is what rendering the annotated image adds (an RGBA
// copy of the image).
const renderBytesPerPixel = 4

// busyRetryAfter is the Retry-After of a KindBusy error.
const busyRetryAfter = 2 * time.Second

// reservePixels takes n bytes from the pixel memory budget, waiting
// Config.PixelWait at most: KindBusy (503 with Retry-After) when there
// is no room by then.
func (s *measurer) reservePixels(ctx context.Context, n int64) (release func(), err error) {
	release, err = s.pixels.Reserve(ctx, n)
	switch {
	case errors.Is(err, membudget.ErrExhausted):
		return nil, &Error{Kind: KindBusy, Msg: "server busy: the image memory budget is in use; retry shortly", Err: err, RetryAfter: busyRetryAfter}
	case err != nil:
		return nil, fmt.Errorf("reserve image memory: %w", err)
	}
	return release, nil
}

// decodeReserved reserves what decoding b needs (from its header, plus
// extraPerPixel bytes per pixel for what the caller does with it) and
// decodes it. release gives the reservation back once the pixels are no
// longer used; on error nothing is held.
func (s *measurer) decodeReserved(ctx context.Context, b []byte, extraPerPixel int64) (img image.Image, release func(), err error) {
	cfg, need, err := imageproc.DecodeCost(b)
	if err != nil {
		if mapped := imageError(err); mapped != err {
			return nil, nil, mapped
		}
		return nil, nil, &Error{Kind: KindInvalid, Msg: "image is not a usable JPEG, PNG or DICOM", Err: err}
	}
	release, err = s.reservePixels(ctx, need+extraPerPixel*int64(cfg.Width)*int64(cfg.Height))
	if err != nil {
		return nil, nil, err
	}
	img, err = decodeImage(b)
	if err != nil {
		release()
		return nil, nil, err
	}
	return img, release, nil
}

// reservePoP checks the header of an image for the PoP pipeline
// (checkImageHeader) and reserves popBytesPerPixel for each of its pixels.
func (s *measurer) reservePoP(ctx context.Context, b []byte) (image.Config, func(), error) {
	cfg, err := checkImageHeader(b)
	if err != nil {
		return cfg, nil, err
	}
	release, err := s.reservePixels(ctx, int64(cfg.Width)*int64(cfg.Height)*popBytesPerPixel)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, release, nil
}

// PredictSingle measures one image: prediction, history for the uuid and
// billing (call type single). History is read before this measurement is
// added, so historic_* hold the earlier values.
func (s *Cardiac) PredictSingle(ctx context.Context, c Caller, req *CardiacRequest) (*SingleBody, error) {
	ctx = withSlotKey(ctx, c)
	if s.cardiac == nil {
		return nil, ErrCardiacUnavailable
	}
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	if len(req.Images) != 1 || req.Batch {
		return nil, errf(KindInvalid, "single prediction needs exactly one image")
	}
	res, err := s.measureSingle(ctx, req.Images[0], cardiac.PredictOptions{Render: req.Render})
	if err != nil {
		return nil, err
	}
	return s.finishSingle(ctx, c, req.UUID, res, CallSingle)
}

// measureSingle measures one image: through Deps.PoPPredictor when one is
// wired, else decoded and measured as it is.
func (s *measurer) measureSingle(ctx context.Context, b []byte, o cardiac.PredictOptions) (*cardiac.Result, error) {
	if s.popPredict != nil {
		return s.predictScreenAware(ctx, s.popPredict, b, o)
	}
	extra := int64(0)
	if o.Render {
		extra = renderBytesPerPixel
	}
	img, release, err := s.decodeReserved(ctx, b, extra)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := s.predictImage(ctx, img, o)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	return res, nil
}

// PoPPredictor is the port of a PoP pipeline that measures one image,
// correcting it first when it is a photograph of a screen (pop_detected;
// result code 7 when the correction fails). Single predictions use it
// when Deps.PoPPredictor is set (cli wires capture.Service).
type PoPPredictor interface {
	Predict(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, error)
}

// predictScreenAware runs a PoPPredictor in a cardiac slot, after the
// same header checks as any other image, holding the image's reservation
// of the pixel budget.
func (s *measurer) predictScreenAware(ctx context.Context, pp PoPPredictor, img []byte, o cardiac.PredictOptions) (*cardiac.Result, error) {
	_, release, err := s.reservePoP(ctx, img)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := s.inCardiacSlot(ctx, func() (*cardiac.Result, error) { return pp.Predict(ctx, img, o) })
	if err != nil {
		if mapped := imageError(err); mapped != err {
			return nil, mapped
		}
		return nil, fmt.Errorf("predict: %w", err)
	}
	return res, nil
}

// predictImage runs one cardiac prediction when one of the
// Config.CardiacConcurrency slots is free, waiting (or giving up with the
// context) otherwise. Each prediction already uses every core, so running
// more at once only adds memory and thread contention; a batch takes a
// slot per image, so single requests interleave with long batches.
func (s *measurer) predictImage(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	return s.inCardiacSlot(ctx, func() (*cardiac.Result, error) { return s.cardiac.Predict(ctx, img, o) })
}

// inCardiacSlot runs predict once a cardiac slot is free (see
// predictImage). Waiting callers are served per API key in turn
// (internal/fairgate), so one key's queue of requests cannot keep another
// key waiting behind all of it.
func (s *measurer) inCardiacSlot(ctx context.Context, predict func() (*cardiac.Result, error)) (*cardiac.Result, error) {
	release, err := s.cardiacSlots.Acquire(ctx, slotKey(ctx))
	if err != nil {
		return nil, err
	}
	defer release()
	return predict()
}

// slotKeyCtx carries the API key prefix a cardiac slot is requested for.
type slotKeyCtx struct{}

// withSlotKey marks ctx as a request of the caller's key, for the turn
// taking of cardiac slots; the desktop and local commands share the empty key.
func withSlotKey(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, slotKeyCtx{}, c.KeyPrefix)
}

func slotKey(ctx context.Context) string {
	k, _ := ctx.Value(slotKeyCtx{}).(string)
	return k
}

// finishSingle adds history and billing to one result.
func (s *Cardiac) finishSingle(ctx context.Context, c Caller, uuid string, res *cardiac.Result, callType string) (*SingleBody, error) {
	body := &SingleBody{CardiacResponse: api.NewCardiacResponse(res, s.cardiac.ModelVersion())}
	if res.Code != cardiac.CodeRejected {
		hv, hl, err := s.history(ctx, c, uuid)
		if err != nil {
			return nil, err
		}
		body.HistoricVHS, body.HistoricVLAS = hv, hl
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	body.Billing = s.accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: callType, Valid: ValidCode(res.Code), UUID: uuid})
	if err := s.record(ctx, c, uuid, ValidCode(res.Code), res.VHS, res.VLAS); err != nil {
		return nil, err
	}
	return body, nil
}

// MaxHistoric bounds historic_vhs and historic_vlas in a response: each
// holds the MaxHistoric most recent earlier values (oldest first), so a
// uuid measured hundreds of times does not grow every response with it
// (issue 46: 299 rechecks grew one from 694 B to 12.6 KB). The store
// keeps every entry.
const MaxHistoric = 50

// history returns the historic_vhs and historic_vlas values: JSON null
// without a uuid, else [[YYYY-MM-DD, value], ...] oldest first, the
// MaxHistoric most recent of each, without the entries removed at the
// desktop or replaced by a correction.
func (s *Cardiac) history(ctx context.Context, c Caller, uuid string) (json.RawMessage, json.RawMessage, error) {
	if uuid == "" {
		return json.RawMessage("null"), json.RawMessage("null"), nil
	}
	hs, err := s.repos.History.List(ctx, c.Customer, uuid)
	if err != nil {
		return nil, nil, fmt.Errorf("history: %w", err)
	}
	vhs, vlas := [][2]any{}, [][2]any{}
	superseded := map[uint64]bool{}
	for _, h := range hs {
		if h.Supersedes != 0 && h.Hidden == nil { // a removed correction replaces nothing
			superseded[h.Supersedes] = true
		}
	}
	for _, h := range hs {
		if h.Hidden != nil || superseded[h.Seq] { // removed at the desktop, or corrected since
			continue
		}
		d := h.Time.UTC().Format("2006-01-02")
		if h.VHS != nil {
			vhs = append(vhs, [2]any{d, *h.VHS})
		}
		if h.VLAS != nil {
			vlas = append(vlas, [2]any{d, *h.VLAS})
		}
	}
	vhs, vlas = vhs[max(0, len(vhs)-MaxHistoric):], vlas[max(0, len(vlas)-MaxHistoric):]
	a, _ := json.Marshal(vhs)
	b, _ := json.Marshal(vlas)
	return a, b, nil
}

// record keeps a valid measurement (codes 1-4; valid is false otherwise) in the uuid's history.
func (s *Cardiac) record(ctx context.Context, c Caller, uuid string, valid bool, vhs, vlas *float64) error {
	if uuid == "" || !valid {
		return nil
	}
	if _, err := s.repos.History.Add(ctx, c.Customer, uuid, repo.HistoryEntry{Time: s.clock.Now().UTC(), VHS: vhs, VLAS: vlas}, nil); err != nil {
		return fmt.Errorf("record history: %w", err)
	}
	return nil
}

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
	if !math.IsNaN(r.Spread) && !math.IsInf(r.Spread, 0) {
		sp := r.Spread
		p.Spread = &sp
		p.ModelConfidence = string(r.Confidence)
	} else {
		p.ModelConfidence = string(cardiac.ConfidenceReview)
	}
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
