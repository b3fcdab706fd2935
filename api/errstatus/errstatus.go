// Package errstatus is the wire layer's one error → HTTP status table,
// for both specs: the status each use-case error kind (app/apperr) is
// answered with, the usg-v1 code of each kind, and the status of each
// usg-v1 code. The HTTP adapter (platform/httpapi) and the command line's
// error lines take statuses from here only; app knows none.
package errstatus

import (
	"net/http"

	"vetlens/api/usgv1"
	"vetlens/app/apperr"
)

// kindRow is how both specs answer a use-case error of one kind.
type kindRow struct {
	// status is the HTTP status (the cardiac v3 spec's, and usg-v1's
	// where the kind has a usg code).
	status int
	// usg is the usg-v1 code of the kind; "" where the USG endpoints
	// never meet the kind and answer it, should they, as internal_error.
	usg usgv1.Code
}

// byKind is the one error → HTTP status table of the use-case errors:
// every apperr kind (TestStatusTable fails on a kind without a row).
var byKind = map[apperr.Kind]kindRow{
	apperr.KindInternal:      {http.StatusInternalServerError, usgv1.CodeInternal},
	apperr.KindInvalid:       {http.StatusBadRequest, usgv1.CodeInvalidValue},
	apperr.KindTooLarge:      {http.StatusRequestEntityTooLarge, usgv1.CodePayloadTooLarge},
	apperr.KindUnauthorized:  {http.StatusForbidden, usgv1.CodeInvalidAPIKey},
	apperr.KindUnavailable:   {http.StatusServiceUnavailable, usgv1.CodeServiceUnavailable},
	apperr.KindNotFound:      {http.StatusNotFound, usgv1.CodeNotFound},
	apperr.KindUnprocessable: {http.StatusUnprocessableEntity, ""},
	apperr.KindConflict:      {http.StatusConflict, ""},
	apperr.KindBusy:          {http.StatusServiceUnavailable, ""},
	apperr.KindTooMany:       {http.StatusTooManyRequests, usgv1.CodeRateLimited},
	apperr.KindNoSpace:       {http.StatusInsufficientStorage, usgv1.CodeInsufficientStorage},
}

// byUSGCode is the HTTP status of every usg-v1 code: the spec's table
// (Errors) and the rows the HTTP layer adds (TestStatusTable fails on a
// code without a row, and on a kind whose code's status differs from the
// kind's).
var byUSGCode = map[usgv1.Code]int{
	usgv1.CodeInvalidJSON:         http.StatusBadRequest,
	usgv1.CodeInvalidPayload:      http.StatusBadRequest,
	usgv1.CodeMissing:             http.StatusBadRequest,
	usgv1.CodeOutOfRange:          http.StatusBadRequest,
	usgv1.CodeInvalidValue:        http.StatusBadRequest,
	usgv1.CodeMissingAPIKey:       http.StatusUnauthorized,
	usgv1.CodeInvalidAPIKey:       http.StatusForbidden,
	usgv1.CodeInternal:            http.StatusInternalServerError,
	usgv1.CodePayloadTooLarge:     http.StatusRequestEntityTooLarge,
	usgv1.CodeRateLimited:         http.StatusTooManyRequests,
	usgv1.CodeServiceUnavailable:  http.StatusServiceUnavailable,
	usgv1.CodeNotFound:            http.StatusNotFound,
	usgv1.CodeMethodNotAllowed:    http.StatusMethodNotAllowed,
	usgv1.CodeInsufficientStorage: http.StatusInsufficientStorage,
	usgv1.CodeRequestTimeout:      http.StatusRequestTimeout,
	usgv1.CodeHTTPSRequired:       http.StatusForbidden,
}

// Of is the HTTP status both specs answer a use-case error of kind
// k with (500 for a kind the table does not know). The HTTP adapter and
// the command line (which prints it in its error lines) share it.
func Of(k apperr.Kind) int {
	if r, ok := byKind[k]; ok {
		return r.status
	}
	return http.StatusInternalServerError
}

// USGCode is the usg-v1 code a use-case error of kind k is answered
// with: internal_error for a kind without one.
func USGCode(k apperr.Kind) usgv1.Code {
	if r, ok := byKind[k]; ok && r.usg != "" {
		return r.usg
	}
	return usgv1.CodeInternal
}

// USG is the HTTP status the usg-v1 endpoints answer code c with
// (500 for a code the table does not know).
func USG(c usgv1.Code) int {
	if s, ok := byUSGCode[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
