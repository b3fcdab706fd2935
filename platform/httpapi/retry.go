package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"vetlens/app"
)

// setRetryAfter is the one Retry-After rule of both specs' endpoints: d in
// whole seconds (RFC 9110's delay-seconds), rounded up and at least 1, so
// a client is never told to retry at once ("0" for a 500 ms wait) nor
// before the server said it may. d <= 0 sets nothing.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d <= 0 {
		return
	}
	s := (d + time.Second - 1) / time.Second
	w.Header().Set("Retry-After", strconv.FormatInt(int64(max(s, 1)), 10))
}

// retryAfterOf is the wait a use-case error asks the client for (0: none).
func retryAfterOf(err error) time.Duration {
	var ae *app.Error
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}
