// Package errstatus is the wire layer's error → HTTP status table: the
// status each use-case error kind (app/apperr) is answered with. The HTTP
// adapter (platform/httpapi) and the command line's error lines take
// statuses from here; app knows none.
package errstatus

import (
	"net/http"

	"vetlens/app/apperr"
)

// byKind is the one error → HTTP status table of the use-case errors:
// every apperr kind (TestStatusTable fails on a kind without a row).
var byKind = map[apperr.Kind]int{
	apperr.KindInternal:      http.StatusInternalServerError,
	apperr.KindInvalid:       http.StatusBadRequest,
	apperr.KindTooLarge:      http.StatusRequestEntityTooLarge,
	apperr.KindUnauthorized:  http.StatusForbidden,
	apperr.KindUnavailable:   http.StatusServiceUnavailable,
	apperr.KindNotFound:      http.StatusNotFound,
	apperr.KindUnprocessable: http.StatusUnprocessableEntity,
	apperr.KindConflict:      http.StatusConflict,
	apperr.KindBusy:          http.StatusServiceUnavailable,
	apperr.KindTooMany:       http.StatusTooManyRequests,
	apperr.KindNoSpace:       http.StatusInsufficientStorage,
}

// Of is the HTTP status the cardiac spec answers a use-case error of kind
// k with (500 for a kind the table does not know). The HTTP adapter and
// the command line (which prints it in its error lines) share it.
func Of(k apperr.Kind) int {
	if s, ok := byKind[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}
