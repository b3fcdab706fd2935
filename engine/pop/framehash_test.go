package pop

import (
	"bytes"
	"image/png"
	"testing"

	"gocv.io/x/gocv"
)

// TestFrameHash: the hash follows the decoded picture, not the file's
// bytes: appended bytes and a lossless re-encoding keep it, another
// frame or a lossy re-encoding changes it.
func TestFrameHash(t *testing.T) {
	jpg := readFrame(t, "testdata/screen_0000.jpg")
	other := readFrame(t, "testdata/screen_0001.jpg")
	decoded, err := DecodeFrame(jpg)
	if err != nil {
		t.Fatal(err)
	}
	defer decoded.Close()
	img, err := decoded.ToImage()
	if err != nil {
		t.Fatal(err)
	}
	var lossless bytes.Buffer
	if err := png.Encode(&lossless, img); err != nil {
		t.Fatal(err)
	}
	lossy, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, decoded, []int{gocv.IMWriteJpegQuality, 60})
	if err != nil {
		t.Fatal(err)
	}
	defer lossy.Close()

	hash := func(b []byte) [32]byte {
		t.Helper()
		m, err := DecodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		return FrameHash(m)
	}
	ref := hash(jpg)
	for _, tc := range []struct {
		name string
		b    []byte
		same bool
	}{
		{"the same file", jpg, true},
		{"bytes appended", append(append([]byte{}, jpg...), "trailing garbage, a second copy of the EXIF..."...), true},
		{"a kilobyte appended", append(append([]byte{}, jpg...), make([]byte, 1024)...), true},
		{"lossless PNG of the decoded frame", lossless.Bytes(), true},
		{"another frame", other, false},
		{"lossy re-encoding", lossy.GetBytes(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hash(tc.b); (got == ref) != tc.same {
				t.Fatalf("same hash %v, want %v", got == ref, tc.same)
			}
		})
	}
	an, err := AnalyzeBytes(append(append([]byte{}, jpg...), 0, 1, 2))
	if err != nil || an.FrameHash != ref {
		t.Fatalf("Analysis.FrameHash differs from FrameHash: %v", err)
	}
}
