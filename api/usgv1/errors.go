package usgv1

import (
	"errors"
	"fmt"
)

// Error is a request the service rejects, or an internal failure, with its
// stable code. Message text is for people and may change.
type Error struct {
	Code    Code
	Message string
	// Err is the cause, when another error was turned into this one
	// (engine/usg's *RangeError for out_of_range); nil otherwise.
	Err error
}

// Error returns the code and the message.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause (nil when there is none).
func (e *Error) Unwrap() error { return e.Err }

// ErrorDetail is the inner object of the error body.
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// ErrorBody is the spec's error response body {error: {code, message}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// NewErrorBody is the error body with code and msg.
func NewErrorBody(code Code, msg string) ErrorBody {
	return ErrorBody{Error: ErrorDetail{Code: code, Message: msg}}
}

// ErrorBodyOf turns any error into the spec's error body: an *Error keeps its
// code, anything else is internal_error.
func ErrorBodyOf(err error) ErrorBody {
	var e *Error
	if errors.As(err, &e) {
		return NewErrorBody(e.Code, e.Message)
	}
	return NewErrorBody(CodeInternal, err.Error())
}

func errorf(c Code, format string, a ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, a...)}
}
