package imageproc

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"testing"

	"vetlens/internal/exiftest"
)

// Where the stored image's first pixel, the end of its first row and the
// start of its last row show in the upright picture, from the EXIF
// standard's definition of Orientation ("the 0th row represents the
// visual ..., the 0th column represents the visual ..."): corner names
// t(op)/b(ottom) then l(eft)/r(ight).
var exifCorners = map[Orientation][3]string{
	1: {"tl", "tr", "bl"}, // 0th row top, 0th column left
	2: {"tr", "tl", "br"}, // 0th row top, 0th column right
	3: {"br", "bl", "tr"}, // 0th row bottom, 0th column right
	4: {"bl", "br", "tl"}, // 0th row bottom, 0th column left
	5: {"tl", "bl", "tr"}, // 0th row left, 0th column top
	6: {"tr", "br", "tl"}, // 0th row right, 0th column top
	7: {"br", "tr", "bl"}, // 0th row right, 0th column bottom
	8: {"bl", "tl", "br"}, // 0th row left, 0th column bottom
}

// cornerAt returns the pixel position of a named corner of a W x H image.
func cornerAt(name string, W, H int) image.Point {
	p := image.Point{}
	if name[0] == 'b' {
		p.Y = H - 1
	}
	if name[1] == 'r' {
		p.X = W - 1
	}
	return p
}

// distinct is a w x h grey image whose every pixel differs from its
// neighbours and whose three marked corners are unique values.
func distinct(w, h int) *image.Gray {
	g := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			g.SetGray(x, y, color.Gray{uint8(3 + 7*x + 31*y)})
		}
	}
	g.SetGray(0, 0, color.Gray{250})
	g.SetGray(w-1, 0, color.Gray{251})
	g.SetGray(0, h-1, color.Gray{252})
	return g
}

func TestOrientFollowsTheEXIFDefinition(t *testing.T) {
	const w, h = 7, 4
	stored := distinct(w, h)
	for o := Orientation(1); o <= 8; o++ {
		up := Orient(stored, o).(*image.Gray)
		W, H := up.Bounds().Dx(), up.Bounds().Dy()
		if o.SwapsSides() != (W == h && H == w) || !o.SwapsSides() && (W != w || H != h) {
			t.Fatalf("orientation %d: upright %dx%d from stored %dx%d", o, W, H, w, h)
		}
		for i, v := range []uint8{250, 251, 252} {
			p := cornerAt(exifCorners[o][i], W, H)
			if got := up.GrayAt(p.X, p.Y).Y; got != v {
				t.Errorf("orientation %d: %s holds %d, want stored corner %d", o, exifCorners[o][i], got, v)
			}
		}
		// Every stored pixel shows exactly once.
		seen := map[uint8]int{}
		for _, v := range up.Pix {
			seen[v]++
		}
		for _, v := range stored.Pix {
			seen[v]--
		}
		for v, n := range seen {
			if n != 0 {
				t.Fatalf("orientation %d: value %d shows %+d times more than stored", o, v, n)
			}
		}
	}
}

