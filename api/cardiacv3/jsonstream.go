package cardiacv3

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"vetlens/app/apperr"
	"vetlens/internal/errs"
)

// jsonStream is a minimal streaming JSON reader for the cardiac request:
// strings are read with a length cap, values that are not needed are
// skipped without being kept. It exists for the capped string read
// (str, strBody), which encoding/json's Decoder.Token cannot do (see
// ReadCardiacRequest and experiments/2026-11-28-request-reader.md).
type jsonStream struct {
	r       *bufio.Reader
	ignored int // bytes skipped in ignored fields
	skip    bool
}

// errEOF is an unexpected end of the body.
var errEOF = errf(apperr.KindInvalid, "body must be a JSON object: unexpected end of JSON input")

func (s *jsonStream) readErr(err error) error {
	if err == io.EOF {
		return errEOF
	}
	return &apperr.Error{Kind: apperr.KindInvalid, Msg: "could not read request body", Err: errs.Hide("the connection failed", err)}
}

// byte reads one byte, counting it against the ignored budget while
// skipping an ignored field.
func (s *jsonStream) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, s.readErr(err)
	}
	if err := s.count(1); err != nil {
		return 0, err
	}
	return c, nil
}

func (s *jsonStream) count(n int) error {
	if !s.skip {
		return nil
	}
	s.ignored += n
	if s.ignored > MaxIgnoredBytes {
		return errf(apperr.KindTooLarge, "ignored fields exceed %d bytes", MaxIgnoredBytes)
	}
	return nil
}

// peek returns the next byte that is not white space without consuming it.
func (s *jsonStream) peek() (byte, error) {
	for {
		b, err := s.r.Peek(1)
		if err != nil {
			return 0, s.readErr(err)
		}
		switch b[0] {
		case ' ', '\t', '\n', '\r':
			s.r.Discard(1)
			if err := s.count(1); err != nil {
				return 0, err
			}
		default:
			return b[0], nil
		}
	}
}

// next consumes and returns the next byte that is not white space.
func (s *jsonStream) next() (byte, error) {
	if _, err := s.peek(); err != nil {
		return 0, err
	}
	return s.byte()
}

func (s *jsonStream) expect(want byte, what string) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return errf(apperr.KindInvalid, "body must be a JSON object: expected %s, found %q", what, c)
	}
	return nil
}

// errString is returned by str when a string exceeds its cap.
var errString = errors.New("string too long")

// str reads a JSON string whose opening quote is next. It keeps the
// unescaped text when keep is true and stops with errString as soon as the
// text exceeds max bytes (when keep is false, max is not checked). The
// text must be valid UTF-8, without control characters or lone
// surrogates.
func (s *jsonStream) str(max int, keep bool) (string, error) {
	if c, err := s.next(); err != nil {
		return "", err
	} else if c != '"' {
		return "", errf(apperr.KindInvalid, "expected a string, found %q", c)
	}
	return s.strBody(max, keep)
}

// strBody reads the rest of a string after its opening quote (or after
// the part of it already read), as str does.
func (s *jsonStream) strBody(max int, keep bool) (string, error) {
	var out []byte
	n := 0
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return "", s.readErr(err)
			}
		}
		win, _ := s.r.Peek(s.r.Buffered())
		i := 0
		for i < len(win) && win[i] != '"' && win[i] != '\\' && win[i] >= 0x20 {
			i++
		}
		if keep {
			if n+i > max {
				return "", errString
			}
			out = append(out, win[:i]...)
		}
		n += i
		s.r.Discard(i)
		if err := s.count(i); err != nil {
			return "", err
		}
		if i == len(win) {
			continue
		}
		c, err := s.byte()
		if err != nil {
			return "", err
		}
		switch {
		case c == '"':
			if keep && !utf8.Valid(out) {
				return "", errf(apperr.KindInvalid, "string is not valid UTF-8")
			}
			if !keep {
				return "", nil
			}
			return string(out), nil
		case c < 0x20:
			return "", errf(apperr.KindInvalid, "control character in a JSON string")
		}
		r, err := s.escape()
		if err != nil {
			return "", err
		}
		if keep {
			if n+utf8.RuneLen(r) > max {
				return "", errString
			}
			out = utf8.AppendRune(out, r)
		}
		n += utf8.RuneLen(r)
	}
}

