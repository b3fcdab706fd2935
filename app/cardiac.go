package app

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/internal/membudget"
)

// ErrCardiacUnavailable means the cardiac models are not loaded (503).
var ErrCardiacUnavailable = &Error{Kind: KindUnavailable, Msg: "cardiac models not loaded"}

// SingleAnswer is a single-image prediction: the engine's result, the
// uuid's earlier values and how the call was metered. Its wire body is
// api.SingleBody.
type SingleAnswer struct {
	Result       *cardiac.Result
	ModelVersion string
	// Historic is the uuid's earlier values; nil on rejection (code 6),
	// whose body has no historic fields.
	Historic *Historic
	Billing  Billing
}

// Historic is a uuid's earlier valid values (historic_vhs,
// historic_vlas): oldest first, the MaxHistoric most recent of each; both
// nil without a uuid.
type Historic struct {
	VHS, VLAS []Dated
}

// Dated is one earlier value and its day (YYYY-MM-DD, UTC).
type Dated struct {
	Day   string
	Value float64
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
func (s *Cardiac) PredictSingle(ctx context.Context, c Caller, req *CardiacRequest) (*SingleAnswer, error) {
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

// measureSingle measures one image: through Deps.PoPMeasurer when one is
// wired, else decoded and measured as it is.
func (s *measurer) measureSingle(ctx context.Context, b []byte, o cardiac.PredictOptions) (*cardiac.Result, error) {
	if s.popMeasure != nil {
		res, _, err := s.measureScreenAware(ctx, b, o)
		return res, err
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

// PoPMeasurer is the port of a PoP pipeline that measures one image,
// correcting it first when it is a photograph of a screen (pop_detected;
// result code 7 when the correction fails), and returns the image the
// result's positions refer to (the rectified display area of a corrected
// screen photo; nil for code 7). The single predictions (API and
// `vetlens predict`) and the desktop's measurement use it when
// Deps.PoPMeasurer is set (cli wires capture.Service).
type PoPMeasurer interface {
	Measure(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error)
}

// measureScreenAware runs the PoPMeasurer in a cardiac slot, after the
// same header checks as any other image, holding the image's reservation
// of the pixel budget.
func (s *measurer) measureScreenAware(ctx context.Context, b []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error) {
	_, release, err := s.reservePoP(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	var shown image.Image
	res, err := s.inCardiacSlot(ctx, func() (*cardiac.Result, error) {
		r, img, err := s.popMeasure.Measure(ctx, b, o)
		shown = img
		return r, err
	})
	if err != nil {
		if mapped := imageError(err); mapped != err {
			return nil, nil, mapped
		}
		return nil, nil, fmt.Errorf("measure: %w", err)
	}
	return res, shown, nil
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
func (s *Cardiac) finishSingle(ctx context.Context, c Caller, uuid string, res *cardiac.Result, callType string) (*SingleAnswer, error) {
	body := &SingleAnswer{Result: res, ModelVersion: s.cardiac.ModelVersion()}
	if res.Code != cardiac.CodeRejected {
		h, err := s.history(ctx, c, uuid)
		if err != nil {
			return nil, err
		}
		body.Historic = &h
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

// history returns the historic_vhs and historic_vlas values: nil without
// a uuid, else oldest first, the MaxHistoric most recent of each, without
// the entries removed at the desktop or replaced by a correction.
func (s *Cardiac) history(ctx context.Context, c Caller, uuid string) (Historic, error) {
	if uuid == "" {
		return Historic{}, nil
	}
	hs, err := s.repos.History.List(ctx, c.Customer, uuid)
	if err != nil {
		return Historic{}, fmt.Errorf("history: %w", err)
	}
	vhs, vlas := []Dated{}, []Dated{}
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
			vhs = append(vhs, Dated{d, *h.VHS})
		}
		if h.VLAS != nil {
			vlas = append(vlas, Dated{d, *h.VLAS})
		}
	}
	return Historic{VHS: vhs[max(0, len(vhs)-MaxHistoric):], VLAS: vlas[max(0, len(vlas)-MaxHistoric):]}, nil
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
