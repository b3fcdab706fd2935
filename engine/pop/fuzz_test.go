package pop

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"gocv.io/x/gocv"

	"vetlens/engine/imageproc"
	"vetlens/internal/exiftest"
)

// FuzzDecodeFrame: arbitrary bytes never panic the frame decoder (OpenCV's
// decoders behind the Go header check); a decoded frame is BGR at the
// header's size, and a failure matches one of imageproc's sentinels.
func FuzzDecodeFrame(f *testing.F) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(4 * x), uint8(5 * y), 90, 255})
		}
	}
	var j, p bytes.Buffer
	if err := jpeg.Encode(&j, img, &jpeg.Options{Quality: 80}); err != nil {
		f.Fatal(err)
	}
	if err := png.Encode(&p, img); err != nil {
		f.Fatal(err)
	}
	for _, b := range [][]byte{j.Bytes(), p.Bytes()} { // the seeds reach OpenCV
		m, err := DecodeFrame(b)
		m.Close()
		if err != nil {
			f.Fatalf("seed: %v", err)
		}
	}
	f.Add(j.Bytes())
	f.Add(p.Bytes())
	f.Add(exiftest.JPEG(j.Bytes(), exiftest.TIFF(6, false))) // a phone's portrait photo
	f.Add(exiftest.PNG(p.Bytes(), exiftest.TIFF(7, true)))
	f.Add(j.Bytes()[:len(j.Bytes())/2]) // cut short
	f.Add(j.Bytes()[:len(j.Bytes())-2]) // cut before its end-of-image marker
	f.Add([]byte("junk"))
	sentinels := []error{imageproc.ErrEmpty, imageproc.ErrFormat, imageproc.ErrCorrupt, imageproc.ErrTooLarge, imageproc.ErrTooSmall}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeFrame(b)
		defer m.Close()
		if err != nil {
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error matches no sentinel: %v", err)
		}
		cfg, _, herr := imageproc.CheckHeader(b)
		if herr != nil {
			t.Fatalf("decoded a frame whose header fails: %v", herr)
		}
		if m.Cols() != cfg.Width || m.Rows() != cfg.Height || m.Type() != gocv.MatTypeCV8UC3 {
			t.Fatalf("decoded %dx%d type %v, header %dx%d", m.Cols(), m.Rows(), m.Type(), cfg.Width, cfg.Height)
		}
	})
}
