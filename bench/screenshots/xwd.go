package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math/bits"
	"os/exec"
)

// xwdCapture grabs the X window named title with xwd(1) (Debian's
// x11-apps) and decodes it: the screenshot run's fallback where OpenGL's
// front buffer reads back black (Mesa's software GL under Xvfb).
func xwdCapture(title string) (image.Image, error) {
	out, err := exec.Command("xwd", "-silent", "-name", title).Output()
	if err != nil {
		return nil, fmt.Errorf("xwd -name %q: %w", title, err)
	}
	return decodeXWD(out)
}

// xwdHeader is the X Window Dump header (X11 XWDFileHeader, version 7):
// 25 big-endian 32-bit fields.
type xwdHeader struct {
	HeaderSize, FileVersion, PixmapFormat, PixmapDepth, PixmapWidth, PixmapHeight uint32
	XOffset, ByteOrder, BitmapUnit, BitmapBitOrder, BitmapPad, BitsPerPixel       uint32
	BytesPerLine, VisualClass, RedMask, GreenMask, BlueMask, BitsPerRGB           uint32
	ColormapEntries, NColors, WindowWidth, WindowHeight, WindowX, WindowY         uint32
	WindowBorderWidth                                                             uint32
}

// decodeXWD decodes a ZPixmap TrueColor dump of 24 or 32 bits per pixel,
// the format xwd writes for Xvfb's 24-bit screens.
func decodeXWD(b []byte) (image.Image, error) {
	var h xwdHeader
	if err := binary.Read(bytes.NewReader(b), binary.BigEndian, &h); err != nil {
		return nil, fmt.Errorf("xwd header: %w", err)
	}
	if h.FileVersion != 7 || h.PixmapFormat != 2 || (h.BitsPerPixel != 32 && h.BitsPerPixel != 24) {
		return nil, fmt.Errorf("xwd: unsupported dump (version %d, format %d, %d bpp)", h.FileVersion, h.PixmapFormat, h.BitsPerPixel)
	}
	w, ht, bpl := int(h.PixmapWidth), int(h.PixmapHeight), int(h.BytesPerLine)
	start := int(h.HeaderSize) + int(h.NColors)*12
	if w <= 0 || ht <= 0 || w > 1<<14 || ht > 1<<14 || start < 0 || len(b) < start+bpl*ht || bpl < w*int(h.BitsPerPixel)/8 {
		return nil, errors.New("xwd: truncated or inconsistent dump")
	}
	bpp := int(h.BitsPerPixel) / 8
	channel := func(px, mask uint32) uint8 {
		if mask == 0 {
			return 0
		}
		v := (px & mask) >> bits.TrailingZeros32(mask)
		width := bits.OnesCount32(mask)
		return uint8(v * 255 / (1<<width - 1))
	}
	img := image.NewRGBA(image.Rect(0, 0, w, ht))
	for y := 0; y < ht; y++ {
		row := b[start+y*bpl:]
		for x := 0; x < w; x++ {
			p := row[x*bpp : x*bpp+bpp]
			var px uint32
			if h.ByteOrder == 0 { // LSBFirst
				for i := bpp - 1; i >= 0; i-- {
					px = px<<8 | uint32(p[i])
				}
			} else {
				for i := 0; i < bpp; i++ {
					px = px<<8 | uint32(p[i])
				}
			}
			img.SetRGBA(x, y, color.RGBA{channel(px, h.RedMask), channel(px, h.GreenMask), channel(px, h.BlueMask), 0xff})
		}
	}
	return img, nil
}
