package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Request limits.
const (
	// MaxImageBytes is the largest decoded image (10 MB = 10 MiB here).
	MaxImageBytes = 10 << 20
	// MaxBatchImages is the most images in a batch or stream request.
	MaxBatchImages = 10
	// MaxUUIDBytes is the longest accepted uuid.
	MaxUUIDBytes = 256
)

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

// ParseCardiacRequest parses and validates a cardiac prediction body.
// Rules: exactly one of `image` (string) and `images` (1-10 strings);
// `uuid` a string of at most MaxUUIDBytes; `render` a boolean; unknown
// fields (V2's include_render, extended_run, ...) are ignored. An image is
// standard base64 (padding optional, an optional data:...;base64, prefix);
// a decoded image over MaxImageBytes is KindTooLarge. With strict false a
// bad image in `images` is recorded in ImageErrs instead of failing the
// request (the stream reports it as an error event).
func ParseCardiacRequest(body []byte, strict bool) (*CardiacRequest, error) {
	var raw struct {
		Image  json.RawMessage `json:"image"`
		Images json.RawMessage `json:"images"`
		UUID   json.RawMessage `json:"uuid"`
		Render json.RawMessage `json:"render"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return nil, errf(KindInvalid, "body must be a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errf(KindInvalid, "body must hold one JSON object")
	}
	req := &CardiacRequest{}
	present := func(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }
	if present(raw.UUID) {
		if err := json.Unmarshal(raw.UUID, &req.UUID); err != nil {
			return nil, errf(KindInvalid, "uuid must be a string")
		}
		if len(req.UUID) > MaxUUIDBytes {
			return nil, errf(KindInvalid, "uuid longer than %d bytes", MaxUUIDBytes)
		}
		req.HasUUID = req.UUID != ""
	}
	if present(raw.Render) {
		if err := json.Unmarshal(raw.Render, &req.Render); err != nil {
			return nil, errf(KindInvalid, "render must be a boolean")
		}
	}
	switch {
	case present(raw.Image) && present(raw.Images):
		return nil, errf(KindInvalid, "send either image or images, not both")
	case present(raw.Image):
		var s string
		if err := json.Unmarshal(raw.Image, &s); err != nil {
			return nil, errf(KindInvalid, "image must be a base64 string")
		}
		b, err := DecodeImageBase64(s)
		if err != nil {
			return nil, err
		}
		req.Images = [][]byte{b}
	case present(raw.Images):
		var ss []string
		if err := json.Unmarshal(raw.Images, &ss); err != nil {
			return nil, errf(KindInvalid, "images must be an array of base64 strings")
		}
		if len(ss) == 0 {
			return nil, errf(KindInvalid, "images is empty")
		}
		if len(ss) > MaxBatchImages {
			return nil, errf(KindInvalid, "too many images: %d, at most %d per request", len(ss), MaxBatchImages)
		}
		req.Batch = true
		req.Images = make([][]byte, len(ss))
		req.ImageErrs = make([]error, len(ss))
		for i, s := range ss {
			b, err := DecodeImageBase64(s)
			if err != nil {
				if strict {
					var e *Error
					errors.As(err, &e)
					return nil, &Error{Kind: e.Kind, Msg: fmt.Sprintf("images[%d]: %s", i, e.Msg)}
				}
				req.ImageErrs[i] = err
				continue
			}
			req.Images[i] = b
		}
	default:
		return nil, errf(KindInvalid, "image (single) or images (batch) is required")
	}
	return req, nil
}

// DecodeImageBase64 decodes an image field: standard base64 with or
// without padding, line breaks ignored, an optional data URL prefix. It
// refuses empty input (KindInvalid) and a decoded size over MaxImageBytes
// (KindTooLarge), the latter before decoding when the text length shows it.
func DecodeImageBase64(s string) ([]byte, error) {
	if strings.HasPrefix(s, "data:") {
		if i := strings.Index(s, ";base64,"); i >= 0 {
			s = s[i+len(";base64,"):]
		}
	}
	if s == "" {
		return nil, errf(KindInvalid, "image is empty")
	}
	if len(s) > base64.StdEncoding.EncodedLen(MaxImageBytes)+len(s)/60+8 {
		return nil, errf(KindTooLarge, "image exceeds %d bytes", MaxImageBytes)
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(strings.TrimRight(s, "\r\n"), "=") {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil && enc == base64.RawStdEncoding {
		b, err = base64.StdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errf(KindInvalid, "image is not valid base64: %v", err)
	}
	if len(b) > MaxImageBytes {
		return nil, errf(KindTooLarge, "image is %d bytes, exceeds %d", len(b), MaxImageBytes)
	}
	return b, nil
}
