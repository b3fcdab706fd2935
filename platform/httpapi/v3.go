package httpapi

import (
	"context"
	"errors"
	"net/http"

	apiwire "vetlens/api" // not api: the tests name their server so
	"vetlens/api/cardiacv3"
	"vetlens/api/errstatus"
	"vetlens/app"
	"vetlens/internal/errs"
)

// v3Error writes the cardiac error body {error: message}.
func v3Error(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, cardiacv3.ErrorBody{Error: msg})
}

// v3Errors writes the guard's refusals as cardiac-v3 does: {error:
// message}, 403 for a missing and an invalid key alike (the spec's
// "invalid or missing API key").
type v3Errors struct{}

// v3Refusals is each refusal's status and, where the spec words it its
// own way, its text.
var v3Refusals = refusals[int]{
	refuseMissingKey:  {errstatus.Of(app.KindUnauthorized), "invalid or missing API key"},
	refuseInvalidKey:  {errstatus.Of(app.KindUnauthorized), "invalid or missing API key"},
	refuseInternal:    {errstatus.Of(app.KindInternal), "internal server error"},
	refuseInFlight:    {errstatus.Of(app.KindTooMany), ""},
	refuseTooLarge:    {errstatus.Of(app.KindTooLarge), ""},
	refuseBodyTimeout: {http.StatusRequestTimeout, ""},
	refuseUnreadable:  {errstatus.Of(app.KindInvalid), ""},
}

// refuse writes refusal f in the spec's words (specErrors).
func (v3Errors) refuse(w http.ResponseWriter, f refusal, msg string) {
	status, text := v3Refusals.answer(f, msg)
	v3Error(w, status, text)
}

// v3 guards a cardiac handler (guard): the key (403 when missing or
// invalid), the per-key in-flight limit (429), the request timeout, and
// a body bounded by limit (413 beyond it) and by the route's read
// timeout (408 past it, and the connection closed), read before the
// handler runs. The key is checked before any of the body is read.
func (s *Server) v3(limit int64, h keyedHandler) http.Handler {
	return s.guard(v3Errors{}, limit, true, h)
}

// v3Stream is v3 for a handler that reads the body itself, as a stream:
// r.Body is bounded by limit but not read in advance.
func (s *Server) v3Stream(limit int64, h keyedHandler) http.Handler {
	return s.guard(v3Errors{}, limit, false, h)
}

// v3Fail answers a use-case error with the cardiac error body: the
// kind's status from the one table (errstatus.Of), its message and
// Retry-After; an internal error or a timeout is a 500 with a fixed
// text, and a request whose client is gone gets nothing.
func (s *Server) v3Fail(w http.ResponseWriter, r *http.Request, err error) {
	status := errstatus.Of(app.KindInternal)
	msg := "internal server error"
	var ae *app.Error
	switch k := app.KindOf(err); {
	case errors.Is(err, context.DeadlineExceeded):
		msg = "request timed out"
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return // the client is gone
	case errors.As(err, &ae) && k != app.KindInternal:
		status = errstatus.Of(k)
		msg = ae.Error()
		setRetryAfter(w, ae.RetryAfter)
	}
	s.logFail(r, status, err)
	v3Error(w, status, msg)
}

// logFail logs a failed request's whole error chain (errs.Chain): every
// 500, and a refusal whose body left out a library's or the system's
// text (errs.Hidden). The client gets the plain message only.
func (s *Server) logFail(r *http.Request, status int, err error) {
	switch {
	case status >= http.StatusInternalServerError:
		s.cfg.Logger.Error("request failed", "path", r.URL.Path, "status", status, "err", errs.Chain(err))
	case errs.Hidden(err):
		s.cfg.Logger.Info("request refused", "path", r.URL.Path, "status", status, "err", errs.Chain(err))
	}
}

func (s *Server) health(_ context.Context, w http.ResponseWriter, _ *keyedRequest) {
	writeJSON(w, http.StatusOK, cardiacv3.Health(s.svc.Status.CardiacHealth()))
}

// readCardiac reads the cardiac request body as a stream
// (cardiacv3.ReadCardiacRequest); a body over the limit is a 413.
func (s *Server) readCardiac(w http.ResponseWriter, req *keyedRequest, strict bool) (*cardiacv3.CardiacRequest, bool) {
	pr, err := cardiacv3.ReadCardiacRequest(req.r.Body, strict)
	s.bodyDone(w)
	if err != nil {
		if !s.refuseBody(w, v3Errors{}, req.limit, err) {
			s.v3Fail(w, req.r, err)
		}
		return nil, false
	}
	return pr, true
}

func (s *Server) predict(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	pr, ok := s.readCardiac(w, req, true)
	if !ok {
		return
	}
	if pr.Batch {
		a, err := s.svc.Cardiac.PredictBatch(ctx, req.caller, pr, nil)
		if err != nil {
			s.v3Fail(w, req.r, err)
			return
		}
		writeJSON(w, http.StatusOK, apiwire.NewBatchBody(a.Results, apiwire.Summary(a.Summary), dated(a.Historic.VHS), dated(a.Historic.VLAS),
			a.ModelVersion, billingBody(a.Billing)))
		return
	}
	a, err := s.svc.Cardiac.PredictSingle(ctx, req.caller, pr)
	if err != nil {
		s.v3Fail(w, req.r, err)
		return
	}
	body := apiwire.SingleBody{CardiacResponse: apiwire.NewCardiacResponse(a.Result, a.ModelVersion), Billing: billingBody(a.Billing)}
	if h := a.Historic; h != nil {
		body.SetHistoric(dated(h.VHS), dated(h.VLAS))
	}
	writeJSON(w, http.StatusOK, body)
}

