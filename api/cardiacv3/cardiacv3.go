// Package cardiacv3 is the cardiac v3 spec's wire layer beside the
// response bodies (package api): the error body, the image field's
// encoding, the body of the one-image PoP endpoints and the PoP
// session's bodies (session.go). Its errors are
// apperr.Errors, so the transports answer them with the one status
// table (api/errstatus).
package cardiacv3

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"vetlens/app/apperr"
)

// MaxImageBytes is the largest decoded image (10 MB = 10 MiB here).
const MaxImageBytes = 10 << 20

// ErrorBody is the spec's error body: {"error": message}.
type ErrorBody struct {
	Error string `json:"error"`
}

// ImageRequest is the body of the one-image PoP endpoints
// (/v3/pop-session, /v3/corners, /v3/rectify, /v3/preprocess); a field
// is nil when the body does not have it.
type ImageRequest struct {
	Image     *string          `json:"image"`
	SessionID *string          `json:"session_id"`
	UUID      *string          `json:"uuid"`
	Corners   *[][]json.Number `json:"corners"`
}

// ParseImageRequest decodes a one-image body and its base64 image
// (DecodeImageBase64). A body that is not a JSON object of string fields,
// or has no image, is KindInvalid.
func ParseImageRequest(body []byte) (*ImageRequest, []byte, error) {
	var q ImageRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&q); err != nil {
		return nil, nil, &apperr.Error{Kind: apperr.KindInvalid, Msg: "body must be a JSON object with string fields", Err: err}
	}
	if q.Image == nil {
		return nil, nil, invalid("image is required")
	}
	img, err := DecodeImageBase64(*q.Image)
	if err != nil {
		return nil, nil, err
	}
	return &q, img, nil
}

// CornerPoints are the request's corners as /v3/rectify takes them: 4
// [x, y] pairs of numbers, TL, TR, BR, BL; KindInvalid otherwise.
func (q *ImageRequest) CornerPoints() ([4][2]float64, error) {
	const shape = "corners must be 4 [x, y] pairs (TL, TR, BR, BL)"
	var cs [4][2]float64
	if q.Corners == nil || len(*q.Corners) != 4 {
		return cs, invalid(shape)
	}
	for i, p := range *q.Corners {
		if len(p) != 2 {
			return cs, invalid(shape)
		}
		for j, n := range p {
			f, err := n.Float64()
			if err != nil {
				return cs, invalid("corner coordinates must be numbers")
			}
			cs[i][j] = f
		}
	}
	return cs, nil
}

// CheckStartRequest accepts the /v3/pop-session/start body: empty, or a
// JSON object (its fields are ignored); KindInvalid otherwise.
func CheckStartRequest(body []byte) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return invalid("body must be a JSON object ({})")
	}
	return nil
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
		return nil, invalid("image is empty")
	}
	if len(s) > base64.StdEncoding.EncodedLen(MaxImageBytes)+len(s)/60+8 {
		return nil, &apperr.Error{Kind: apperr.KindTooLarge, Msg: fmt.Sprintf("image exceeds %d bytes", MaxImageBytes)}
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
		return nil, invalid(fmt.Sprintf("image is not valid base64: %v", err))
	}
	if len(b) > MaxImageBytes {
		return nil, &apperr.Error{Kind: apperr.KindTooLarge, Msg: fmt.Sprintf("image is %d bytes, exceeds %d", len(b), MaxImageBytes)}
	}
	return b, nil
}

// invalid is a KindInvalid error whose message is the client's text.
func invalid(msg string) error { return &apperr.Error{Kind: apperr.KindInvalid, Msg: msg} }
