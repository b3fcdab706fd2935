package imageproc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"strings"
	"testing"

	"vetlens/internal/exiftest"
)

// pngChunk encodes one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

// craftPNG returns a syntactically valid PNG whose header claims w x h
// 8-bit gray pixels but whose IDAT holds only a few bytes: the shape of a
// decompression bomb (a real bomb is a few KB of zeros that inflate to GBs).
func craftPNG(w, h uint32) []byte { return craftPNGType(w, h, 8, 0) }

// craftPNGType is craftPNG with a bit depth and PNG colour type (0 gray,
// 2 RGB, 3 paletted, 4 gray+alpha, 6 RGBA).
func craftPNGType(w, h uint32, depth, colorType byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = depth
	ihdr[9] = colorType
	b.Write(pngChunk("IHDR", ihdr))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 4096))
	zw.Close()
	b.Write(pngChunk("IDAT", z.Bytes()))
	b.Write(pngChunk("IEND", nil))
	return b.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// patchJPEGSize rewrites the SOF0 or SOF2 frame header's height and width.
func patchJPEGSize(t testing.TB, b []byte, w, h uint16) []byte {
	t.Helper()
	out := append([]byte(nil), b...)
	i := bytes.Index(out, []byte{0xff, 0xc0})
	if i < 0 {
		i = bytes.Index(out, []byte{0xff, 0xc2})
	}
	if i < 0 {
		t.Fatal("no SOF0 or SOF2 marker")
	}
	binary.BigEndian.PutUint16(out[i+5:], h)
	binary.BigEndian.PutUint16(out[i+7:], w)
	return out
}

func gradient(w, h int) *image.Gray {
	g := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			g.SetGray(x, y, color.Gray{uint8((x*7 + y*3) % 256)})
		}
	}
	return g
}

func rgbaImage(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x + y), uint8(x * 3)})
		}
	}
	return m
}

func gray16Image(w, h int) *image.Gray16 {
	m := image.NewGray16(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetGray16(x, y, color.Gray16{uint16(x*500 + y*40)})
		}
	}
	return m
}

func palettedImage(w, h int) *image.Paletted {
	m := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetColorIndex(x, y, uint8(x+y))
		}
	}
	return m
}

