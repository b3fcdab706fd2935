package httpapi

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"log/slog"
	"strings"
	"testing"

	"vetlens/internal/dicomtest"
)

// TestErrorBodiesArePlain: an image a library cannot read is refused
// with a plain message naming what is wrong, without the library's text,
// which goes to the server's log with the whole chain (issue 46 saw
// "new limit exceeds current limit of buffer, new limit: 4294967439" in a
// 400 body). The unsupported DICOM transfer syntax keeps its own message,
// which tells the clinic what to do.
func TestErrorBodiesArePlain(t *testing.T) {
	var logs bytes.Buffer
	a := newAPI(t, apiOpts{cardiac: fakeCardiac{}, cfg: Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	// An item longer than its sequence: the DICOM parser's buffer limit.
	nested := dicomtest.Explicit(func(w io.Writer) {
		dicomtest.ElemHeader(w, 0x0008, 0x1140, "SQ", 16)
		w.Write([]byte{0xfe, 0xff, 0x00, 0xe0, 0x00, 0xff, 0xff, 0xff})
		w.Write(make([]byte, 8))
	})
	// A PNG whose header is sound and whose pixel data is not zlib.
	var pb bytes.Buffer
	png.Encode(&pb, image.NewGray(image.Rect(0, 0, 64, 64)))
	badPNG := pb.Bytes()
	if i := bytes.Index(badPNG, []byte("IDAT")); i > 0 {
		badPNG = bytes.Clone(badPNG)
		copy(badPNG[i+4:], "\xff\xff\xff\xff")
	}
	rle := dicomtest.Explicit(func(w io.Writer) {})
	rle = bytes.Replace(rle, []byte("1.2.840.10008.1.2.1\x00"), []byte("1.2.840.10008.1.2.5\x00"), 1)
	for _, tc := range []struct {
		name       string
		img        []byte
		status     int
		want       string // in the body
		notInBody  string // the library's text
		wantLogged bool
	}{
		{"DICOM item longer than its sequence", nested, 400, "corrupt DICOM file: the data set could not be parsed", "limit", true},
		{"PNG with broken pixel data", badPNG, 400, "the png data could not be decoded", "zlib", true},
		{"unsupported transfer syntax", rle, 400, "RLE Lossless (1.2.840.10008.1.2.5)", "\x00", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			resp, b := a.do("POST", "/v3/predict", a.key, map[string]any{"image": b64(tc.img)})
			msg, _ := obj(t, b)["error"].(string)
			if resp.StatusCode != tc.status || !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.notInBody) {
				t.Fatalf("%d %q: want %d with %q and without %q", resp.StatusCode, msg, tc.status, tc.want, tc.notInBody)
			}
			logged := strings.Contains(logs.String(), "request refused")
			if logged != tc.wantLogged || (tc.wantLogged && !strings.Contains(logs.String(), tc.notInBody)) {
				t.Errorf("log %q: want the chain logged %v, with %q", logs.String(), tc.wantLogged, tc.notInBody)
			}
		})
	}
}
