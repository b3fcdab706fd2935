package cardiacv3

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"vetlens/app/apperr"
	"vetlens/internal/ident"
)

// Request limits. The body limits of the HTTP API are derived from them
// (docs/security.md lists every limit with its default).
const (
	// MaxBatchImages is the most images in a batch or stream request.
	MaxBatchImages = 10
	// MaxUUIDBytes is the longest accepted uuid: the identifier rule's
	// cap (internal/ident, CheckUUID).
	MaxUUIDBytes = ident.MaxBytes

	// MaxImageBase64 is the longest image string accepted in a request:
	// the base64 length of MaxImageBytes with one line break allowed per
	// 60 characters (DecodeImageBase64's rule), plus 256 characters for a
	// data URL prefix. The streaming reader stops at the first character
	// beyond it.
	MaxImageBase64 = ((MaxImageBytes+2)/3*4+8)*60/59 + 256
	// MaxIgnoredBytes bounds the JSON text of the fields a cardiac request
	// may carry that VetLens ignores (V2's include_render, extended_run,
	// ...), all of them together.
	MaxIgnoredBytes = 1 << 20
	// MaxCardiacBody is the largest /v3/predict or /v3/predict/stream
	// body: MaxBatchImages images of MaxImageBase64 characters plus
	// MaxIgnoredBytes for the JSON around them, the uuid and ignored
	// fields (about 143 MB).
	MaxCardiacBody = MaxBatchImages*MaxImageBase64 + MaxIgnoredBytes

	// maxJSONDepth is how deeply an ignored field's value may nest.
	maxJSONDepth = 64
	// maxKeyBytes is the longest field name read.
	maxKeyBytes = 1024
)

