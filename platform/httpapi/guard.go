package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"vetlens/app"
)

// keyedRequest is a request that passed the guard: its caller, the time
// it reached the guard (before authentication; usg-v1's meta.elapsed_ms
// counts from it) and its body, bounded by the route's limit: read into
// body, or left in r.Body (bounded) for a handler that reads it as a
// stream.
type keyedRequest struct {
	r        *http.Request
	caller   app.Caller
	received time.Time
	limit    int64 // the route's body limit; 0: the body is not bounded
	body     []byte
}

// keyedHandler handles one request that passed the guard; ctx ends at
// the request timeout (Config.RequestTimeout).
type keyedHandler func(ctx context.Context, w http.ResponseWriter, req *keyedRequest)

// refusal names an answer the guard gives in place of the handler's.
type refusal int

const (
	// refuseMissingKey: no x-api-key header.
	refuseMissingKey refusal = iota
	// refuseInvalidKey: a key that is unknown, malformed or not active.
	refuseInvalidKey
	// refuseInternal: authentication failed inside, or a panic below
	// the guard was recovered.
	refuseInternal
	// refuseInFlight: the key has MaxInFlightPerKey requests in flight
	// (Retry-After is set).
	refuseInFlight
	// refuseTooLarge: the body exceeds the route's limit.
	refuseTooLarge
	// refuseBodyTimeout: the body was not received within its read
	// timeout (bodyReadTimeout).
	refuseBodyTimeout
	// refuseUnreadable: the body could not be read for another reason.
	refuseUnreadable
)

// specErrors is how one spec writes the guard's refusals: its error body
// and each refusal's status, from api/errstatus. msg is the text both
// specs send for the refusal; it is "" for the key and internal
// refusals, which each spec words its own way.
type specErrors interface {
	refuse(w http.ResponseWriter, f refusal, msg string)
}

// answer is a refusal's answer in one spec: the status as the spec names
// it (cardiac-v3: the HTTP status; usg-v1: the code, whose status
// errstatus.USG gives) and the spec's own text, "" where it sends the
// text both specs share.
type answer[S any] struct {
	status S
	msg    string
}

// refusals is one spec's answer to each refusal.
type refusals[S any] map[refusal]answer[S]

// answer is f's status and text in the spec: its own text, else msg.
func (t refusals[S]) answer(f refusal, msg string) (S, string) {
	a := t[f]
	if a.msg != "" {
		msg = a.msg
	}
	return a.status, msg
}

// guard is the one auth/limit middleware of both specs' keyed routes
// (cardiac-v3's /v3/* and usg-v1's POST /usg/v1/predict); errs is the
// spec's way of answering. In order:
//
//   - a panic below it is answered with the spec's 500 and logged
//     (http.ErrAbortHandler passes through);
//   - the x-api-key header is authenticated, before any byte of the body
//     is read: a missing and an invalid key are refusals of their own,
//     which a spec may answer alike (cardiac-v3: 403) or not (usg-v1: 401
//     missing_api_key, 403 invalid_api_key);
//   - the key takes one of its MaxInFlightPerKey in-flight slots, held
//     until the handler returns (429 with Retry-After: 1 when none is
//     free);
//   - the request timeout starts (the handler's ctx);
//   - when limit > 0 the body is bounded by limit and by the route's read
//     timeout (bodyReadTimeout) and, when read is set, read in full
//     before the handler runs: 413 past the limit, 408 past the read
//     timeout (the connection is then closed, timedWriter), 400 when it
//     cannot be read. Without read the handler reads r.Body as a stream
//     and answers its own 413 and 408 (refuseBody).
func (s *Server) guard(errs specErrors, limit int64, read bool, h keyedHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.recoverTo(w, errs)
		req := &keyedRequest{r: r, received: time.Now(), limit: limit}
		caller, err := s.svc.Accounts.Authenticate(r.Context(), r.Header.Get("x-api-key"))
		switch {
		case errors.Is(err, app.ErrMissingKey):
			errs.refuse(w, refuseMissingKey, "")
			return
		case app.KindOf(err) == app.KindUnauthorized:
			errs.refuse(w, refuseInvalidKey, "")
			return
		case err != nil:
			s.cfg.Logger.Error("authenticate", "err", err)
			errs.refuse(w, refuseInternal, "")
			return
		}
		req.caller = caller
		if !s.acquire(caller.KeyPrefix) {
			setRetryAfter(w, time.Second)
			errs.refuse(w, refuseInFlight, fmt.Sprintf("too many requests in flight for this API key (limit %d)", s.cfg.MaxInFlightPerKey))
			return
		}
		defer s.release(caller.KeyPrefix)
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		if limit > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			s.startBody(w, limit)
			if read {
				req.body, err = io.ReadAll(r.Body)
				s.bodyDone(w)
				if err != nil {
					if !s.refuseBody(w, errs, limit, err) {
						errs.refuse(w, refuseUnreadable, "could not read request body")
					}
					return
				}
			}
		}
		h(ctx, w, req)
	})
}

// refuseBody answers a body read that stopped at the route's limit (413)
// or at its read timeout (408) in the spec's words, and reports whether
// it did; any other error is the caller's to answer.
func (s *Server) refuseBody(w http.ResponseWriter, errs specErrors, limit int64, err error) bool {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		errs.refuse(w, refuseTooLarge, fmt.Sprintf("request body exceeds %d bytes", limit))
	case bodyTimedOut(err):
		errs.refuse(w, refuseBodyTimeout, fmt.Sprintf("request body not received within %v", s.bodyReadTimeout(limit)))
	default:
		return false
	}
	return true
}

// recoverTo, deferred, answers a panic with the spec's 500
// (refuseInternal) and logs it; http.ErrAbortHandler, net/http's way of
// aborting a response, is passed on.
func (s *Server) recoverTo(w http.ResponseWriter, errs specErrors) {
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			panic(p)
		}
		s.cfg.Logger.Error("panic", "value", p)
		errs.refuse(w, refuseInternal, "")
	}
}
