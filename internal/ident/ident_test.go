package ident

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		want error
	}{
		{"empty", "", nil},
		{"uuid", "3f2b8c1e-9a4d-4e5f-8a6b-1c2d3e4f5a6b", nil},
		{"names with accents and spaces", "Rex Müller / clinic São Paulo #12", nil},
		{"non-Latin scripts", "ポチ-犬-كلب-собака", nil},
		{"emoji", "dog 🐕", nil},
		{"at the cap", strings.Repeat("a", MaxBytes), nil},
		{"over the cap", strings.Repeat("a", MaxBytes+1), ErrTooLong},
		{"multi-byte over the cap", strings.Repeat("é", MaxBytes/2+1), ErrTooLong},
		{"invalid UTF-8", "rex\xff", ErrUTF8},
		{"truncated UTF-8", "rex\xc3", ErrUTF8},
		{"NUL", "rex\x00", ErrChar},
		{"ESC", "rex\x1b[31m", ErrChar},
		{"newline", "rex\nINFO forged log line", ErrChar},
		{"tab", "rex\t", ErrChar},
		{"DEL", "rex\x7f", ErrChar},
		{"C1 control", "rex\u0085", ErrChar},
		{"RTL override", "rex\u202egpj.exe", ErrChar},
		{"LTR embedding", "\u202arex", ErrChar},
		{"isolate", "\u2066rex\u2069", ErrChar},
		{"right-to-left mark", "rex\u200f", ErrChar},
		{"zero-width space", "r\u200bex", ErrChar},
		{"BOM", "\ufeffrex", ErrChar},
		{"line separator", "rex\u2028", ErrChar},
		{"replacement character (a lone surrogate decoded)", "rex\ufffd", ErrChar},
		{"private use", "rex\ue000", ErrChar},
		{"unassigned", "rex\U000e0fff", ErrChar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.s)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Check(%q) = %v, want %v", tc.s, err, tc.want)
			}
		})
	}
}