// TestOrientKeepsTypeAndPixels: every pixel layout turns the same way as
// grey does, keeping its type (YCbCr becomes RGBA), including sub-images
// whose bounds do not start at the origin.
func TestOrientKeepsTypeAndPixels(t *testing.T) {
	const w, h = 9, 5
	g := distinct(w, h)
	sub := func(img image.Image) image.Image {
		big := image.NewNRGBA(image.Rect(-3, 2, w+4, h+9))
		for y := range h {
			for x := range w {
				big.Set(x, y+2, img.At(x, y))
			}
		}
		return big.SubImage(image.Rect(0, 2, w, h+2))
	}
	ycc := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	for y := range h {
		for x := range w {
			ycc.Y[ycc.YOffset(x, y)] = g.GrayAt(x, y).Y
			ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = 128, 128
		}
	}
	pal := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{})
	for i := range 256 {
		pal.Palette = append(pal.Palette, color.Gray{uint8(i)})
	}
	copy(pal.Pix, g.Pix)
	convert := func(dst interface {
		image.Image
		Set(x, y int, c color.Color)
	}) image.Image {
		for y := range h {
			for x := range w {
				dst.Set(x, y, g.At(x, y))
			}
		}
		return dst
	}
	r := image.Rect(0, 0, w, h)
	cases := []struct {
		name     string
		img      image.Image
		wantType string
	}{
		{"gray", g, "*image.Gray"},
		{"gray16", convert(image.NewGray16(r)), "*image.Gray16"},
		{"paletted", pal, "*image.Paletted"},
		{"rgba", convert(image.NewRGBA(r)), "*image.RGBA"},
		{"nrgba", convert(image.NewNRGBA(r)), "*image.NRGBA"},
		{"rgba64", convert(image.NewRGBA64(r)), "*image.RGBA64"},
		{"nrgba64", convert(image.NewNRGBA64(r)), "*image.NRGBA64"},
		{"cmyk", convert(image.NewCMYK(r)), "*image.CMYK"},
		{"ycbcr", ycc, "*image.RGBA"},
		{"nrgba sub-image", sub(g), "*image.NRGBA"},
		{"alpha (generic)", &image.Alpha{Pix: g.Pix, Stride: g.Stride, Rect: r}, "*image.RGBA"},
	}
	for _, tc := range cases {
		for o := Orientation(1); o <= 8; o++ {
			want := Orient(g, o)
			got := Orient(tc.img, o)
			if o == OrientNormal {
				if got != tc.img {
					t.Errorf("%s: orientation 1 made a copy", tc.name)
				}
				continue
			}
			if typ := fmt.Sprintf("%T", got); typ != tc.wantType {
				t.Errorf("%s, orientation %d: %s, want %s", tc.name, o, typ, tc.wantType)
			}
			if got.Bounds() != want.Bounds() {
				t.Fatalf("%s, orientation %d: bounds %v, want %v", tc.name, o, got.Bounds(), want.Bounds())
			}
			for y := range want.Bounds().Dy() {
				for x := range want.Bounds().Dx() {
					a := color.GrayModel.Convert(got.At(x, y)).(color.Gray).Y
					b := want.(*image.Gray).GrayAt(x, y).Y
					if tc.name == "alpha (generic)" {
						a = color.AlphaModel.Convert(got.At(x, y)).(color.Alpha).A
					}
					if a != b {
						t.Fatalf("%s, orientation %d: (%d, %d) = %d, want %d", tc.name, o, x, y, a, b)
					}
				}
			}
		}
	}
}

func TestReadOrientation(t *testing.T) {
	g := distinct(40, 32)
	jpg, pngb := encodeJPEG(t, g), encodePNG(t, g)
	tiff6 := exiftest.TIFF(6, false)
	long := append([]byte{}, tiff6...) // the same entry typed LONG, value 8
	long[10+12+2] = 4
	long[10+12+8], long[10+12+9], long[10+12+10], long[10+12+11] = 8, 0, 0, 0
	cases := []struct {
		name string
		b    []byte
		want Orientation
	}{
		{"jpeg without exif", jpg, 1},
		{"png without exif", pngb, 1},
		{"jpeg, little-endian 6", exiftest.JPEG(jpg, tiff6), 6},
		{"jpeg, big-endian 8", exiftest.JPEG(jpg, exiftest.TIFF(8, true)), 8},
		{"jpeg, 3", exiftest.JPEG(jpg, exiftest.TIFF(3, false)), 3},
		{"png eXIf, 5", exiftest.PNG(pngb, exiftest.TIFF(5, true)), 5},
		{"value typed LONG", exiftest.JPEG(jpg, long), 8},
		{"value 0", exiftest.JPEG(jpg, exiftest.TIFF(0, false)), 1},
		{"value 9", exiftest.JPEG(jpg, exiftest.TIFF(9, false)), 1},
		{"not TIFF", exiftest.JPEG(jpg, []byte("XX*\x00\x08\x00\x00\x00")), 1},
		{"IFD offset past the end", exiftest.JPEG(jpg, []byte("II*\x00\xff\xff\x00\x00")), 1},
		{"directory cut short", exiftest.JPEG(jpg, tiff6[:20]), 1},
		{"segment length past the end", exiftest.JPEG(jpg, tiff6)[:30], 1},
		{"exif after the scan starts is not read", append(append([]byte{}, jpg[:len(jpg)-2]...), exiftest.JPEG([]byte{0xff, 0xd8}, tiff6)...), 1},
		{"png chunk length past the end", exiftest.PNG(pngb, tiff6)[:45], 1},
		{"empty", nil, 1},
		{"not an image", []byte("hello"), 1},
	}
	for _, tc := range cases {
		if got := ReadOrientation(tc.b); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDecodeShowsPhotosUpright: Decode, CheckHeader and DecodeCost see an
// EXIF-rotated photo as it shows upright, and Decode's pixels are the
// plain decode's turned by Orient.
func TestDecodeShowsPhotosUpright(t *testing.T) {
	const w, h = 64, 40
	rgb := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			rgb.Set(x, y, color.NRGBA{uint8(4 * x), uint8(6 * y), uint8(x ^ y), 255})
		}
	}
	for _, tc := range []struct {
		name  string
		plain []byte
		with  func([]byte, []byte) []byte
	}{{"png", encodePNG(t, rgb), exiftest.PNG}, {"jpeg", encodeJPEG(t, rgb), exiftest.JPEG}} {
		plain, _, err := Decode(tc.plain)
		if err != nil {
			t.Fatal(err)
		}
		_, plainCost, err := DecodeCost(tc.plain)
		if err != nil {
			t.Fatal(err)
		}
		for o := Orientation(1); o <= 8; o++ {
			b := tc.with(tc.plain, exiftest.TIFF(uint16(o), o%2 == 0))
			img, _, err := Decode(b)
			if err != nil {
				t.Fatalf("%s %d: %v", tc.name, o, err)
			}
			W, H := o.Displayed(w, h)
			if img.Bounds() != image.Rect(0, 0, W, H) {
				t.Fatalf("%s %d: decoded %v, want %dx%d", tc.name, o, img.Bounds(), W, H)
			}
			want := Orient(plain, o)
			for y := range H {
				for x := range W {
					if img.At(x, y) != want.At(x, y) && color.RGBAModel.Convert(img.At(x, y)) != color.RGBAModel.Convert(want.At(x, y)) {
						t.Fatalf("%s %d: (%d, %d) %v, want %v", tc.name, o, x, y, img.At(x, y), want.At(x, y))
					}
				}
			}
			cfg, _, err := CheckHeader(b)
			if err != nil || cfg.Width != W || cfg.Height != H {
				t.Errorf("%s %d: header %dx%d %v, want %dx%d", tc.name, o, cfg.Width, cfg.Height, err, W, H)
			}
			_, cost, err := DecodeCost(b)
			extra := int64(0)
			if o != OrientNormal {
				extra = 4 * w * h // an RGBA image either way
			}
			if err != nil || cost != plainCost+extra {
				t.Errorf("%s %d: cost %d %v, want %d", tc.name, o, cost, err, plainCost+extra)
			}
		}
	}
}

