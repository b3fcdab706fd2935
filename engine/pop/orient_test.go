package pop

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"gocv.io/x/gocv"

	"vetlens/engine/imageproc"
	"vetlens/internal/exiftest"
)

// TestDecodeFrameShowsPhotosUpright: a JPEG with an EXIF orientation (a
// phone's portrait photo of a monitor) decodes to the picture OpenCV's own
// EXIF handling shows, at the size CheckHeader reports, and to the
// picture the Go path (imageproc.Decode) shows. Before, orientations 5-8
// made DecodeFrame read a closed Mat and crash the process.
func TestDecodeFrameShowsPhotosUpright(t *testing.T) {
	const w, h = 96, 64
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(2 * x), uint8(3 * y), uint8(100 + (x-y)/2), 255})
		}
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	for o := imageproc.Orientation(1); o <= 8; o++ {
		b := exiftest.JPEG(jb.Bytes(), exiftest.TIFF(uint16(o), o > 4))
		got, err := DecodeFrame(b)
		if err != nil {
			t.Fatalf("orientation %d: %v", o, err)
		}
		want, err := gocv.IMDecode(b, gocv.IMReadColor) // OpenCV turns it by EXIF itself
		if err != nil {
			t.Fatal(err)
		}
		W, H := o.Displayed(w, h)
		if got.Cols() != W || got.Rows() != H || want.Cols() != W || want.Rows() != H {
			t.Fatalf("orientation %d: DecodeFrame %dx%d, OpenCV %dx%d, want %dx%d", o, got.Cols(), got.Rows(), want.Cols(), want.Rows(), W, H)
		}
		diff := gocv.NewMat()
		gocv.AbsDiff(got, want, &diff)
		_, maxDiff, _, _ := gocv.MinMaxLoc(diff.Reshape(1, 0))
		diff.Close()
		want.Close()
		if maxDiff != 0 {
			t.Errorf("orientation %d: DecodeFrame differs from OpenCV's upright picture by up to %v", o, maxDiff)
		}
		goImg, _, err := imageproc.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		// The Go and libjpeg decoders upsample chroma differently, so they
		// differ by a few levels on this smooth picture; a wrong turn
		// differs by up to its whole range (128 levels of red, 192 of green).
		worst := 0
		for y := range H {
			for x := range W {
				r, g, bl, _ := goImg.At(x, y).RGBA()
				v := got.GetVecbAt(y, x)
				worst = max(worst, absInt(int(r>>8)-int(v[2])), absInt(int(g>>8)-int(v[1])), absInt(int(bl>>8)-int(v[0])))
			}
		}
		got.Close()
		if worst > 12 {
			t.Errorf("orientation %d: the Go decode differs from the frame by up to %d levels", o, worst)
		}
	}
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
