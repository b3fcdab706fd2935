package imageproc

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/draw"
)

// Orientation is the EXIF Orientation tag (0x0112) of a photo: how the
// stored pixels must be turned or mirrored to show the picture upright, as
// every browser and photo viewer shows it. Phones store a portrait photo
// as landscape pixels with Orientation 6 or 8. Values outside 1-8 are
// read as 1.
type Orientation uint8

// The eight EXIF orientations, named for what shows the picture upright.
const (
	OrientNormal      Orientation = 1 // as stored
	OrientMirrorX     Orientation = 2 // mirrored left to right
	OrientRotate180   Orientation = 3 // turned half a turn
	OrientMirrorY     Orientation = 4 // mirrored top to bottom
	OrientTranspose   Orientation = 5 // mirrored about the top-left to bottom-right diagonal
	OrientRotate90CW  Orientation = 6 // turned a quarter turn clockwise
	OrientTransverse  Orientation = 7 // mirrored about the top-right to bottom-left diagonal
	OrientRotate90CCW Orientation = 8 // turned a quarter turn counter-clockwise
)

// SwapsSides reports whether showing the picture upright swaps its width
// and height (orientations 5-8).
func (o Orientation) SwapsSides() bool { return o >= OrientTranspose && o <= OrientRotate90CCW }

// Displayed returns the size w x h of the stored pixels as shown upright.
func (o Orientation) Displayed(w, h int) (int, int) {
	if o.SwapsSides() {
		return h, w
	}
	return w, h
}

// source returns the stored pixel (x, y) that shows at upright pixel
// (X, Y) as an affine map: x = ax*X + bx*Y + cx, y = ay*X + by*Y + cy,
// for stored pixels w x h.
func (o Orientation) source(w, h int) (ax, bx, cx, ay, by, cy int) {
	switch o {
	case OrientMirrorX:
		return -1, 0, w - 1, 0, 1, 0
	case OrientRotate180:
		return -1, 0, w - 1, 0, -1, h - 1
	case OrientMirrorY:
		return 1, 0, 0, 0, -1, h - 1
	case OrientTranspose:
		return 0, 1, 0, 1, 0, 0
	case OrientRotate90CW:
		return 0, 1, 0, -1, 0, h - 1
	case OrientTransverse:
		return 0, -1, w - 1, -1, 0, h - 1
	case OrientRotate90CCW:
		return 0, -1, w - 1, 1, 0, 0
	}
	return 1, 0, 0, 0, 1, 0
}

// maxOrientationScan bounds how far into a file ReadOrientation looks for
// the EXIF block: JPEG and PNG writers put it at the start.
const maxOrientationScan = 1 << 20

// ReadOrientation returns the EXIF orientation of JPEG bytes (an APP1
// "Exif" segment before the scan) or PNG bytes (an eXIf chunk), or
// OrientNormal when there is none or it cannot be read. It never trusts a
// length or offset beyond the data.
func ReadOrientation(b []byte) Orientation {
	switch {
	case bytes.HasPrefix(b, []byte{0xff, 0xd8}):
		return tiffOrientation(jpegExif(b))
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return tiffOrientation(pngExif(b))
	}
	return OrientNormal
}

// jpegExif returns the TIFF block of a JPEG's first Exif APP1 segment
// before the scan, or nil.
func jpegExif(b []byte) (tiff []byte) {
	if len(b) > maxOrientationScan {
		b = b[:maxOrientationScan]
	}
	jpegSegments(b, func(m byte, data []byte) bool {
		if m == 0xe1 && bytes.HasPrefix(data, []byte("Exif\x00\x00")) {
			tiff = data[6:]
			return false
		}
		return true
	})
	return tiff
}

// pngExif returns the data of a PNG's eXIf chunk, or nil.
func pngExif(b []byte) []byte {
	i := 8 // after the signature
	for i+8 <= len(b) && i < maxOrientationScan {
		n := binary.BigEndian.Uint32(b[i:])
		typ := string(b[i+4 : i+8])
		if n > uint32(len(b)-i-8) {
			return nil
		}
		switch typ {
		case "eXIf":
			return b[i+8 : i+8+int(n)]
		case "IEND":
			return nil
		}
		i += 12 + int(n) // length, type, data, CRC
	}
	return nil
}

// tiffOrientation reads tag 0x0112 of IFD0 from a TIFF block (the body of
// an EXIF segment), or OrientNormal.
func tiffOrientation(t []byte) Orientation {
	if len(t) < 8 {
		return OrientNormal
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return OrientNormal
	}
	if bo.Uint16(t[2:]) != 42 {
		return OrientNormal
	}
	ifd := bo.Uint32(t[4:])
	if ifd < 8 || uint64(ifd)+2 > uint64(len(t)) {
		return OrientNormal
	}
	n := int(bo.Uint16(t[ifd:]))
	for k := range n {
		e := uint64(ifd) + 2 + 12*uint64(k)
		if e+12 > uint64(len(t)) {
			return OrientNormal
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		typ, count := bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:])
		var v uint32
		switch {
		case typ == 3 && count >= 1: // SHORT, as the standard says
			v = uint32(bo.Uint16(t[e+8:]))
		case typ == 4 && count >= 1: // LONG, as some writers put it
			v = bo.Uint32(t[e+8:])
		default:
			return OrientNormal
		}
		if v >= 1 && v <= 8 {
			return Orientation(v)
		}
		return OrientNormal
	}
	return OrientNormal
}

