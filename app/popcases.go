package app

import (
	"context"
	"errors"
	"fmt"
	"image"

	"vetlens/engine/imageproc"
)

// ErrPoPUnavailable means the PoP pipeline is not loaded (503).
var ErrPoPUnavailable = &Error{Kind: KindUnavailable, Msg: "PoP pipeline not loaded"}

// SessionStart is a PoP session just opened (status ready), with what
// the start body reports beside it; its wire body is
// cardiacv3.SessionStart (cardiacv3.NewSessionStart).
type SessionStart struct {
	SessionID                     string
	SessionConfig                 SessionConfig
	ModelsLoaded, PopModelsLoaded int
	ModelVersion                  string
}

// FrameAnswer is what a session answers for one frame: its outcome, as
// the front door may show it (through the API a continue outcome's
// result has no VHS or VLAS: withholdFrameMeasurement), and how it was
// metered (nil for a continue frame, and when nothing is billed at all).
// Its wire body is cardiacv3.FrameBody (cardiacv3.NewFrameBody).
type FrameAnswer struct {
	SessionID    string
	Outcome      FrameOutcome
	ModelVersion string
	Billing      *Billing
}

func (s *measurer) modelVersion() string {
	if s.cardiac != nil {
		return s.cardiac.ModelVersion()
	}
	return ""
}

// checkImageHeader refuses, from the header alone, what is not a JPEG or
// PNG (400) or exceeds imageproc's pixel limits (413), for the endpoints
// that pass raw bytes to the PoP pipeline; it returns the header.
func checkImageHeader(b []byte) (image.Config, error) {
	cfg, _, err := imageproc.CheckHeader(b)
	switch {
	case err == nil:
		return cfg, nil
	case errors.Is(err, imageproc.ErrEmpty):
		return cfg, &Error{Kind: KindInvalid, Msg: "image is empty", Err: imageproc.ErrEmpty}
	case errors.Is(err, imageproc.ErrTooLarge):
		return cfg, &Error{Kind: KindTooLarge, Msg: "image too large", Err: err}
	case errors.Is(err, imageproc.ErrTooSmall):
		return cfg, &Error{Kind: KindInvalid, Msg: "image too small", Err: err}
	}
	if !errors.Is(err, imageproc.ErrFormat) && !errors.Is(err, imageproc.ErrCorrupt) {
		err = fmt.Errorf("%w: %w", imageproc.ErrFormat, err)
	}
	return cfg, &Error{Kind: KindInvalid, Msg: "image is not a usable JPEG, PNG or DICOM", Err: err}
}

