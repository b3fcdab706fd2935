package cardiacv3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"vetlens/app/apperr"
)

// refParseCardiacRequest is the buffered parser ReadCardiacRequest
// replaced (encoding/json over the whole body). The fuzz target checks
// that whatever the streaming reader accepts, this one accepts too with
// the same result: streaming changes when a request is refused, not what
// an accepted request means.
func refParseCardiacRequest(body []byte, strict bool) (*CardiacRequest, error) {
	var raw struct {
		Image  json.RawMessage `json:"image"`
		Images json.RawMessage `json:"images"`
		UUID   json.RawMessage `json:"uuid"`
		Render json.RawMessage `json:"render"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return nil, errf(apperr.KindInvalid, "body must be a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errf(apperr.KindInvalid, "body must hold one JSON object")
	}
	req := &CardiacRequest{}
	present := func(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }
	if present(raw.UUID) {
		if err := json.Unmarshal(raw.UUID, &req.UUID); err != nil {
			return nil, errf(apperr.KindInvalid, "uuid must be a string")
		}
		if len(req.UUID) > MaxUUIDBytes {
			return nil, errf(apperr.KindInvalid, "uuid longer than %d bytes", MaxUUIDBytes)
		}
		req.HasUUID = req.UUID != ""
	}
	if present(raw.Render) {
		if err := json.Unmarshal(raw.Render, &req.Render); err != nil {
			return nil, errf(apperr.KindInvalid, "render must be a boolean")
		}
	}
	switch {
	case present(raw.Image) && present(raw.Images):
		return nil, errf(apperr.KindInvalid, "send either image or images, not both")
	case present(raw.Image):
		var s string
		if err := json.Unmarshal(raw.Image, &s); err != nil {
			return nil, errf(apperr.KindInvalid, "image must be a base64 string")
		}
		b, err := DecodeImageBase64(s)
		if err != nil {
			return nil, err
		}
		req.Images = [][]byte{b}
	case present(raw.Images):
		var ss []string
		if err := json.Unmarshal(raw.Images, &ss); err != nil {
			return nil, errf(apperr.KindInvalid, "images must be an array of base64 strings")
		}
		if len(ss) == 0 {
			return nil, errf(apperr.KindInvalid, "images is empty")
		}
		if len(ss) > MaxBatchImages {
			return nil, errf(apperr.KindInvalid, "too many images: %d, at most %d per request", len(ss), MaxBatchImages)
		}
		req.Batch = true
		req.Images = make([][]byte, len(ss))
		req.ImageErrs = make([]error, len(ss))
		for i, s := range ss {
			b, err := DecodeImageBase64(s)
			if err != nil {
				if strict {
					var e *apperr.Error
					errors.As(err, &e)
					return nil, &apperr.Error{Kind: e.Kind, Msg: fmt.Sprintf("images[%d]: %s", i, e.Msg)}
				}
				req.ImageErrs[i] = err
				continue
			}
			req.Images[i] = b
		}
	default:
		return nil, errf(apperr.KindInvalid, "image (single) or images (batch) is required")
	}
	return req, nil
}
