package imageproc

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"math"
	"os"
	"testing"
)

func TestNewLetterbox(t *testing.T) {
	cases := []struct {
		w, h, s int
		want    Letterbox
	}{
		{1024, 1024, 256, Letterbox{S: 256, W: 1024, H: 1024, NW: 256, NH: 256}},
		{1024, 512, 256, Letterbox{S: 256, W: 1024, H: 512, NW: 256, NH: 128, OY: 64}},
		{512, 1024, 256, Letterbox{S: 256, W: 512, H: 1024, NW: 128, NH: 256, OX: 64}},
		{300, 200, 64, Letterbox{S: 64, W: 300, H: 200, NW: 64, NH: 43, OY: 10}},
		// 5*256/512 = 2.5 rounds half to even (Python round) to 2, offset (256-2)/2.
		{5, 512, 256, Letterbox{S: 256, W: 5, H: 512, NW: 2, NH: 256, OX: 127}},
		// 7*256/512 = 3.5 rounds to 4.
		{7, 512, 256, Letterbox{S: 256, W: 7, H: 512, NW: 4, NH: 256, OX: 126}},
		{1, 4000, 256, Letterbox{S: 256, W: 1, H: 4000, NW: 1, NH: 256, OX: 127}},
		{50, 70, 64, Letterbox{S: 64, W: 50, H: 70, NW: 46, NH: 64, OX: 9}},
	}
	for _, tc := range cases {
		if got := NewLetterbox(tc.w, tc.h, tc.s); got != tc.want {
			t.Errorf("NewLetterbox(%d,%d,%d) = %+v, want %+v", tc.w, tc.h, tc.s, got, tc.want)
		}
	}
}

func TestLetterboxMapping(t *testing.T) {
	for _, sz := range [][2]int{{1024, 512}, {300, 200}, {97, 301}, {4000, 3000}} {
		lb := NewLetterbox(sz[0], sz[1], 256)
		// The resized image's corners map to the original's corners.
		if x, y := lb.ToOriginal(float64(lb.OX), float64(lb.OY)); x != 0 || y != 0 {
			t.Errorf("%v: top-left maps to (%v,%v)", sz, x, y)
		}
		x, y := lb.ToOriginal(float64(lb.OX+lb.NW), float64(lb.OY+lb.NH))
		if math.Abs(x-float64(sz[0])) > 1e-9 || math.Abs(y-float64(sz[1])) > 1e-9 {
			t.Errorf("%v: bottom-right maps to (%v,%v)", sz, x, y)
		}
		u, v := lb.FromOriginal(123.4, 56.7)
		if x, y := lb.ToOriginal(u, v); math.Abs(x-123.4) > 1e-9 || math.Abs(y-56.7) > 1e-9 {
			t.Errorf("%v: round trip gave (%v,%v)", sz, x, y)
		}
	}
	// Non-square: x and y scale by their own factors.
	lb := NewLetterbox(2000, 1000, 200) // nw 200, nh 100, oy 50
	if x, y := lb.ToOriginal(100, 100); x != 1000 || y != 500 {
		t.Errorf("centre maps to (%v,%v), want (1000,500)", x, y)
	}
}

// naiveBox is the definition of Pillow's BOX resample written directly in
// two dimensions: output pixel (i,j) is the mean of the input pixels whose
// centres lie in its footprint, the half-open box (c-0.5, c+0.5] in output
// units, or, when upscaling, the one input pixel under its centre.
// Tests evaluate the same floating-point expressions Pillow does.
func naiveBox(src [][]float64, w, h, nw, nh int) [][]float64 {
	axis := func(in, out, i int) []int {
		scale := float64(in) / float64(out)
		fs := math.Max(scale, 1)
		c := (float64(i) + 0.5) * scale
		// Pillow only looks inside a window rounded from the footprint;
		// at an exact tie the window and the test can both exclude a pixel
		// (191 rows to 26 drops input row 95 entirely), so the window is
		// part of the definition.
		lo := max(int(c-0.5*fs+0.5), 0)
		hi := min(int(c+0.5*fs+0.5), in)
		var idx []int
		for x := lo; x < hi; x++ {
			if t := (float64(x) - c + 0.5) * (1 / fs); t > -0.5 && t <= 0.5 {
				idx = append(idx, x)
			}
		}
		return idx
	}
	out := make([][]float64, nh)
	for j := range out {
		out[j] = make([]float64, nw)
		ys := axis(h, nh, j)
		for i := range out[j] {
			xs := axis(w, nw, i)
			var sum float64
			for _, y := range ys {
				for _, x := range xs {
					sum += src[y][x]
				}
			}
			out[j][i] = sum / float64(len(xs)*len(ys))
		}
	}
	return out
}