// popErr maps a pipeline error: a bad image is 400, the rest internal.
func popErr(op string, err error) error {
	if errors.Is(err, imageproc.ErrCorrupt) || errors.Is(err, imageproc.ErrFormat) {
		return &Error{Kind: KindInvalid, Msg: "image could not be decoded", Err: err}
	}
	if errors.Is(err, ErrBadCorners) {
		return &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// StartSession opens a PoP capture session for the caller. Never billed.
func (s *Sessions) StartSession(ctx context.Context, c Caller) (*SessionStart, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	sess, err := s.pop.StartSession(ctx, SessionOwner{Customer: c.Customer, Key: c.KeyPrefix}, s.cfg.MaxOpenSessionsPerKey)
	if lim := (*SessionLimitError)(nil); errors.As(err, &lim) {
		return nil, &Error{Kind: KindTooMany, RetryAfter: lim.RetryAfter,
			Msg: fmt.Sprintf("too many open PoP sessions for this API key (limit %d); finish one or let it expire", s.cfg.MaxOpenSessionsPerKey)}
	}
	if err != nil {
		return nil, fmt.Errorf("start session: %w", err)
	}
	h := s.status.CardiacHealth()
	return &SessionStart{SessionID: sess.ID, SessionConfig: sess.Config,
		ModelsLoaded: h.ModelsLoaded, PopModelsLoaded: h.PopModelsLoaded, ModelVersion: s.modelVersion()}, nil
}

// SessionFrame feeds one frame (base64 already decoded) to a session.
// Continue responses carry no billing and no measurement (frame_result's
// vhs and vlas are null; withholdFrameMeasurement); complete is billed once at the
// session rate when the final result has a valid VHS; failed carries
// billing {billable false, reason no_valid_vhs} and is not billed. An
// unknown, expired or other customer's session is KindNotFound (404); a
// frame after complete or failed is KindConflict (409).
func (s *Sessions) SessionFrame(ctx context.Context, c Caller, sessionID string, frame []byte, uuid string) (*FrameAnswer, error) {
	body, _, err := s.sessionFrame(ctx, c, sessionID, frame, uuid, sessionAPI)
	return body, err
}

// sessionUse is who feeds a session's frames, which decides what a
// finished session leaves behind.
type sessionUse int

const (
	// sessionAPI: billed, and a complete session's valid result goes
	// into the uuid's history at once.
	sessionAPI sessionUse = iota
	// sessionDesktop: billed; the result is saved after review.
	sessionDesktop
	// sessionLocal (`vetlens capture`): neither billed nor recorded.
	sessionLocal
)

// sessionFrame is SessionFrame also returning the pipeline's outcome,
// for use.
func (s *Sessions) sessionFrame(ctx context.Context, c Caller, sessionID string, frame []byte, uuid string, use sessionUse) (*FrameAnswer, FrameOutcome, error) {
	var out FrameOutcome
	if s.pop == nil {
		return nil, out, ErrPoPUnavailable
	}
	if sessionID == "" {
		return nil, out, errf(KindInvalid, "session_id is required")
	}
	if _, err := checkImageHeader(frame); err != nil {
		return nil, out, err
	}
	if !s.pop.OwnsSession(sessionID, c.Customer) {
		return nil, out, &Error{Kind: KindNotFound, Msg: "unknown or expired session_id", Err: ErrSessionNotFound}
	}
	if err := s.disk.checkWritable(); err != nil {
		return nil, out, err
	}
	_, release, err := s.reservePoP(ctx, frame)
	if err != nil {
		return nil, out, err
	}
	out, err = s.pop.Frame(ctx, c.Customer, sessionID, frame)
	release()
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return nil, out, &Error{Kind: KindNotFound, Msg: "unknown or expired session_id", Err: err}
	case errors.Is(err, ErrSessionClosed):
		return nil, out, &Error{Kind: KindConflict, Msg: "session already completed or failed; start a new one", Err: err}
	case err != nil:
		return nil, out, popErr("session frame", err)
	}
	if err := out.check(); err != nil {
		return nil, out, fmt.Errorf("session frame: %w", err)
	}
	body := &FrameAnswer{SessionID: sessionID, Outcome: out, ModelVersion: s.modelVersion()}
	if use == sessionLocal {
		return body, out, nil
	}
	if use == sessionAPI {
		withholdFrameMeasurement(body)
	}
	switch out.Status {
	case StatusComplete:
		r := out.Result
		b := s.accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: ValidCode(r.Code), UUID: uuid})
		body.Billing = &b
		if use == sessionAPI {
			if err := s.cardiacUse.record(ctx, c, uuid, ValidCode(r.Code), r.VHS, r.VLAS); err != nil {
				return nil, out, err
			}
		}
	case StatusFailed:
		b := s.accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: false})
		body.Billing = &b
	}
	return body, out, nil
}

// withholdFrameMeasurement clears the VHS and VLAS of a continue
// answer's result (frame_result's vhs and vlas: the spec allows null
// there) and keeps the frame's result code, spread, confidence,
// landmarks_detected and pop_detected. A continue response is not
// billed, so a VHS in it would be a free measurement: a session fed
// frames of different radiographs that never agree would never complete,
// and so never be billed, while each frame measured one. The measurement
// comes with the billed complete response only. The desktop's in-process
// capture loop keeps its live values (it does not call this). The
// pipeline's own result is not changed: the answer gets a copy.
func withholdFrameMeasurement(body *FrameAnswer) {
	if o := &body.Outcome; o.Status == StatusContinue && o.Result != nil {
		r := *o.Result
		r.VHS, r.VLAS = nil, nil
		o.Result = &r
	}
}

