package main

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"testing"
)

// dump writes a 3x2 ZPixmap TrueColor XWD of 32 or 24 bits per pixel in
// the given byte order, with one colormap entry to skip.
func dump(t *testing.T, bpp, order uint32) []byte {
	t.Helper()
	const w, h = 3, 2
	hd := xwdHeader{HeaderSize: 100 + 8, FileVersion: 7, PixmapFormat: 2, PixmapDepth: 24, PixmapWidth: w, PixmapHeight: h,
		ByteOrder: order, BitsPerPixel: bpp, BytesPerLine: w*bpp/8 + 2, VisualClass: 4,
		RedMask: 0xff0000, GreenMask: 0x00ff00, BlueMask: 0x0000ff, BitsPerRGB: 8, NColors: 1}
	var buf bytes.Buffer
	binary.Write(&buf, binary.BigEndian, hd)
	buf.Write(make([]byte, 8))  // window name
	buf.Write(make([]byte, 12)) // one colormap entry
	px := [h][w]uint32{{0xff0000, 0x00ff00, 0x0000ff}, {0x102030, 0xffffff, 0}}
	for y := range h {
		for x := range w {
			v := px[y][x]
			b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}[4-bpp/8:]
			if order == 0 { // LSBFirst
				for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
					b[i], b[j] = b[j], b[i]
				}
			}
			buf.Write(b)
		}
		buf.Write([]byte{0, 0}) // row padding
	}
	return buf.Bytes()
}

func TestDecodeXWD(t *testing.T) {
	want := [2][3]color.RGBA{{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}, {{0x10, 0x20, 0x30, 255}, {255, 255, 255, 255}, {0, 0, 0, 255}}}
	for _, tc := range []struct {
		name       string
		bpp, order uint32
	}{{"32 bpp LSB first", 32, 0}, {"32 bpp MSB first", 32, 1}, {"24 bpp LSB first", 24, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := decodeXWD(dump(t, tc.bpp, tc.order))
			if err != nil {
				t.Fatal(err)
			}
			for y := range 2 {
				for x := range 3 {
					if got := img.At(x, y); got != want[y][x] {
						t.Errorf("(%d,%d) = %v, want %v", x, y, got, want[y][x])
					}
				}
			}
		})
	}
	good := dump(t, 32, 0)
	for name, b := range map[string][]byte{"empty": nil, "truncated": good[:len(good)-5], "16 bpp": func() []byte {
		b := bytes.Clone(good)
		binary.BigEndian.PutUint32(b[11*4:], 16)
		return b
	}()} {
		if _, err := decodeXWD(b); err == nil {
			t.Errorf("%s dump decoded", name)
		}
	}
}
