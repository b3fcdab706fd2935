package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"vetlens/app"
	"vetlens/engine/usg"
	"vetlens/internal/errs"
)

// usgError writes the USG error body {error: {code, message}}.
func usgError(w http.ResponseWriter, status int, code usg.Code, msg string) {
	writeJSON(w, status, usg.ErrorBody{Error: usg.ErrorDetail{Code: code, Message: msg}})
}

// Codes the HTTP layer adds to the spec's USG codes for rows the spec
// does not show.
const (
	codeTooLarge    usg.Code = "payload_too_large"
	codeRateLimited usg.Code = "rate_limited"
	codeUnavailable usg.Code = "service_unavailable"
	codeNotFound    usg.Code = "not_found"
	codeMethod      usg.Code = "method_not_allowed"
	codeNoSpace     usg.Code = "insufficient_storage"
	codeTimeout     usg.Code = "request_timeout"
	// codeHTTPSRequired: a request with a key over plain HTTP.
	codeHTTPSRequired usg.Code = "https_required"
)

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
				usgError(w, http.StatusInternalServerError, usg.CodeInternal, "internal error")
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
			usgError(w, http.StatusUnauthorized, usg.CodeMissingAPIKey, "x-api-key header is required")
			return
		case errors.Is(err, app.ErrInvalidKey):
			usgError(w, http.StatusForbidden, usg.CodeInvalidAPIKey, "API key is not active")
			return
		case err != nil:
			s.cfg.Logger.Error("authenticate", "err", err)
			usgError(w, http.StatusInternalServerError, usg.CodeInternal, "internal error")
			return
		}
		if !s.acquire(caller.KeyPrefix) {
			setRetryAfter(w, time.Second)
			usgError(w, http.StatusTooManyRequests, codeRateLimited, fmt.Sprintf("too many requests in flight for this API key (limit %d)", s.cfg.MaxInFlightPerKey))
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
		usgError(w, http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("request body exceeds %d bytes", MaxSmallBody))
		return
	}
	if bodyTimedOut(err) {
		usgError(w, http.StatusRequestTimeout, codeTimeout, fmt.Sprintf("request body not received within %v", s.bodyReadTimeout(MaxSmallBody)))
		return
	}
	if err != nil {
		usgError(w, http.StatusBadRequest, usg.CodeInvalidJSON, "could not read request body")
		return
	}
	req, err := usg.ParseRequest(body)
	if err != nil {
		eb := usg.ErrorBodyOf(err)
		writeJSON(w, eb.Error.Code.HTTPStatus(), eb)
		return
	}
	req.Received = r.Context().Value(receivedKey{}).(time.Time)
	resp, err := s.svc.PredictUSG(r.Context(), caller, req)
	if err != nil {
		if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
			return
		}
		if app.KindOf(err) == app.KindUnavailable {
			usgError(w, http.StatusServiceUnavailable, codeUnavailable, err.Error())
			return
		}
		if k := app.KindOf(err); k == app.KindNoSpace {
			setRetryAfter(w, retryAfterOf(err))
			usgError(w, http.StatusInsufficientStorage, codeNoSpace, err.Error())
			return
		}
		if app.KindOf(err) == app.KindInvalid {
			s.logFail(r, http.StatusBadRequest, err)
			usgError(w, http.StatusBadRequest, usg.CodeInvalidValue, err.Error())
			return
		}
		s.cfg.Logger.Error("usg predict", "err", errs.Chain(err))
		usgError(w, http.StatusInternalServerError, usg.CodeInternal, "internal error; safe to retry once")
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) usgHealth(w http.ResponseWriter, _ *http.Request) {
	h, err := s.svc.USGHealth()
	if err != nil {
		usgError(w, http.StatusServiceUnavailable, codeUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) usgVersion(w http.ResponseWriter, _ *http.Request) {
	e := s.svc.USG()
	if e == nil {
		usgError(w, http.StatusServiceUnavailable, codeUnavailable, "USG model not loaded")
		return
	}
	writeJSON(w, http.StatusOK, e.Version())
}

var usgPaths = map[string]string{"/usg/v1/health": "GET", "/usg/v1/version": "GET", "/usg/v1/predict": "POST"}

func (s *Server) usgNotFound(w http.ResponseWriter, r *http.Request) {
	if m, ok := usgPaths[r.URL.Path]; ok {
		w.Header().Set("Allow", m+", OPTIONS")
		usgError(w, http.StatusMethodNotAllowed, codeMethod, "method not allowed; use "+m)
		return
	}
	usgError(w, http.StatusNotFound, codeNotFound, "no such endpoint")
}
