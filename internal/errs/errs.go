// Package errs keeps the text of a library's or the system's error out of
// what a client is shown, and in what the server logs. An error made by
// Hide reads as its own plain message; its cause stays in the chain, for
// errors.Is and errors.As, and Chain writes it out for the log.
package errs

import "errors"

// Private is an error whose text is a plain message for a client; Cause,
// whose text may show internals ("new limit exceeds current limit of
// buffer, new limit: 4294967439"), is kept for the log (Chain).
type Private struct {
	// Msg is the plain message.
	Msg string
	// Cause is the error it hides; it stays in the chain.
	Cause error
}

// Error is the plain message.
func (p *Private) Error() string { return p.Msg }

// Unwrap is the hidden cause.
func (p *Private) Unwrap() error { return p.Cause }

// Hide is msg, hiding cause's text from Error but not from the chain
// (errors.Is, errors.As, Chain). A nil cause gives a plain error.
func Hide(msg string, cause error) error {
	if cause == nil {
		return errors.New(msg)
	}
	return &Private{Msg: msg, Cause: cause}
}

// Chain is err's text with every hidden cause written out, for a log:
// "image is not usable: corrupt DICOM file: the data set could not be
// parsed [the data set could not be parsed: new limit exceeds ...]". It is
// err.Error() when nothing is hidden; "" for nil.
func Chain(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	var walk func(error)
	walk = func(e error) {
		if p, ok := e.(*Private); ok {
			s += " [" + p.Msg + ": " + Chain(p.Cause) + "]"
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				walk(next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				walk(next)
			}
		}
	}
	walk(err)
	return s
}

// Hidden reports whether err's chain holds a hidden cause: whether Chain
// says more than err.Error().
func Hidden(err error) bool {
	var p *Private
	return errors.As(err, &p)
}
