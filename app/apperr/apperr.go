// Package apperr names the kinds of use-case error and the error itself
// (Error, which app.Error is).
// It is a leaf: it imports nothing of the module, so the wire layer
// (api) can map kinds to HTTP statuses without depending on app, and app
// knows no status numbers.
package apperr

// Kind classifies a use-case error for the transports; api/errstatus.Of is the
// HTTP status each kind is answered with.
type Kind int

// Error kinds. The comments say what each means, not how it is answered.
const (
	KindInternal      Kind = iota // an unexpected failure
	KindInvalid                   // missing or invalid fields
	KindTooLarge                  // an image over the size limit
	KindUnauthorized              // a missing or invalid API key
	KindUnavailable               // a pipeline is not loaded
	KindNotFound                  // an unknown or expired session
	KindUnprocessable             // corner detection failed
	KindConflict                  // a frame for a finished session
	KindBusy                      // no room in the pixel memory budget (with a retry time)
	KindTooMany                   // too many open PoP sessions for the key (with a retry time)
	KindNoSpace                   // the store's disk is below config.DiskRefuseBytes (with a retry time)

	kindEnd // one past the last kind; a new kind goes above it
)

// Kinds lists every kind, in declaration order.
func Kinds() []Kind {
	out := make([]Kind, 0, kindEnd)
	for k := KindInternal; k < kindEnd; k++ {
		out = append(out, k)
	}
	return out
}