// check refuses an outcome no body can be built of: complete without a
// result, or an unknown status.
func (o FrameOutcome) check() error {
	switch o.Status {
	case StatusContinue, StatusFailed:
		return nil
	case StatusComplete:
		if o.Result == nil {
			return errors.New("complete without a result")
		}
		return nil
	}
	return fmt.Errorf("unknown status %q", o.Status)
}

// Corners are a screen's corners found on an image: pixels, ordered TL,
// TR, BR, BL. Their wire body is cardiacv3.Corners (cardiacv3.NewCorners).
type Corners struct {
	Corners                 [4][2]float64
	ImageWidth, ImageHeight int
	ModelVersion            string
}

// Rectified is an image rectified by its screen's corners: the JPEG and
// its size, and the corners when they were found (Preprocess). Its wire
// body is cardiacv3.Rectified (cardiacv3.NewRectified).
type Rectified struct {
	JPEG          []byte
	Corners       *[4][2]float64
	Width, Height int
	ModelVersion  string
}

// DetectCorners finds the screen corners (422 when none). Never billed.
// The image holds its reservation of the pixel budget while it runs.
func (s *Sessions) DetectCorners(ctx context.Context, img []byte) (*Corners, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	_, release, err := s.reservePoP(ctx, img)
	if err != nil {
		return nil, err
	}
	defer release()
	cs, w, h, err := s.corners(ctx, img)
	if err != nil {
		return nil, err
	}
	return &Corners{Corners: cs, ImageWidth: w, ImageHeight: h, ModelVersion: s.pop.ModelVersion()}, nil
}

func (s *Sessions) corners(ctx context.Context, img []byte) ([4][2]float64, int, int, error) {
	cs, w, h, err := s.pop.DetectCorners(ctx, img)
	if errors.Is(err, ErrNoCorners) {
		return cs, 0, 0, &Error{Kind: KindUnprocessable, Msg: "corner detection failed", Err: err}
	}
	if err != nil {
		return cs, 0, 0, popErr("corners", err)
	}
	return cs, w, h, nil
}

// Rectify warps the image by the given corners, which must lie inside
// the image. Never billed. The image holds its reservation of the pixel
// budget while it runs.
func (s *Sessions) Rectify(ctx context.Context, img []byte, corners [4][2]float64) (*Rectified, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	cfg, err := checkImageHeader(img)
	if err != nil {
		return nil, err
	}
	for _, p := range corners {
		if p[0] < 0 || p[1] < 0 || p[0] > float64(cfg.Width) || p[1] > float64(cfg.Height) {
			return nil, errf(KindInvalid, "corner %v lies outside the %dx%d image", p, cfg.Width, cfg.Height)
		}
	}
	_, release, err := s.reservePoP(ctx, img)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.rectify(ctx, img, corners)
}

func (s *Sessions) rectify(ctx context.Context, img []byte, corners [4][2]float64) (*Rectified, error) {
	jpg, w, h, err := s.pop.Rectify(ctx, img, corners)
	if err != nil {
		return nil, popErr("rectify", err)
	}
	return &Rectified{JPEG: jpg, Width: w, Height: h, ModelVersion: s.pop.ModelVersion()}, nil
}

// Preprocess is corners followed by rectify (422 when no corners),
// holding the image's reservation of the pixel budget throughout.
func (s *Sessions) Preprocess(ctx context.Context, img []byte) (*Rectified, error) {
	if s.pop == nil {
		return nil, ErrPoPUnavailable
	}
	_, release, err := s.reservePoP(ctx, img)
	if err != nil {
		return nil, err
	}
	defer release()
	cs, _, _, err := s.corners(ctx, img)
	if err != nil {
		return nil, err
	}
	r, err := s.rectify(ctx, img, cs)
	if err != nil {
		return nil, err
	}
	r.Corners = &cs
	return r, nil
}
