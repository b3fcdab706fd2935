package cardiacv3

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"vetlens/app/apperr"
	"vetlens/engine/imageproc"
)

// kind is the apperr kind of err (KindInternal when it is none), app's
// KindOf for the wire layer's tests.
func kind(err error) apperr.Kind {
	k, _ := kindOf(err)
	return k
}

// testPNG is a valid 64x64 PNG (app's tests use codeImage, whose
// pixels the fake engine reads; the reader only needs an image).
func testPNG(t testing.TB) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestParseCardiacRequest(t *testing.T) {
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG....."))
	raw := base64.RawStdEncoding.EncodeToString([]byte("\x89PNG....."))
	big := base64.StdEncoding.EncodeToString(make([]byte, MaxImageBytes+1))
	eleven := `["` + strings.Repeat(img+`","`, 10) + img + `"]`
	for _, tc := range []struct {
		name  string
		body  string
		kind  apperr.Kind // -1: ok
		batch bool
		n     int
	}{
		{"single", `{"image":"` + img + `"}`, -1, false, 1},
		{"unpadded", `{"image":"` + raw + `"}`, -1, false, 1},
		{"data url", `{"image":"data:image/png;base64,` + img + `"}`, -1, false, 1},
		{"batch", `{"images":["` + img + `","` + img + `"],"uuid":"x","render":true}`, -1, true, 2},
		{"v2 fields ignored", `{"image":"` + img + `","include_render":true,"extended_run":1}`, -1, false, 1},
		{"empty object", `{}`, apperr.KindInvalid, false, 0},
		{"not json", `{`, apperr.KindInvalid, false, 0},
		{"array", `[]`, apperr.KindInvalid, false, 0},
		{"trailing", `{"image":"` + img + `"} {}`, apperr.KindInvalid, false, 0},
		{"both", `{"image":"` + img + `","images":["` + img + `"]}`, apperr.KindInvalid, false, 0},
		{"image number", `{"image":5}`, apperr.KindInvalid, false, 0},
		{"empty image", `{"image":""}`, apperr.KindInvalid, false, 0},
		{"bad base64", `{"image":"!!!"}`, apperr.KindInvalid, false, 0},
		{"images empty", `{"images":[]}`, apperr.KindInvalid, false, 0},
		{"eleven images", `{"images":` + eleven + `}`, apperr.KindInvalid, false, 0},
		{"images not strings", `{"images":[1]}`, apperr.KindInvalid, false, 0},
		{"uuid number", `{"image":"` + img + `","uuid":7}`, apperr.KindInvalid, false, 0},
		{"uuid too long", `{"image":"` + img + `","uuid":"` + strings.Repeat("u", 257) + `"}`, apperr.KindInvalid, false, 0},
		{"render string", `{"image":"` + img + `","render":"yes"}`, apperr.KindInvalid, false, 0},
		{"too large", `{"image":"` + big + `"}`, apperr.KindTooLarge, false, 0},
		{"too large in batch", `{"images":["` + img + `","` + big + `"]}`, apperr.KindTooLarge, false, 0},
		{"string over the stream cap", `{"image":"` + strings.Repeat("A", MaxImageBase64+1) + `"}`, apperr.KindTooLarge, false, 0},
		{"field names fold case", `{"IMAGES":["` + img + `"],"Uuid":"x","RENDER":false}`, -1, true, 1},
		{"null fields are absent", `{"image":"` + img + `","images":null,"uuid":null,"render":null}`, -1, false, 1},
		{"ignored fields of every type", `{"image":"` + img + `","x":{"a":[1,{"b":null}],"c":-1.5e-3,"d":"\u00e9\n","e":[],"f":{}},"g":true}`, -1, false, 1},
		{"field twice", `{"image":"` + img + `","image":"` + img + `"}`, apperr.KindInvalid, false, 0},
		{"field twice, other case", `{"uuid":"a","UUID":"b","image":"` + img + `"}`, apperr.KindInvalid, false, 0},
		{"ignored field too deep", `{"image":"` + img + `","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, apperr.KindInvalid, false, 0},
		{"ignored fields too large", `{"image":"` + img + `","x":"` + strings.Repeat("a", MaxIgnoredBytes) + `"}`, apperr.KindTooLarge, false, 0},
		{"bad number in an ignored field", `{"image":"` + img + `","x":01}`, apperr.KindInvalid, false, 0},
		{"bad literal", `{"image":"` + img + `","render":tru}`, apperr.KindInvalid, false, 0},
		{"lone surrogate", `{"image":"` + img + `","uuid":"\ud800"}`, apperr.KindInvalid, false, 0},
		{"uuid at the identifier cap", `{"image":"` + img + `","uuid":"` + strings.Repeat("u", MaxUUIDBytes) + `"}`, -1, false, 1},
		{"uuid with an RTL override", `{"image":"` + img + `","uuid":"rex\u202e"}`, apperr.KindInvalid, false, 0},
		{"uuid with a replacement character", `{"image":"` + img + `","uuid":"rex\ufffd"}`, apperr.KindInvalid, false, 0},
		{"uuid with ESC", `{"image":"` + img + `","uuid":"\u001b[2J"}`, apperr.KindInvalid, false, 0},
		{"invalid UTF-8", "{\"image\":\"" + img + "\",\"uuid\":\"\xff\"}", apperr.KindInvalid, false, 0},
		{"control character", "{\"image\":\"" + img + "\",\"uuid\":\"a\x01\"}", apperr.KindInvalid, false, 0},
		{"images not an array", `{"images":"` + img + `"}`, apperr.KindInvalid, false, 0},
		{"null image in batch", `{"images":[null]}`, apperr.KindInvalid, false, 0},
		{"missing comma", `{"image":"` + img + `" "uuid":"a"}`, apperr.KindInvalid, false, 0},
		{"truncated", `{"images":["` + img + `"`, apperr.KindInvalid, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseCardiacRequest([]byte(tc.body), true)
			if tc.kind >= 0 {
				if err == nil || kind(err) != tc.kind {
					t.Fatalf("err %v (kind %d), want kind %d", err, kind(err), tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.Batch != tc.batch || len(req.Images) != tc.n {
				t.Fatalf("%+v", req)
			}
		})
	}
	// Lenient (stream) mode keeps the request and reports the bad image;
	// the rest of a string over the cap is skipped, not kept.
	huge := strings.Repeat("A", MaxImageBase64+100)
	req, err := ParseCardiacRequest([]byte(`{"images":["`+img+`","!!","`+huge+`",null,"`+img+`"]}`), false)
	if err != nil || len(req.Images) != 5 || req.ImageErrs[0] != nil || req.ImageErrs[4] != nil ||
		kind(req.ImageErrs[1]) != apperr.KindInvalid || kind(req.ImageErrs[2]) != apperr.KindTooLarge || kind(req.ImageErrs[3]) != apperr.KindInvalid {
		t.Fatalf("lenient: %+v %v", req, err)
	}
}

// lazyBody is a request body made on the fly: head, then unit repeated n
// times, then tail. It counts the bytes read from it.
type lazyBody struct {
	head, unit, tail string
	n                int
	pos              int64 // bytes read so far
	buf              []byte
}

func (l *lazyBody) size() int64 { return int64(len(l.head) + l.n*len(l.unit) + len(l.tail)) }

func (l *lazyBody) Read(p []byte) (int, error) {
	total := l.size()
	if l.pos >= total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && l.pos < total {
		var c byte
		switch off := l.pos; {
		case off < int64(len(l.head)):
			c = l.head[off]
		case off < total-int64(len(l.tail)):
			c = l.unit[(off-int64(len(l.head)))%int64(len(l.unit))]
		default:
			c = l.tail[off-(total-int64(len(l.tail)))]
		}
		p[n] = c
		n++
		l.pos++
	}
	return n, nil
}

// TestReadCardiacRequestStopsEarly: 140 MB bodies that break a rule
// early are refused after reading only what shows the rule broken, not
// decoded whole (the attack of issue 13: {"images":[1,1,...]} at 140 MB
// took 36-46 s and 4 GB before).
func TestReadCardiacRequestStopsEarly(t *testing.T) {
	const size = 140 << 20
	img := base64.StdEncoding.EncodeToString(testPNG(t))
	for _, tc := range []struct {
		name             string
		head, unit, tail string
		kind             apperr.Kind
		maxRead          int64
	}{
		{"numbers in images", `{"images":[`, `1,`, `1]}`, apperr.KindInvalid, 128 << 10},
		{"an 11th image", `{"images":[`, `"` + img + `",`, `"x"]}`, apperr.KindInvalid, 128 << 10},
		{"one image string of 140 MB", `{"image":"`, `A`, `"}`, apperr.KindTooLarge, MaxImageBase64 + 128<<10},
		{"an ignored string of 140 MB", `{"image":"` + img + `","x":"`, `a`, `"}`, apperr.KindTooLarge, MaxIgnoredBytes + 128<<10},
		{"deep nesting in an ignored field", `{"x":`, `[`, `]}`, apperr.KindInvalid, 128 << 10},
		{"nested arrays in images", `{"images":`, `[`, `]}`, apperr.KindInvalid, 128 << 10},
		{"a uuid of 140 MB", `{"uuid":"`, `u`, `"}`, apperr.KindInvalid, 128 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &lazyBody{head: tc.head, unit: tc.unit, tail: tc.tail}
			body.n = (size - len(tc.head) - len(tc.tail)) / len(tc.unit)
			for _, strict := range []bool{true, false} {
				body.pos = 0
				start := time.Now()
				_, err := ReadCardiacRequest(body, strict)
				took := time.Since(start)
				if kind(err) != tc.kind {
					t.Fatalf("strict %v: err %v (kind %d), want kind %d", strict, err, kind(err), tc.kind)
				}
				if body.pos > tc.maxRead {
					t.Fatalf("strict %v: read %d of %d bytes before refusing, want at most %d", strict, body.pos, body.size(), tc.maxRead)
				}
				t.Logf("strict %v: refused after %d of %d bytes in %v: %v", strict, body.pos, body.size(), took, err)
			}
		})
	}
}

// FuzzParseCardiacRequest fuzzes the streaming request reader (through
// ParseCardiacRequest and ReadCardiacRequest over a reader that returns
// one byte at a time), then the base64 and image decoders, and checks it
// against the buffered reference parser: a request it accepts, the
// reference accepts with the same images, uuid and render.
func FuzzParseCardiacRequest(f *testing.F) {
	img := base64.StdEncoding.EncodeToString(testPNG(f))
	for _, s := range []string{`{"image":"` + img + `"}`, `{"images":["` + img + `","x"],"uuid":"a"}`, `{}`, `[`, `{"image":null,"render":true}`,
		`{"image":"data:;base64,AAAA"}`, `{"IMAGES":["` + img + `"],"x":{"y":[1,2.5e3,null,true]}}`, `{"images":[1,1,1]}`,
		`{"image":"\u0041\/AAA","uuid":"\ud83d\ude00"}`, `{"images":[null,"` + img + `"],"render":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, strict := range []bool{true, false} {
			req, err := ParseCardiacRequest(body, strict)
			req2, err2 := ReadCardiacRequest(iotest.OneByteReader(bytes.NewReader(body)), strict)
			if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
				t.Fatalf("buffered and one-byte reads differ: %v / %v", err, err2)
			}
			if err != nil {
				if kind(err) != apperr.KindInvalid && kind(err) != apperr.KindTooLarge {
					t.Fatalf("unexpected kind %d: %v", kind(err), err)
				}
				continue
			}
			if !reflect.DeepEqual(req, req2) {
				t.Fatalf("buffered and one-byte reads differ: %+v / %+v", req, req2)
			}
			if len(req.Images) == 0 || len(req.Images) > MaxBatchImages || CheckUUID(req.UUID) != nil {
				t.Fatalf("accepted invalid request %+v", req)
			}
			ref, err := refParseCardiacRequest(body, strict)
			if err != nil {
				t.Fatalf("stream accepted what the reference refuses (%v): %q", err, body)
			}
			if ref.Batch != req.Batch || ref.UUID != req.UUID || ref.HasUUID != req.HasUUID || ref.Render != req.Render ||
				!reflect.DeepEqual(ref.Images, req.Images) || len(ref.ImageErrs) != len(req.ImageErrs) {
				t.Fatalf("stream and reference differ:\n%+v\n%+v", req, ref)
			}
			for i, b := range req.Images {
				if (req.ImageErrs != nil && (req.ImageErrs[i] == nil) != (ref.ImageErrs[i] == nil)) ||
					len(b) > MaxImageBytes || (len(b) == 0 && (strict || req.ImageErrs[i] == nil)) {
					t.Fatalf("image %d: %d bytes, err %v (reference %v)", i, len(b), req.ImageErrs[i], ref.ImageErrs[i])
				}
				// The image path after base64 must never panic.
				_, _, _ = imageproc.Decode(b)
			}
		}
	})
}