// refGray reads pixels the slow way: the Y plane for YCbCr, otherwise
// unpremultiplied RGB through Pillow's luma.
func refPlanes(img image.Image, ch int) [][][]float64 {
	b := img.Bounds()
	planes := make([][][]float64, ch)
	for c := range planes {
		planes[c] = make([][]float64, b.Dy())
		for y := range planes[c] {
			planes[c][y] = make([]float64, b.Dx())
		}
	}
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			px := img.At(b.Min.X+x, b.Min.Y+y)
			n := color.NRGBAModel.Convert(px).(color.NRGBA)
			if ch == 1 {
				if yc, ok := px.(color.YCbCr); ok {
					planes[0][y][x] = float64(yc.Y)
				} else {
					planes[0][y][x] = float64((19595*uint32(n.R) + 38470*uint32(n.G) + 7471*uint32(n.B) + 0x8000) >> 16)
				}
				continue
			}
			planes[0][y][x], planes[1][y][x], planes[2][y][x] = float64(n.R), float64(n.G), float64(n.B)
		}
	}
	return planes
}

func naiveLetterbox(img image.Image, s, ch int) []float64 {
	b := img.Bounds()
	lb := NewLetterbox(b.Dx(), b.Dy(), s)
	out := make([]float64, ch*s*s)
	for c, p := range refPlanes(img, ch) {
		r := naiveBox(p, b.Dx(), b.Dy(), lb.NW, lb.NH)
		for j := range r {
			for i := range r[j] {
				out[c*s*s+(lb.OY+j)*s+lb.OX+i] = r[j][i] / 255
			}
		}
	}
	return out
}

// ycbcr returns a 67x53 YCbCr image with varied chroma.
func ycbcr(r image.YCbCrSubsampleRatio) *image.YCbCr {
	m := image.NewYCbCr(image.Rect(0, 0, 67, 53), r)
	for i := range m.Y {
		m.Y[i] = uint8(i * 7)
	}
	for i := range m.Cb {
		m.Cb[i], m.Cr[i] = uint8(i*11), uint8(255-i*5)
	}
	return m
}

// opaque hides an image's concrete type so the generic path runs.
type opaque struct{ image.Image }

func testImages(t *testing.T) map[string]image.Image {
	cmykBytes, err := os.ReadFile("testdata/cmyk.jpg")
	if err != nil {
		t.Fatal(err)
	}
	cmyk, _, err := Decode(cmykBytes)
	if err != nil {
		t.Fatal(err)
	}
	ycc, _, err := Decode(encodeJPEG(t, rgbaImage(123, 77)))
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(image.Rect(0, 0, 90, 41))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(i * 13)
	}
	for i := 3; i < len(rgba.Pix); i += 4 {
		rgba.Pix[i] = 255
	}
	g := gradient(300, 211)
	return map[string]image.Image{
		"gray":          g,
		"gray subimage": g.SubImage(image.Rect(17, 9, 250, 200)),
		"gray opaque":   opaque{g},
		"ycbcr":         ycc,
		"ycbcr sub":     ycc.(*image.YCbCr).SubImage(image.Rect(5, 3, 120, 70)),
		"ycbcr 422 sub": ycbcr(image.YCbCrSubsampleRatio422).SubImage(image.Rect(3, 1, 60, 50)),
		"ycbcr 440":     ycbcr(image.YCbCrSubsampleRatio440),
		"ycbcr 411 sub": ycbcr(image.YCbCrSubsampleRatio411).SubImage(image.Rect(5, 3, 61, 40)),
		"ycbcr 410":     ycbcr(image.YCbCrSubsampleRatio410),
		"ycbcr 444":     ycbcr(image.YCbCrSubsampleRatio444),
		"nrgba":         rgbaImage(77, 130),
		"rgba":          rgba,
		"gray16":        gray16Image(70, 40),
		"gray16 sub":    gray16Image(90, 60).SubImage(image.Rect(3, 7, 80, 51)),
		"gray16 opaque": opaque{gray16Image(70, 40)},
		"paletted":      palettedImage(40, 33),
		"cmyk":          cmyk,
		"tiny upscale":  gradient(20, 13),
		"tie 233x191":   gradient(233, 191),
	}
}

