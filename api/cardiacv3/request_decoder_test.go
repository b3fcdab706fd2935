package cardiacv3

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vetlens/app/apperr"
)

// decoderReadCardiacRequest is the candidate of the experiment
// experiments/2026-11-28-request-reader.md: ReadCardiacRequest's rules on
// encoding/json's streaming Decoder.Token instead of the hand-written
// tokenizer. Its syntax errors are encoding/json's, not the tokenizer's;
// it is here to be measured against ReadCardiacRequest (the benchmarks
// and TestDecoderReaderBounds below), not used.
func decoderReadCardiacRequest(r io.Reader, strict bool) (*CardiacRequest, error) {
	dec := json.NewDecoder(r)
	fail := func(err error) error {
		var e *apperr.Error
		if errors.As(err, &e) {
			return e
		}
		if err == io.EOF {
			return errEOF
		}
		return errf(apperr.KindInvalid, "body must be a JSON object: %v", err)
	}
	if tok, err := dec.Token(); err != nil {
		return nil, fail(err)
	} else if tok != json.Delim('{') {
		return nil, errf(apperr.KindInvalid, "body must be a JSON object")
	}
	req := &CardiacRequest{}
	seen := map[string]bool{}
	hasImage := false
	var ignored int64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		key := tok.(string)
		if len(key) > maxKeyBytes {
			return nil, errf(apperr.KindInvalid, "field name longer than %d bytes", maxKeyBytes)
		}
		name := ""
		for _, k := range []string{"image", "images", "uuid", "render"} {
			if strings.EqualFold(key, k) {
				name = k
			}
		}
		if name == "" {
			start := dec.InputOffset()
			for depth := 0; ; {
				tok, err := dec.Token()
				if err != nil {
					return nil, fail(err)
				}
				if ignored+dec.InputOffset()-start > MaxIgnoredBytes {
					return nil, errf(apperr.KindTooLarge, "ignored fields exceed %d bytes", MaxIgnoredBytes)
				}
				switch tok {
				case json.Delim('{'), json.Delim('['):
					if depth++; depth > maxJSONDepth {
						return nil, errf(apperr.KindInvalid, "JSON nested deeper than %d levels", maxJSONDepth)
					}
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
				if depth == 0 {
					break
				}
			}
			ignored += dec.InputOffset() - start
			continue
		}
		if seen[name] {
			return nil, errf(apperr.KindInvalid, "field %s given twice", name)
		}
		seen[name] = true
		tok, err = dec.Token()
		if err != nil {
			return nil, fail(err)
		}
		if tok == nil {
			continue
		}
		switch name {
		case "uuid":
			u, ok := tok.(string)
			if !ok {
				return nil, errf(apperr.KindInvalid, "uuid must be a string")
			}
			if len(u) > MaxUUIDBytes {
				return nil, errf(apperr.KindInvalid, "uuid longer than %d bytes", MaxUUIDBytes)
			}
			if err := CheckUUID(u); err != nil {
				return nil, err
			}
			req.UUID, req.HasUUID = u, u != ""
		case "render":
			v, ok := tok.(bool)
			if !ok {
				return nil, errf(apperr.KindInvalid, "render must be a boolean")
			}
			req.Render = v
		case "image", "images":
			if hasImage {
				return nil, errf(apperr.KindInvalid, "send either image or images, not both")
			}
			hasImage = true
			decode := func(tok any) ([]byte, error) {
				s, ok := tok.(string)
				if !ok {
					return nil, errf(apperr.KindInvalid, "image must be a base64 string")
				}
				if len(s) > MaxImageBase64 {
					return nil, errImageTooLarge()
				}
				return DecodeImageBase64(s)
			}
			if name == "image" {
				b, err := decode(tok)
				if err != nil {
					return nil, err
				}
				req.Images = [][]byte{b}
				continue
			}
			if tok != json.Delim('[') {
				return nil, errf(apperr.KindInvalid, "images must be an array of base64 strings")
			}
			req.Batch = true
			for i := 0; dec.More(); i++ {
				if i == MaxBatchImages {
					return nil, errf(apperr.KindInvalid, "too many images: more than %d, at most %d per request", MaxBatchImages, MaxBatchImages)
				}
				tok, err := dec.Token()
				if err != nil {
					return nil, fail(err)
				}
				var b []byte
				var imgErr error
				switch tok.(type) {
				case nil:
					imgErr = errf(apperr.KindInvalid, "image is empty")
				case string:
					b, imgErr = decode(tok)
				default:
					return nil, errf(apperr.KindInvalid, "images must be an array of base64 strings")
				}
				if imgErr != nil && strict {
					var e *apperr.Error
					errors.As(imgErr, &e)
					return nil, &apperr.Error{Kind: e.Kind, Msg: fmt.Sprintf("images[%d]: %s", i, e.Msg)}
				}
				req.ImageErrs = append(req.ImageErrs, imgErr)
				req.Images = append(req.Images, b)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, fail(err)
			}
			if len(req.Images) == 0 {
				return nil, errf(apperr.KindInvalid, "images is empty")
			}
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errf(apperr.KindInvalid, "body must hold one JSON object")
	}
	if !hasImage {
		return nil, errf(apperr.KindInvalid, "image (single) or images (batch) is required")
	}
	return req, nil
}

// readers are the two readers the experiment compares.
var readers = []struct {
	name string
	read func(io.Reader, bool) (*CardiacRequest, error)
}{{"tokenizer", ReadCardiacRequest}, {"decoder", decoderReadCardiacRequest}}

// peakHeap runs f and returns the peak of live heap objects' bytes
// (runtime/metrics, sampled every 200 µs, after a GC before f) above the
// level before it, and the bytes f allocated (MemStats.TotalAlloc).
func peakHeap(f func()) (peak, allocated uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[1].Value.Uint64()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	var max atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > max.Load() {
				max.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	runtime.ReadMemStats(&ms)
	if m := max.Load(); m > base {
		peak = m - base
	}
	return peak, ms.TotalAlloc - before
}

// TestDecoderReaderBounds measures both readers on the experiment's
// bodies (bytes read, bytes allocated, peak heap) and logs the figures;
// it fails only when the tokenizer breaks its own bounds, which
// TestReadCardiacRequestStopsEarly also checks. The Decoder.Token reader
// holds about half a GB on the 140 MB bodies, so it runs only with
// VETLENS_READER_EXPERIMENT=1 (and -v to read the figures;
// experiments/2026-11-28-request-reader.md).
func TestDecoderReaderBounds(t *testing.T) {
	if os.Getenv("VETLENS_READER_EXPERIMENT") == "" {
		t.Skip("the request reader experiment: set VETLENS_READER_EXPERIMENT=1")
	}
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a, 0xa5, 0x3c}, MaxImageBytes/3))
	img := base64.StdEncoding.EncodeToString(testPNG(t))
	const size = 140 << 20
	for _, tc := range []struct {
		name             string
		head, unit, tail string
		total            int
		maxRead          int64 // the tokenizer's bound (TestReadCardiacRequestStopsEarly)
	}{
		{"largest valid single image (10 MB, 13.3 MB base64)", `{"image":"` + big + `"}`, "", "", 0, 0},
		{"one image string of 30 MB", `{"image":"`, `A`, `"}`, 30 << 20, MaxImageBase64 + 128<<10},
		{"one image string of 140 MB", `{"image":"`, `A`, `"}`, size, MaxImageBase64 + 128<<10},
		{"an ignored string of 140 MB", `{"image":"` + img + `","x":"`, `a`, `"}`, size, MaxIgnoredBytes + 128<<10},
		{"a uuid of 140 MB", `{"uuid":"`, `u`, `"}`, size, 128 << 10},
		{"numbers in images", `{"images":[`, `1,`, `1]}`, size, 128 << 10},
		{"deep nesting in an ignored field", `{"x":`, `[`, `]}`, size, 128 << 10},
	} {
		for _, rd := range readers {
			body := &lazyBody{head: tc.head, unit: tc.unit, tail: tc.tail}
			if tc.unit != "" {
				body.n = (tc.total - len(tc.head) - len(tc.tail)) / len(tc.unit)
			}
			var err error
			start := time.Now()
			peak, alloc := peakHeap(func() { _, err = rd.read(body, true) })
			t.Logf("%-50s %-9s read %6.1f of %6.1f MB, allocated %6.1f MB, peak heap +%6.1f MB, %5.0f ms, kind %d",
				tc.name, rd.name, mb(body.pos), mb(body.size()), mb(int64(alloc)), mb(int64(peak)), float64(time.Since(start).Microseconds())/1000, kind(err))
			if tc.maxRead == 0 && err != nil {
				t.Errorf("%s %s: %v", tc.name, rd.name, err)
			}
			if rd.name == "tokenizer" && tc.maxRead > 0 && body.pos > tc.maxRead {
				t.Errorf("%s: tokenizer read %d bytes, over its bound %d", tc.name, body.pos, tc.maxRead)
			}
		}
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkReadCardiacRequest is the largest valid single request through
// both readers: B/op and allocs/op are the figures of the experiment.
func BenchmarkReadCardiacRequest(b *testing.B) {
	body := []byte(`{"image":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a, 0xa5, 0x3c}, MaxImageBytes/3)) + `"}`)
	for _, rd := range readers {
		b.Run(rd.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := rd.read(bytes.NewReader(body), true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
