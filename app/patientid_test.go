package app

import (
	"errors"
	"strings"
	"testing"

	"vetlens/internal/ident"
)

// TestParsePatientID: the identifier rule (internal/ident) with app's
// KindInvalid error, "patient ID: " and why; what it accepts comes back
// unchanged (no trimming: callers trim where they read).
func TestParsePatientID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		wantErr error  // nil: accepted
		wantMsg string // the error's text, when refused
	}{
		{name: "empty (no patient)", in: ""},
		{name: "plain", in: "Rex-1"},
		{name: "spaces kept", in: "  rex  "},
		{name: "accents and scripts", in: "Rex Müller ポチ-犬"},
		{name: "emoji", in: "dog 🐕"},
		{name: "at the cap", in: strings.Repeat("x", MaxPatientIDLen)},
		{name: "over the cap", in: strings.Repeat("x", MaxPatientIDLen+1), wantErr: ident.ErrTooLong, wantMsg: "patient ID: too long: 129 bytes, at most 128"},
		{name: "invalid UTF-8", in: "rex\xff", wantErr: ident.ErrUTF8, wantMsg: "patient ID: not valid UTF-8"},
		{name: "NUL", in: "a\x00b", wantErr: ident.ErrChar, wantMsg: "patient ID: character not allowed: U+0000 at byte 1"},
		{name: "newline", in: "bad\nid", wantErr: ident.ErrChar},
		{name: "tab", in: "\trex", wantErr: ident.ErrChar},
		{name: "RTL override", in: "rex\u202egpj", wantErr: ident.ErrChar},
		{name: "zero-width space", in: "r\u200bex", wantErr: ident.ErrChar},
		{name: "replacement character", in: "rex\ufffd", wantErr: ident.ErrChar},
		{name: "private use", in: "rex\ue000", wantErr: ident.ErrChar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := ParsePatientID(tc.in)
			if tc.wantErr == nil {
				if err != nil || id.String() != tc.in {
					t.Fatalf("ParsePatientID(%q) = %q, %v; want it unchanged", tc.in, id, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || KindOf(err) != KindInvalid || id != "" {
				t.Fatalf("ParsePatientID(%q) = %q, %v; want KindInvalid wrapping %v", tc.in, id, err, tc.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "patient ID: ") || (tc.wantMsg != "" && !strings.HasPrefix(err.Error(), tc.wantMsg)) {
				t.Fatalf("ParsePatientID(%q) error %q, want it to start %q", tc.in, err, tc.wantMsg)
			}
		})
	}
}
