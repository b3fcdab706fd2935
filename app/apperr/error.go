package apperr

import "time"

// Error is a use-case error with its Kind (app.Error). The wire layer
// builds one for a body it refuses, so the transports answer it like any
// use case's error.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
	// RetryAfter, when set, is when the client may try again (KindBusy,
	// KindTooMany, KindNoSpace): the transports send it as Retry-After.
	RetryAfter time.Duration
}

// Error returns the message the client sees.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