// TestDecodeRefusesWhatCannotBeTurned: turning the picture upright counts
// against MaxDecodeBytes, so a colour JPEG that fits stored may be refused
// with its orientation.
func TestDecodeRefusesWhatCannotBeTurned(t *testing.T) {
	// 4:4:4 baseline is 3 bytes a pixel to decode and 4 more to turn: 40 MP
	// passes the pixel limit but needs 280 MB.
	stored := patchJPEGSize(t, encodeJPEG(t, rgbaImage(40, 40)), 8000, 5000)
	if _, _, err := Decode(stored); errors.Is(err, ErrTooLarge) {
		t.Fatalf("Decode without an orientation: %v, want it past the memory check", err)
	}
	if _, _, err := Decode(exiftest.JPEG(stored, exiftest.TIFF(6, false))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Decode: %v, want ErrTooLarge", err)
	}
}

// FuzzDecode: arbitrary bytes (seeded with photos carrying an EXIF
// orientation, in both byte orders, and broken EXIF blocks) never panic
// Decode or ReadOrientation; the orientation is 1-8, and a decoded image
// has the upright size CheckHeader reports.
func FuzzDecode(f *testing.F) {
	g := distinct(40, 24)
	jpg, pngb := encodeJPEG(f, g), encodePNG(f, g)
	f.Add(jpg)
	f.Add(pngb)
	f.Add(exiftest.JPEG(jpg, exiftest.TIFF(6, false)))
	f.Add(exiftest.JPEG(jpg, exiftest.TIFF(7, true)))
	f.Add(exiftest.PNG(pngb, exiftest.TIFF(8, true)))
	f.Add(exiftest.JPEG(jpg, []byte("II*\x00\x08\x00\x00\x00\xff\xff")))
	f.Fuzz(func(t *testing.T, b []byte) {
		if o := ReadOrientation(b); o < 1 || o > 8 {
			t.Fatalf("orientation %d", o)
		}
		img, format, err := Decode(b)
		if err != nil || format == "dicom" {
			return
		}
		cfg, _, err := CheckHeader(b)
		if err != nil {
			t.Fatalf("decoded an image whose header fails: %v", err)
		}
		if img.Bounds() != image.Rect(0, 0, cfg.Width, cfg.Height) {
			t.Fatalf("decoded %v, header %dx%d", img.Bounds(), cfg.Width, cfg.Height)
		}
	})
}