// errf is an apperr.Error of kind k: the reader's errors keep the use
// cases' kinds, so the transports answer them with the one status table.
func errf(k apperr.Kind, format string, a ...any) *apperr.Error {
	return &apperr.Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// CheckUUID validates a cardiac request's uuid by the identifier rule
// (internal/ident, the rule of app.ParsePatientID): KindInvalid, the
// message naming the uuid.
func CheckUUID(uuid string) error {
	if err := ident.Check(uuid); err != nil {
		return &apperr.Error{Kind: apperr.KindInvalid, Msg: "uuid", Err: err}
	}
	return nil
}

// CardiacRequest is a parsed POST /v3/predict or /v3/predict/stream body.
type CardiacRequest struct {
	// Batch is true when `images` was sent.
	Batch bool
	// Images holds the decoded image bytes: one for single mode.
	Images [][]byte
	// ImageErrs holds, per index, why an image's base64 could not be
	// used (stream mode reports these as error events; in strict mode
	// ParseCardiacRequest fails instead).
	ImageErrs []error
	// UUID is the patient identifier; HasUUID tells "" from absent.
	UUID    string
	HasUUID bool
	Render  bool
}

// ParseCardiacRequest parses and validates a cardiac prediction body held
// in memory; it is ReadCardiacRequest over body.
func ParseCardiacRequest(body []byte, strict bool) (*CardiacRequest, error) {
	return ReadCardiacRequest(bytes.NewReader(body), strict)
}

// ReadCardiacRequest reads and validates a cardiac prediction body as a
// stream, stopping at the first rule broken, so that a hostile body costs
// no more than the bytes read up to that point: an 11th image, an image
// string over MaxImageBase64 characters, a field of the wrong JSON type,
// ignored fields over MaxIgnoredBytes, or nesting deeper than 64.
//
// Rules: one JSON object; exactly one of `image` (string) and `images`
// (1-10 strings); `uuid` a string following the identifier rule
// (CheckUUID: at most MaxUUIDBytes, graphic characters); `render` a
// boolean; null is the same as absent; a field given twice is refused;
// field names match case-insensitively (as encoding/json matches them);
// other fields (V2's include_render, extended_run, ...) are ignored.
// Strings must be valid UTF-8 without lone surrogate escapes. An image is
// standard base64 (padding optional, an optional data:...;base64,
// prefix); a decoded image over MaxImageBytes is apperr.KindTooLarge. With
// strict false a bad image in `images` is recorded in ImageErrs instead
// of failing the request (the stream reports it as an error event).
//
// An error reading r comes back wrapped in a apperr.KindInvalid *apperr.Error, so the
// caller can still match it (for example *http.MaxBytesError) with
// errors.As.
//
// It runs on a hand-written tokenizer (jsonStream), not encoding/json's
// Decoder.Token, for one measured bound: a string is refused at the first
// character over its cap (MaxImageBase64 for an image, MaxUUIDBytes for
// the uuid, MaxIgnoredBytes for ignored fields), while Decoder.Token reads
// and holds a string whole before it can be checked. On a 140 MB image,
// ignored or uuid string (TestReadCardiacRequestStopsEarly's bodies) the
// tokenizer reads at most 13.6 MB and peaks at +52 MB of heap, the
// Decoder.Token reader reads all 140 MB and peaks at +524 MB
// (experiments/2026-11-28-request-reader.md, TestDecoderReaderBounds).
func ReadCardiacRequest(r io.Reader, strict bool) (*CardiacRequest, error) {
	s := &jsonStream{r: bufio.NewReaderSize(r, 64<<10)}
	req, err := s.cardiacRequest(strict)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// cardiacRequest reads the whole body (see ReadCardiacRequest).
func (s *jsonStream) cardiacRequest(strict bool) (*CardiacRequest, error) {
	if err := s.expect('{', "'{'"); err != nil {
		return nil, err
	}
	req := &CardiacRequest{}
	seen := map[string]bool{}
	hasImage := false
	first := true
	for {
		c, err := s.peek()
		if err != nil {
			return nil, err
		}
		if c == '}' {
			s.byte()
			break
		}
		if !first {
			if err := s.expect(',', "',' or '}'"); err != nil {
				return nil, err
			}
		}
		first = false
		key, err := s.str(maxKeyBytes, true)
		if errors.Is(err, errString) {
			return nil, errf(apperr.KindInvalid, "field name longer than %d bytes", maxKeyBytes)
		}
		if err != nil {
			return nil, err
		}
		if err := s.expect(':', "':'"); err != nil {
			return nil, err
		}
		name := ""
		for _, k := range []string{"image", "images", "uuid", "render"} {
			if strings.EqualFold(key, k) {
				name = k
			}
		}
		if name == "" {
			s.skip = true
			err := s.skipValue(1)
			s.skip = false
			if err != nil {
				return nil, err
			}
			continue
		}
		if seen[name] {
			return nil, errf(apperr.KindInvalid, "field %s given twice", name)
		}
		seen[name] = true
		if null, err := s.isNull(); err != nil {
			return nil, err
		} else if null {
			continue
		}
		switch name {
		case "uuid":
			if c, _ := s.peek(); c != '"' {
				return nil, errf(apperr.KindInvalid, "uuid must be a string")
			}
			u, err := s.str(MaxUUIDBytes, true)
			if errors.Is(err, errString) {
				return nil, errf(apperr.KindInvalid, "uuid longer than %d bytes", MaxUUIDBytes)
			}
			if err != nil {
				return nil, err
			}
			if err := CheckUUID(u); err != nil {
				return nil, err
			}
			req.UUID, req.HasUUID = u, u != ""
		case "render":
			c, _ := s.peek()
			if c != 't' && c != 'f' {
				return nil, errf(apperr.KindInvalid, "render must be a boolean")
			}
			v, err := s.literal()
			if err != nil {
				return nil, err
			}
			req.Render = v == "true"
		case "image", "images":
			if hasImage {
				return nil, errf(apperr.KindInvalid, "send either image or images, not both")
			}
			hasImage = true
			if name == "image" {
				if c, _ := s.peek(); c != '"' {
					return nil, errf(apperr.KindInvalid, "image must be a base64 string")
				}
				txt, truncated, err := s.imageText()
				if err != nil {
					return nil, err
				}
				if truncated {
					return nil, errImageTooLarge()
				}
				b, err := DecodeImageBase64(txt)
				if err != nil {
					return nil, err
				}
				req.Images = [][]byte{b}
				continue
			}
			if err := s.images(req, strict); err != nil {
				return nil, err
			}
		}
	}
	switch c, err := s.peek(); {
	case err == errEOF:
	case err != nil:
		return nil, err
	default:
		return nil, errf(apperr.KindInvalid, "body must hold one JSON object, found %q after it", c)
	}
	if !hasImage {
		return nil, errf(apperr.KindInvalid, "image (single) or images (batch) is required")
	}
	return req, nil
}

// imageText reads one image string. truncated reports that it was
// longer than MaxImageBase64 and that reading stopped there (the rest of
// the string is still in the stream); err is a JSON or read error.
func (s *jsonStream) imageText() (txt string, truncated bool, err error) {
	txt, err = s.str(MaxImageBase64, true)
	if errors.Is(err, errString) {
		return "", true, nil
	}
	return txt, false, err
}

// errImageTooLarge is the error of an image string over MaxImageBase64.
func errImageTooLarge() *apperr.Error {
	return errf(apperr.KindTooLarge, "image exceeds %d bytes", MaxImageBytes)
}

// images reads the images array into req. In strict mode the first bad
// image fails the request; otherwise a bad image (base64 or size) is
// recorded in ImageErrs and reading goes on, the rest of a string over
// the size limit skipped without being kept.
func (s *jsonStream) images(req *CardiacRequest, strict bool) error {
	notStrings := errf(apperr.KindInvalid, "images must be an array of base64 strings")
	if c, _ := s.peek(); c != '[' {
		return notStrings
	}
	s.byte()
	req.Batch = true
	for i := 0; ; i++ {
		c, err := s.peek()
		if err != nil {
			return err
		}
		if c == ']' {
			s.byte()
			break
		}
		if i > 0 {
			if err := s.expect(',', "',' or ']'"); err != nil {
				return err
			}
			if c, err = s.peek(); err != nil {
				return err
			}
		}
		if i == MaxBatchImages {
			return errf(apperr.KindInvalid, "too many images: more than %d, at most %d per request", MaxBatchImages, MaxBatchImages)
		}
		var (
			b         []byte
			truncated bool
			imgErr    error
		)

		switch c {
		case '"':
			txt, tr, err := s.imageText()
			if err != nil {
				return err // a JSON or read error: the stream is unusable
			}
			if truncated = tr; truncated {
				imgErr = errImageTooLarge()
			} else {
				b, imgErr = DecodeImageBase64(txt)
			}
		case 'n': // null, as encoding/json reads it into a string: empty
			if _, err := s.literal(); err != nil {
				return err
			}
			imgErr = errf(apperr.KindInvalid, "image is empty")
		default:
			return notStrings
		}
		if imgErr != nil {
			if strict {
				var e *apperr.Error
				errors.As(imgErr, &e)
				return &apperr.Error{Kind: e.Kind, Msg: fmt.Sprintf("images[%d]: %s", i, e.Msg)}
			}
			if truncated {
				if _, err := s.strBody(0, false); err != nil {
					return err
				}
			}
		}
		req.ImageErrs = append(req.ImageErrs, imgErr)
		req.Images = append(req.Images, b)
	}
	if len(req.Images) == 0 {
		return errf(apperr.KindInvalid, "images is empty")
	}
	return nil
}