func TestLetterboxMatchesNaiveReference(t *testing.T) {
	for name, img := range testImages(t) {
		for _, s := range []int{32, 64, 57} {
			for _, ch := range []int{1, 3} {
				var got []float32
				var err error
				if ch == 1 {
					got, _, err = LetterboxGray(img, s)
				} else {
					got, _, err = LetterboxRGB(img, s)
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want := naiveLetterbox(img, s, ch)
				if len(got) != len(want) {
					t.Fatalf("%s s=%d ch=%d: len %d, want %d", name, s, ch, len(got), len(want))
				}
				for i := range want {
					if d := math.Abs(float64(got[i]) - want[i]); d > 1e-5 {
						t.Fatalf("%s s=%d ch=%d: index %d = %v, want %v", name, s, ch, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestLetterboxMatchesPillow compares with Pillow's own output (written by
// testdata/pil_golden.py). Pillow rounds to 8 bits between its horizontal
// and vertical passes and at the end; this float implementation does not, so
// values may differ by at most about one grey level.
func TestLetterboxMatchesPillow(t *testing.T) {
	for _, name := range []string{"gray_300x200_s64", "gray_50x70_s64", "gray_97x301_s48", "rgb_301x157_s48", "rgb_40x40_s32", "gray_233x191_s32"} {
		b, err := os.ReadFile("testdata/" + name + ".png")
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var gold struct {
			S        int       `json:"s"`
			Channels int       `json:"channels"`
			Data     []float64 `json:"data"`
		}
		gb, err := os.ReadFile("testdata/" + name + ".golden.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewDecoder(bytes.NewReader(gb)).Decode(&gold); err != nil {
			t.Fatal(err)
		}
		var got []float32
		if gold.Channels == 1 {
			got, _, err = LetterboxGray(img, gold.S)
		} else {
			got, _, err = LetterboxRGB(img, gold.S)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(gold.Data) {
			t.Fatalf("%s: len %d, want %d", name, len(got), len(gold.Data))
		}
		var maxd float64
		for i, w := range gold.Data {
			maxd = math.Max(maxd, math.Abs(float64(got[i])-w))
		}
		t.Logf("%s: max |Go - Pillow| = %.5f (%.2f grey levels)", name, maxd, maxd*255)
		if maxd > 1.01/255 {
			t.Errorf("%s: differs from Pillow by %.5f", name, maxd)
		}
	}
}

func TestLetterboxPadding(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 200, 100))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	got, lb, err := LetterboxGray(img, 64)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			inside := y >= lb.OY && y < lb.OY+lb.NH && x >= lb.OX && x < lb.OX+lb.NW
			want := float32(0)
			if inside {
				want = 1
			}
			if math.Abs(float64(got[y*64+x]-want)) > 1e-6 {
				t.Fatalf("(%d,%d) = %v, want %v (letterbox %+v)", x, y, got[y*64+x], want, lb)
			}
		}
	}
}

func benchJPEG(b *testing.B, w, h int) []byte {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for i := range img.Y {
		img.Y[i] = uint8(i * 31 % 251)
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = 128, 128
	}
	return encodeJPEG(b, img)
}

func BenchmarkDecodeJPEG1024(b *testing.B) {
	data := benchJPEG(b, 1024, 1024)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLetterboxGray1024(b *testing.B) {
	img, _, err := Decode(benchJPEG(b, 1024, 1024))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := LetterboxGray(img, 256); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLetterboxRGB1024(b *testing.B) {
	img, _, err := Decode(benchJPEG(b, 1024, 1024))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := LetterboxRGB(img, 224); err != nil {
			b.Fatal(err)
		}
	}
}