// dated is historic_vhs or historic_vlas of a uuid's earlier values (nil
// stays nil: a JSON null).
func dated(ds []app.Dated) []apiwire.Dated {
	if ds == nil {
		return nil
	}
	out := make([]apiwire.Dated, len(ds))
	for i, d := range ds {
		out[i] = apiwire.Dated(d)
	}
	return out
}

func (s *Server) sessionStart(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	if err := cardiacv3.CheckStartRequest(req.body); err != nil {
		s.v3Fail(w, req.r, err)
		return
	}
	st, err := s.svc.Sessions.StartSession(ctx, req.caller)
	if err != nil {
		s.v3Fail(w, req.r, err)
		return
	}
	writeJSON(w, http.StatusOK, cardiacv3.NewSessionStart(st.SessionID, cardiacv3.SessionConfig(st.SessionConfig), st.ModelsLoaded, st.PopModelsLoaded, st.ModelVersion))
}

func (s *Server) sessionFrame(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	s.popImage(ctx, w, req, func(ctx context.Context, q *cardiacv3.ImageRequest, img []byte) (any, error) {
		if q.SessionID == nil || *q.SessionID == "" {
			return nil, invalid("session_id is required")
		}
		uuid := ""
		if q.UUID != nil {
			uuid = *q.UUID
			if err := cardiacv3.CheckUUID(uuid); err != nil {
				return nil, err
			}
		}
		a, err := s.svc.Sessions.SessionFrame(ctx, req.caller, *q.SessionID, img, uuid)
		if err != nil {
			return nil, err
		}
		var bill *apiwire.Billing
		if a.Billing != nil {
			b := billingBody(*a.Billing)
			bill = &b
		}
		return cardiacv3.NewFrameBody(a.SessionID, cardiacv3.FrameOutcome(a.Outcome), a.ModelVersion, bill)
	})
}

func (s *Server) corners(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	s.popImage(ctx, w, req, func(ctx context.Context, _ *cardiacv3.ImageRequest, img []byte) (any, error) {
		c, err := s.svc.Sessions.DetectCorners(ctx, img)
		if err != nil {
			return nil, err
		}
		return cardiacv3.NewCorners(c.Corners, c.ImageWidth, c.ImageHeight, c.ModelVersion), nil
	})
}

func (s *Server) rectify(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	s.popImage(ctx, w, req, func(ctx context.Context, q *cardiacv3.ImageRequest, img []byte) (any, error) {
		cs, err := q.CornerPoints()
		if err != nil {
			return nil, err
		}
		return rectifiedBody(s.svc.Sessions.Rectify(ctx, img, cs))
	})
}

func (s *Server) preprocess(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	s.popImage(ctx, w, req, func(ctx context.Context, _ *cardiacv3.ImageRequest, img []byte) (any, error) {
		return rectifiedBody(s.svc.Sessions.Preprocess(ctx, img))
	})
}

// rectifiedBody is the /v3/rectify or /v3/preprocess body of r.
func rectifiedBody(r *app.Rectified, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return cardiacv3.NewRectified(r.JPEG, r.Corners, r.Width, r.Height, r.ModelVersion), nil
}

// popImage serves a PoP endpoint whose request carries an image: 503
// without the pipeline, 400 for a bad body, then fn's body or error (an
// app.Error of KindInvalid from fn is a 400 with its message).
func (s *Server) popImage(ctx context.Context, w http.ResponseWriter, req *keyedRequest,
	fn func(context.Context, *cardiacv3.ImageRequest, []byte) (any, error)) {
	if s.svc.Sessions.Pipeline() == nil {
		s.v3Fail(w, req.r, app.ErrPoPUnavailable)
		return
	}
	q, img, err := cardiacv3.ParseImageRequest(req.body)
	if err != nil {
		s.v3Fail(w, req.r, err)
		return
	}
	body, err := fn(ctx, q, img)
	if err != nil {
		s.v3Fail(w, req.r, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// invalid is a 400 with msg as the client's error text.
func invalid(msg string) error { return &app.Error{Kind: app.KindInvalid, Msg: msg} }

// v3Paths are the cardiac endpoints, for telling 405 from 404.
var v3Paths = map[string]string{
	"/v3/health": "GET", "/v3/predict": "POST", "/v3/predict/stream": "POST",
	"/v3/pop-session/start": "POST", "/v3/pop-session": "POST", "/v3/corners": "POST",
	"/v3/rectify": "POST", "/v3/preprocess": "POST",
}

func (s *Server) v3NotFound(_ context.Context, w http.ResponseWriter, req *keyedRequest) {
	if m, ok := v3Paths[req.r.URL.Path]; ok {
		w.Header().Set("Allow", m)
		v3Error(w, http.StatusMethodNotAllowed, "method not allowed; use "+m)
		return
	}
	v3Error(w, http.StatusNotFound, "no such endpoint")
}

// V2 retirement headers (spec: V2 retirement timeline).
const (
	v2Sunset = "Sat, 01 Aug 2026 00:00:00 GMT"
)

// euPredict answers the retired V2 API: 410 Gone naming /v3/predict,
// with the Sunset, Deprecation and Link headers. No key is needed.
func (s *Server) euPredict(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Sunset", v2Sunset)
	w.Header().Set("Deprecation", "true")
	w.Header().Set("Link", "<"+s.cfg.DocsURL+">; rel=deprecation")
	v3Error(w, http.StatusGone, "the V2 API (/eu/predict) was retired on 2026-08-15; use POST /v3/predict")
}

// billingBody is the spec's billing object of a metered call.
func billingBody(b app.Billing) apiwire.Billing {
	return apiwire.NewBilling(b.Billable, b.Reason, b.CallType, b.MonthlyUsage, string(b.Tier), (*int64)(b.Rate))
}
