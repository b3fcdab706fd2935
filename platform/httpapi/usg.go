package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

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
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.cfg.Logger.Error("panic", "value", p)
				usgError(w, usgv1.CodeInternal, "internal error")
			}
		}()
		h.ServeHTTP(w, r)
	})
}

func preflight(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

type callerKey struct{}

// usgAuth checks the key (401 missing_api_key, 403 invalid_api_key), the
// in-flight limit (429 rate_limited with Retry-After) and the timeout.
func (s *Server) usgAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received := time.Now()
		caller, err := s.svc.Authenticate(r.Context(), r.Header.Get("x-api-key"))
		switch {
		case errors.Is(err, app.ErrMissingKey):
			usgError(w, usgv1.CodeMissingAPIKey, "x-api-key header is required")
			return
		case errors.Is(err, app.ErrInvalidKey):
			usgError(w, usgv1.CodeInvalidAPIKey, "API key is not active")
			return
		case err != nil:
			s.cfg.Logger.Error("authenticate", "err", err)
			usgError(w, usgv1.CodeInternal, "internal error")
			return
		}
		if !s.acquire(caller.KeyPrefix) {
			setRetryAfter(w, time.Second)
			usgError(w, usgv1.CodeRateLimited, fmt.Sprintf("too many requests in flight for this API key (limit %d)", s.cfg.MaxInFlightPerKey))
			return
		}
		defer s.release(caller.KeyPrefix)
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		ctx = context.WithValue(ctx, callerKey{}, caller)
		ctx = context.WithValue(ctx, receivedKey{}, received)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

type receivedKey struct{}

func (s *Server) usgPredict(w http.ResponseWriter, r *http.Request) {
	caller := r.Context().Value(callerKey{}).(app.Caller)
	r.Body = http.MaxBytesReader(w, r.Body, MaxSmallBody)
	s.startBody(w, MaxSmallBody)
	body, tooLarge, err := readBody(r)
	s.bodyDone(w)
	if tooLarge {
		usgError(w, usgv1.CodePayloadTooLarge, fmt.Sprintf("request body exceeds %d bytes", MaxSmallBody))
		return
	}
	if bodyTimedOut(err) {
		usgError(w, usgv1.CodeRequestTimeout, fmt.Sprintf("request body not received within %v", s.bodyReadTimeout(MaxSmallBody)))
		return
	}
	if err != nil {
		usgError(w, usgv1.CodeInvalidJSON, "could not read request body")
		return
	}
	req, err := usgv1.ParseRequest(body)
	if err != nil {
		eb := usgv1.ErrorBodyOf(err)
		writeJSON(w, errstatus.USG(eb.Error.Code), eb)
		return
	}
	req.Received = r.Context().Value(receivedKey{}).(time.Time)
	resp, err := s.svc.PredictUSG(r.Context(), caller, req)
	if err != nil {
		s.usgFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
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
	h, err := s.svc.USGHealth()
	if err != nil {
		usgError(w, usgv1.CodeServiceUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) usgVersion(w http.ResponseWriter, _ *http.Request) {
	e := s.svc.USG()
	if e == nil {
		usgError(w, usgv1.CodeServiceUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, e.Version())
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