// OrientBytes is the memory Orient needs for a decoded image with this
// header (its format "jpeg" or "png"): none for OrientNormal, else one
// more image, colour JPEGs as RGBA (4 bytes a pixel).
func OrientBytes(format string, cfg image.Config, o Orientation) int64 {
	if o == OrientNormal {
		return 0
	}
	if format == "jpeg" && cfg.ColorModel == color.YCbCrModel {
		return 4 * int64(cfg.Width) * int64(cfg.Height)
	}
	return DecodeBytes(format, cfg, false)
}

// Orient returns img shown upright for orientation o, as a new image
// with bounds starting at (0, 0) (img itself for OrientNormal). Grey,
// 16-bit grey, paletted, RGBA, NRGBA, 64-bit and CMYK images keep their
// type and pixels exactly; a YCbCr image (a colour JPEG) becomes
// *image.RGBA, and any other type is first drawn into *image.RGBA.
func Orient(img image.Image, o Orientation) image.Image {
	if o < OrientMirrorX || o > OrientRotate90CCW {
		return img
	}
	switch s := img.(type) {
	case *image.Gray:
		return orientLayout(s, o, 1, image.NewGray, func(m *image.Gray) ([]byte, int) { return m.Pix, m.Stride })
	case *image.Gray16:
		return orientLayout(s, o, 2, image.NewGray16, func(m *image.Gray16) ([]byte, int) { return m.Pix, m.Stride })
	case *image.Paletted:
		return orientLayout(s, o, 1, func(r image.Rectangle) *image.Paletted { return image.NewPaletted(r, s.Palette) },
			func(m *image.Paletted) ([]byte, int) { return m.Pix, m.Stride })
	case *image.RGBA:
		return orientLayout(s, o, 4, image.NewRGBA, func(m *image.RGBA) ([]byte, int) { return m.Pix, m.Stride })
	case *image.NRGBA:
		return orientLayout(s, o, 4, image.NewNRGBA, func(m *image.NRGBA) ([]byte, int) { return m.Pix, m.Stride })
	case *image.CMYK:
		return orientLayout(s, o, 4, image.NewCMYK, func(m *image.CMYK) ([]byte, int) { return m.Pix, m.Stride })
	case *image.RGBA64:
		return orientLayout(s, o, 8, image.NewRGBA64, func(m *image.RGBA64) ([]byte, int) { return m.Pix, m.Stride })
	case *image.NRGBA64:
		return orientLayout(s, o, 8, image.NewNRGBA64, func(m *image.NRGBA64) ([]byte, int) { return m.Pix, m.Stride })
	case *image.YCbCr:
		return orientYCbCr(s, o)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(rgba, rgba.Bounds(), img, b.Min, draw.Src) // as MirrorX converts
	return Orient(rgba, o)
}

// pixImage is an image whose pixels lie in one byte slice, a fixed number
// of bytes each (Gray, RGBA, CMYK, ...).
type pixImage interface {
	image.Image
	PixOffset(x, y int) int
}

// orientLayout is Orient for an image of a pixel layout with bpp bytes a
// pixel: newImg makes the upright image, pix gives an image's pixels and
// stride.
func orientLayout[T pixImage](s T, o Orientation, bpp int, newImg func(image.Rectangle) T, pix func(T) ([]byte, int)) T {
	b := s.Bounds()
	W, H := o.Displayed(b.Dx(), b.Dy())
	d := newImg(image.Rect(0, 0, W, H))
	sp, ss := pix(s)
	dp, ds := pix(d)
	orientPix(dp, ds, sp[s.PixOffset(b.Min.X, b.Min.Y):], ss, b.Dx(), b.Dy(), bpp, o)
	return d
}

// orientPix writes into dst (the upright image, stride dstride) the
// stored pixels src (w x h, stride sstride, bpp bytes a pixel, starting
// at the image's first pixel) turned or mirrored for o.
func orientPix(dst []byte, dstride int, src []byte, sstride, w, h, bpp int, o Orientation) {
	W, H := o.Displayed(w, h)
	ax, bx, cx, ay, by, cy := o.source(w, h)
	step := ay*sstride + ax*bpp // the source offset's change per upright pixel along a row
	for Y := range H {
		row := dst[Y*dstride:][:W*bpp]
		off := (by*Y+cy)*sstride + (bx*Y+cx)*bpp // the source of (0, Y)
		if bpp == 1 {
			for X := range row {
				row[X] = src[off]
				off += step
			}
			continue
		}
		for X := 0; X < len(row); X += bpp {
			copy(row[X:X+bpp], src[off:off+bpp])
			off += step
		}
	}
}

// orientYCbCr is Orient for a YCbCr image: each upright pixel converted
// from its stored luma and chroma samples into *image.RGBA in one pass.
func orientYCbCr(s *image.YCbCr, o Orientation) *image.RGBA {
	b := s.Bounds()
	w, h := b.Dx(), b.Dy()
	W, H := o.Displayed(w, h)
	ax, bx, cx, ay, by, cy := o.source(w, h)
	d := image.NewRGBA(image.Rect(0, 0, W, H))
	for Y := range H {
		row := d.Pix[Y*d.Stride:][:4*W]
		for X := range W {
			x, y := b.Min.X+ax*X+bx*Y+cx, b.Min.Y+ay*X+by*Y+cy
			ci := s.COffset(x, y)
			r, g, bl := color.YCbCrToRGB(s.Y[s.YOffset(x, y)], s.Cb[ci], s.Cr[ci])
			p := row[4*X : 4*X+4]
			p[0], p[1], p[2], p[3] = r, g, bl, 0xff
		}
	}
	return d
}