func TestDecode(t *testing.T) {
	cmyk, err := os.ReadFile("testdata/cmyk.jpg")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := os.ReadFile("testdata/progressive444.jpg")
	if err != nil {
		t.Fatal(err)
	}
	goodJPEG := encodeJPEG(t, gradient(64, 64))
	goodPNG := encodePNG(t, gradient(64, 64))
	cases := []struct {
		name    string
		data    []byte
		wantErr error
		wantFmt string
		wantTyp string // %T of the decoded image
		w, h    int
	}{
		{name: "zero bytes", data: nil, wantErr: ErrEmpty},
		{name: "text", data: []byte("hello, this is not an image"), wantErr: ErrFormat},
		{name: "gif", data: []byte("GIF89a\x01\x00\x01\x00"), wantErr: ErrFormat},
		{name: "png signature only", data: []byte("\x89PNG\r\n\x1a\n"), wantErr: ErrCorrupt},
		{name: "truncated png", data: goodPNG[:len(goodPNG)/2], wantErr: ErrCorrupt},
		{name: "png with flipped bytes", data: flip(goodPNG, 60), wantErr: ErrCorrupt},
		{name: "jpeg SOI only", data: []byte{0xff, 0xd8}, wantErr: ErrCorrupt},
		{name: "truncated jpeg", data: goodJPEG[:len(goodJPEG)/2], wantErr: ErrCorrupt},
		{name: "1x1 png", data: encodePNG(t, gradient(1, 1)), wantErr: ErrTooSmall},
		{name: "1x1 jpeg", data: encodeJPEG(t, gradient(1, 1)), wantErr: ErrTooSmall},
		{name: "31x200 png", data: encodePNG(t, gradient(31, 200)), wantErr: ErrTooSmall},
		{name: "png bomb 20000x20000", data: craftPNG(20000, 20000), wantErr: ErrTooLarge},
		{name: "png 8000x6000 over megapixels", data: craftPNG(8000, 6000), wantErr: ErrTooLarge},
		{name: "png 16385x40 over side", data: craftPNG(16385, 40), wantErr: ErrTooLarge},
		{name: "png 4294967295 wide", data: craftPNG(0xffffffff, 1), wantErr: ErrCorrupt},
		{name: "jpeg header 20000x20000", data: patchJPEGSize(t, goodJPEG, 20000, 20000), wantErr: ErrTooLarge},
		{name: "16-bit rgba png 8000x5000 over decode memory", data: craftPNGType(8000, 5000, 16, 6), wantErr: ErrTooLarge},
		{name: "progressive jpeg header 8000x5000 over decode memory", data: patchJPEGSize(t, prog, 8000, 5000), wantErr: ErrTooLarge},
		{name: "png header fits, data short", data: craftPNG(2000, 2000), wantErr: ErrCorrupt},
		{name: "32x32 png", data: encodePNG(t, gradient(32, 32)), wantFmt: "png", wantTyp: "*image.Gray", w: 32, h: 32},
		{name: "gray jpeg", data: goodJPEG, wantFmt: "jpeg", wantTyp: "*image.Gray", w: 64, h: 64},
		{name: "colour jpeg", data: encodeJPEG(t, rgbaImage(80, 50)), wantFmt: "jpeg", wantTyp: "*image.YCbCr", w: 80, h: 50},
		{name: "progressive jpeg", data: prog, wantFmt: "jpeg", wantTyp: "*image.YCbCr", w: 64, h: 48},
		{name: "cmyk jpeg", data: cmyk, wantFmt: "jpeg", wantTyp: "*image.CMYK", w: 64, h: 48},
		{name: "16-bit gray png", data: encodePNG(t, gray16Image(70, 40)), wantFmt: "png", wantTyp: "*image.Gray16", w: 70, h: 40},
		{name: "rgba png", data: encodePNG(t, rgbaImage(50, 60)), wantFmt: "png", wantTyp: "*image.NRGBA", w: 50, h: 60},
		{name: "paletted png", data: encodePNG(t, palettedImage(40, 33)), wantFmt: "png", wantTyp: "*image.Paletted", w: 40, h: 33},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img, format, err := Decode(tc.data)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if img != nil {
					t.Fatalf("got an image with error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if format != tc.wantFmt {
				t.Errorf("format %q, want %q", format, tc.wantFmt)
			}
			if got := fmt.Sprintf("%T", img); got != tc.wantTyp {
				t.Errorf("type %s, want %s", got, tc.wantTyp)
			}
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.w, tc.h)
			}
			// Every decodable type must letterbox without error.
			if _, _, err := LetterboxGray(img, 32); err != nil {
				t.Errorf("letterbox gray: %v", err)
			}
			if _, _, err := LetterboxRGB(img, 32); err != nil {
				t.Errorf("letterbox rgb: %v", err)
			}
		})
	}
}

// TestDecodeBombAllocatesLittle checks that refusing a bomb costs only the
// header parse, not the claimed 400 MB.
func TestDecodeBombAllocatesLittle(t *testing.T) {
	bomb := craftPNG(20000, 20000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		if _, _, err := Decode(bomb); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("10 refusals allocated %d bytes", d)
	}
}

func TestCheckSizeBoundaries(t *testing.T) {
	cases := []struct {
		w, h int
		want error
	}{
		{MinSide, MinSide, nil},
		{MinSide - 1, MinSide, ErrTooSmall},
		{MaxSide, 2000, nil},
		{MaxSide + 1, 100, ErrTooLarge},
		{8000, 5000, nil}, // exactly 40 MP
		{8000, 5001, ErrTooLarge},
	}
	for _, tc := range cases {
		if err := CheckSize(tc.w, tc.h); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("CheckSize(%d,%d) = %v, want %v", tc.w, tc.h, err, tc.want)
		}
	}
}

