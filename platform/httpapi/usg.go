package httpapi

import (
	"context"
	"errors"
	"net/http"

	"vetlens/api/errstatus"
	"vetlens/api/usgv1"
	"vetlens/app"
	"vetlens/internal/errs"
)

// usgError writes the USG error body {error: {code, message}} with the
// status the one status table pairs with code (errstatus.USG).
func usgError(w http.ResponseWriter, code usgv1.Code, msg string) {
	writeJSON(w, errstatus.USG(code), usgv1.NewErrorBody(code, msg))
}

// cors adds the spec's permissive CORS headers to every /usg/v1 response.
func (s *Server) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "Content-Type, x-api-key")
		hd.Set("Access-Control-Max-Age", "86400")
		defer s.recoverTo(w, usgErrors{})
		h.ServeHTTP(w, r)
	})
}

func preflight(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// usgErrors writes the guard's refusals as usg-v1 does: {error: {code,
// message}} with the code's status (errstatus.USG); a missing key is 401
// missing_api_key, an invalid one 403 invalid_api_key.
type usgErrors struct{}

// usgRefusals is each refusal's code and, where the spec words it its
// own way, its text.
var usgRefusals = refusals[usgv1.Code]{
	refuseMissingKey:  {usgv1.CodeMissingAPIKey, "x-api-key header is required"},
	refuseInvalidKey:  {usgv1.CodeInvalidAPIKey, "API key is not active"},
	refuseInternal:    {usgv1.CodeInternal, "internal error"},
	refuseInFlight:    {usgv1.CodeRateLimited, ""},
	refuseTooLarge:    {usgv1.CodePayloadTooLarge, ""},
	refuseBodyTimeout: {usgv1.CodeRequestTimeout, ""},
	refuseUnreadable:  {usgv1.CodeInvalidJSON, ""},
}

// refuse writes refusal f in the spec's words (specErrors).
func (usgErrors) refuse(w http.ResponseWriter, f refusal, msg string) {
	code, text := usgRefusals.answer(f, msg)
	usgError(w, code, text)
}

// usgPredict serves POST /usg/v1/predict behind the guard, which has
// read its body (at most MaxSmallBody).
func (s *Server) usgPredict(ctx context.Context, w http.ResponseWriter, in *keyedRequest) {
	req, err := usgv1.ParseRequest(in.body)
	if err != nil {
		eb := usgv1.ErrorBodyOf(err)
		writeJSON(w, errstatus.USG(eb.Error.Code), eb)
		return
	}
	req.Received = in.received
	resp, err := s.svc.USG.PredictUSG(ctx, in.caller, req)
	if err != nil {
		s.usgFail(w, in.r, err)
		return
	}
	writeJSON(w, http.StatusOK, usgv1.NewResponse(resp))
}

// usgFail answers a failed USG prediction: the kind's usg-v1 code and
// its status from the one table (errstatus.USGCode), the error's text and
// Retry-After; nothing when the client is gone. An internal error is
// logged whole and answered with the spec's fixed text; a refusal under
// 500 is logged as v3Fail logs it (logFail).
func (s *Server) usgFail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		return
	}
	code := errstatus.USGCode(app.KindOf(err))
	if code == usgv1.CodeInternal {
		s.cfg.Logger.Error("usg predict", "err", errs.Chain(err))
		usgError(w, code, "internal error; safe to retry once")
		return
	}
	if status := errstatus.USG(code); status < http.StatusInternalServerError {
		s.logFail(r, status, err)
	}
	setRetryAfter(w, retryAfterOf(err))
	usgError(w, code, err.Error())
}

func (s *Server) usgHealth(w http.ResponseWriter, _ *http.Request) {
	h, err := s.svc.Status.USGHealth()
	if err != nil {
		usgError(w, usgv1.CodeServiceUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, usgv1.NewHealth(h.Health, h.Reasons))
}

func (s *Server) usgVersion(w http.ResponseWriter, _ *http.Request) {
	e := s.svc.USG.Engine()
	if e == nil {
		usgError(w, usgv1.CodeServiceUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, usgv1.NewVersion(e.Version()))
}

var usgPaths = map[string]string{"/usg/v1/health": "GET", "/usg/v1/version": "GET", "/usg/v1/predict": "POST"}

func (s *Server) usgNotFound(w http.ResponseWriter, r *http.Request) {
	if m, ok := usgPaths[r.URL.Path]; ok {
		w.Header().Set("Allow", m+", OPTIONS")
		usgError(w, usgv1.CodeMethodNotAllowed, "method not allowed; use "+m)
		return
	}
	usgError(w, usgv1.CodeNotFound, "no such endpoint")
}