// escape reads the escape sequence after a backslash.
func (s *jsonStream) escape() (rune, error) {
	c, err := s.byte()
	if err != nil {
		return 0, err
	}
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := s.hex4()
		if err != nil {
			return 0, err
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		if r >= 0xdc00 { // a low surrogate first
			return 0, errf(apperr.KindInvalid, "lone surrogate in a JSON string")
		}
		if c, err := s.byte(); err != nil || c != '\\' {
			return 0, errf(apperr.KindInvalid, "lone surrogate in a JSON string")
		}
		if c, err := s.byte(); err != nil || c != 'u' {
			return 0, errf(apperr.KindInvalid, "lone surrogate in a JSON string")
		}
		lo, err := s.hex4()
		if err != nil {
			return 0, err
		}
		if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
			return d, nil
		}
		return 0, errf(apperr.KindInvalid, "lone surrogate in a JSON string")
	}
	return 0, errf(apperr.KindInvalid, "invalid escape \\%c in a JSON string", c)
}

func (s *jsonStream) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := s.byte()
		if err != nil {
			return 0, err
		}
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, errf(apperr.KindInvalid, "invalid \\u escape in a JSON string")
		}
	}
	return r, nil
}

// literal reads true, false or null (the next byte is its first letter).
func (s *jsonStream) literal() (string, error) {
	c, err := s.next()
	if err != nil {
		return "", err
	}
	var want string
	switch c {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	case 'n':
		want = "null"
	default:
		return "", errf(apperr.KindInvalid, "invalid character %q in JSON", c)
	}
	for i := 1; i < len(want); i++ {
		if c, err := s.byte(); err != nil {
			return "", err
		} else if c != want[i] {
			return "", errf(apperr.KindInvalid, "invalid literal in JSON")
		}
	}
	return want, nil
}

// number skips a JSON number, checking its syntax.
func (s *jsonStream) number() error {
	digits := func() (int, error) {
		n := 0
		for {
			b, err := s.r.Peek(1)
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, s.readErr(err)
			}
			if b[0] < '0' || b[0] > '9' {
				return n, nil
			}
			if _, err := s.byte(); err != nil {
				return n, err
			}
			n++
		}
	}
	opt := func(set string) (bool, error) {
		b, err := s.r.Peek(1)
		if err == io.EOF || (err == nil && !strings.ContainsRune(set, rune(b[0]))) {
			return false, nil
		}
		if err != nil {
			return false, s.readErr(err)
		}
		_, err = s.byte()
		return true, err
	}
	bad := errf(apperr.KindInvalid, "invalid number in JSON")
	if _, err := opt("-"); err != nil {
		return err
	}
	b, err := s.r.Peek(1)
	if err != nil {
		return s.readErr(err)
	}
	if b[0] == '0' {
		s.byte()
	} else if n, err := digits(); err != nil {
		return err
	} else if n == 0 {
		return bad
	}
	if ok, err := opt("."); err != nil {
		return err
	} else if ok {
		if n, err := digits(); err != nil {
			return err
		} else if n == 0 {
			return bad
		}
	}
	if ok, err := opt("eE"); err != nil {
		return err
	} else if ok {
		if _, err := opt("+-"); err != nil {
			return err
		}
		if n, err := digits(); err != nil {
			return err
		} else if n == 0 {
			return bad
		}
	}
	return nil
}

// skipValue skips any JSON value, checking its syntax, at nesting depth.
func (s *jsonStream) skipValue(depth int) error {
	if depth > maxJSONDepth {
		return errf(apperr.KindInvalid, "JSON nested deeper than %d levels", maxJSONDepth)
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		_, err := s.str(0, false)
		return err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == '{' || c == '[':
		s.byte()
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if c, err := s.peek(); err != nil {
			return err
		} else if c == end {
			s.byte()
			return nil
		}
		for {
			if end == '}' {
				if _, err := s.str(0, false); err != nil {
					return err
				}
				if err := s.expect(':', "':'"); err != nil {
					return err
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			c, err := s.next()
			if err != nil {
				return err
			}
			if c == end {
				return nil
			}
			if c != ',' {
				return errf(apperr.KindInvalid, "invalid character %q in JSON", c)
			}
		}
	}
	_, err = s.literal()
	return err
}

// isNull consumes a null when it comes next.
func (s *jsonStream) isNull() (bool, error) {
	c, err := s.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	_, err = s.literal()
	return err == nil, err
}