func flip(b []byte, from int) []byte {
	out := append([]byte(nil), b...)
	for i := from; i < len(out)-12; i++ {
		out[i] ^= 0x5a
	}
	return out
}

func TestDecodeBytes(t *testing.T) {
	cfg := func(m color.Model) image.Config { return image.Config{ColorModel: m, Width: 1000, Height: 1000} }
	const mp = 1_000_000
	cases := []struct {
		name        string
		format      string
		cfg         image.Config
		progressive bool
		want        int64
	}{
		{"png gray", "png", cfg(color.GrayModel), false, mp},
		{"png gray16", "png", cfg(color.Gray16Model), false, 2 * mp},
		{"png paletted", "png", cfg(color.Palette(palette.Plan9)), false, mp},
		{"png nrgba", "png", cfg(color.NRGBAModel), false, 4 * mp},
		{"png rgba64", "png", cfg(color.RGBA64Model), false, 8 * mp},
		{"jpeg gray", "jpeg", cfg(color.GrayModel), false, mp},
		{"jpeg gray progressive", "jpeg", cfg(color.GrayModel), true, 5 * mp},
		{"jpeg ycbcr", "jpeg", cfg(color.YCbCrModel), false, 3 * mp},
		{"jpeg ycbcr progressive", "jpeg", cfg(color.YCbCrModel), true, 15 * mp},
		{"jpeg cmyk progressive", "jpeg", cfg(color.CMYKModel), true, 24 * mp},
	}
	for _, tc := range cases {
		if got := DecodeBytes(tc.format, tc.cfg, tc.progressive); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestJPEGProgressive(t *testing.T) {
	prog, err := os.ReadFile("testdata/progressive444.jpg")
	if err != nil {
		t.Fatal(err)
	}
	base := encodeJPEG(t, rgbaImage(40, 40))
	cases := []struct {
		name string
		data []byte
		want bool
	}{
		{"progressive", prog, true},
		{"baseline", base, false},
		{"cmyk baseline", mustRead(t, "testdata/cmyk.jpg"), false},
		{"truncated before frame", prog[:30], false},
		{"garbage after SOI", []byte{0xff, 0xd8, 1, 2, 3, 4, 5}, false},
		{"huge segment length", []byte{0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0, 0}, false},
	}
	for _, tc := range cases {
		if got := jpegProgressive(tc.data); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckHeader(t *testing.T) {
	ok := encodePNG(t, image.NewGray(image.Rect(0, 0, 64, 48)))
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrEmpty},
		{"not an image", []byte("hello world, not an image"), ErrFormat},
		{"truncated PNG header", ok[:20], ErrCorrupt},
		{"1x1", encodePNG(t, image.NewGray(image.Rect(0, 0, 1, 1))), ErrTooSmall},
	} {
		if _, _, err := CheckHeader(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	cfg, format, err := CheckHeader(ok)
	if err != nil || format != "png" || cfg.Width != 64 || cfg.Height != 48 {
		t.Fatalf("valid PNG: %+v %q %v", cfg, format, err)
	}
}

func TestDecodeCost(t *testing.T) {
	prog := mustRead(t, "testdata/progressive444.jpg")
	progCfg, _, _ := CheckHeader(prog)
	for _, tc := range []struct {
		name string
		b    []byte
		want int64
		err  error
	}{
		{"png gray", encodePNG(t, image.NewGray(image.Rect(0, 0, 64, 48))), 64 * 48, nil},
		{"png rgba", encodePNG(t, rgbaImage(40, 40)), 4 * 40 * 40, nil},
		{"jpeg baseline", encodeJPEG(t, rgbaImage(40, 40)), 3 * 40 * 40, nil},
		{"jpeg progressive", prog, 15 * int64(progCfg.Width*progCfg.Height), nil},
		{"empty", nil, 0, ErrEmpty},
		{"header over the limits", craftPNG(20000, 20000), 0, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := DecodeCost(tc.b)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("%d %v, want %d %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestJPEGCutShort: a JPEG cut anywhere after its frame header is refused
// from the header check exactly when Go's decoder refuses it (OpenCV's
// would fill the rest with grey); a complete file, one with bytes after its
// end, and one whose EXIF thumbnail ends but whose own scan is cut are
// told apart.
func TestJPEGCutShort(t *testing.T) {
	for _, name := range []string{"baseline", "progressive"} {
		b := encodeJPEG(t, rgbaImage(64, 48))
		if name == "progressive" {
			b = mustRead(t, "testdata/progressive444.jpg")
		}
		sos := jpegSegments(b, func(byte, []byte) bool { return true })
		if sos < 0 || b[sos+1] != 0xda {
			t.Fatalf("%s: no scan found (%d)", name, sos)
		}
		for n := 2; n <= len(b); n += max(1, min(7, (len(b)-sos)/97)) {
			if _, err := jpeg.DecodeConfig(bytes.NewReader(b[:n])); err != nil {
				continue // refused from the header before this check
			}
			_, goErr := jpeg.Decode(bytes.NewReader(b[:n]))
			if cut := jpegCutShort(b[:n]); cut != (goErr != nil) {
				t.Fatalf("%s cut at %d of %d: cut short %v, Go's decoder %v", name, n, len(b), cut, goErr)
			}
		}
		for _, tc := range []struct {
			what string
			b    []byte
			want bool
		}{
			{"complete", b, false},
			{"last byte missing", b[:len(b)-1], true},
			{"bytes after the end", append(append([]byte{}, b...), "trailing bytes"...), false},
			{"a thumbnail ends, the scan is cut", thumbnailed(b)[:len(thumbnailed(b))-100], true},
			{"with a thumbnail, complete", thumbnailed(b), false},
			{"cut before the scan", b[:sos], true},
			{"cut in the scan header", b[:sos+3], true},
		} {
			if got := jpegCutShort(tc.b); got != tc.want {
				t.Errorf("%s, %s: %v, want %v", name, tc.what, got, tc.want)
			}
		}
		if _, _, err := CheckHeader(b[:len(b)-100]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: CheckHeader on a cut file: %v, want ErrCorrupt", name, err)
		}
	}
}

// thumbnailed returns JPEG bytes b with an APP1 segment holding a small
// JPEG (its own scan and end-of-image marker) after the start of image.
func thumbnailed(b []byte) []byte {
	var th bytes.Buffer
	jpeg.Encode(&th, gradient(16, 16), nil)
	return exiftest.JPEG(b, th.Bytes())
}

// TestFormatErrorNamesTheFormat: an image VetLens does not read is
// ErrFormat from both the header check and Decode, and the message says
// what it is and what to do (an iPhone's HEIC photo above all).
func TestFormatErrorNamesTheFormat(t *testing.T) {
	pad := strings.Repeat("\x00", 64)
	for _, tc := range []struct {
		b    string
		want string
	}{
		{"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + pad, "HEIC photo"},
		{"\x00\x00\x00\x1cftypavif" + pad, "AVIF"},
		{"RIFF\x24\x00\x00\x00WEBPVP8 " + pad, "WebP"},
		{"GIF89a\x10\x00\x10\x00" + pad, "GIF"},
		{"BM\x36\x00\x00\x00" + pad, "BMP"},
		{"II*\x00\x08\x00\x00\x00" + pad, "TIFF"},
		{"%PDF-1.7\n" + pad, "PDF"},
		{"hello, not an image" + pad, ""},
	} {
		for name, f := range map[string]func([]byte) error{
			"CheckHeader": func(b []byte) error { _, _, err := CheckHeader(b); return err },
			"Decode":      func(b []byte) error { _, _, err := Decode(b); return err },
		} {
			err := f([]byte(tc.b))
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%s(%q): %v, want ErrFormat", name, tc.b[:12], err)
			}
			if tc.want == "" && err.Error() != ErrFormat.Error() || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s(%q): %q, want it to name %q", name, tc.b[:12], err, tc.want)
			}
		}
	}
}
