// Package ident is the one rule for the identifiers VetLens stores as a
// client sent them: patient identifiers (the cardiac `uuid`, the USG
// `uuid`, the desktop's patient field) and the USG `clinic_code`. They go
// into the database and the logs, so they are bounded and printable:
//
//   - at most MaxBytes bytes;
//   - valid UTF-8;
//   - only graphic characters (letters, marks, numbers, punctuation,
//     symbols, spaces): no control characters (NUL, ESC, DEL, C1), no
//     format characters (the bidi embeddings, overrides and isolates
//     U+202A-U+202E and U+2066-U+2069, zero-width characters, the BOM),
//     no line or paragraph separators, no unassigned code points, no
//     private-use characters, and no U+FFFD, which is what a JSON
//     decoder makes of invalid UTF-8 and lone surrogates.
//
// The empty string passes (no identifier). Callers that read JSON also
// require a string: numbers, objects and arrays are refused there.
package ident

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxBytes is the longest identifier, in bytes of UTF-8.
const MaxBytes = 128

// Errors of Check, wrapped with detail.
var (
	ErrTooLong = errors.New("too long")
	ErrUTF8    = errors.New("not valid UTF-8")
	ErrChar    = errors.New("character not allowed")
)

// Check returns nil when s follows the rule, else an error wrapping
// ErrTooLong, ErrUTF8 or ErrChar that says why, in words a client can
// act on.
func Check(s string) error {
	if len(s) > MaxBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(s), MaxBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w", ErrUTF8)
	}
	for i, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || unicode.Is(unicode.Co, r) {
			return fmt.Errorf("%w: %U at byte %d (control characters, format and bidi characters and U+FFFD are refused)", ErrChar, r, i)
		}
	}
	return nil
}
