package dicom_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"vetlens/engine/dicom"
	"vetlens/internal/dicomtest"
)

// FuzzDecode: arbitrary bytes after a DICOM preamble never panic, never
// decode to an image of another size than the header's, and fail only with
// the package's sentinels.
func FuzzDecode(f *testing.F) {
	if dicomtest.Available() == nil {
		set := dicomtest.Build(f)
		for _, name := range []string{"mono2-8bit", "jpeg-baseline", "mono1-16bit", "voilut-10bit-bigendian", "deflated-8bit", "rle"} {
			b, err := os.ReadFile(set.Get(f, name).Path)
			if err != nil {
				f.Fatal(err)
			}
			if len(b) > 4096 { // keep the seeds small: the pixel data cut short
				b = b[:4096]
			}
			f.Add(b)
		}
	}
	f.Add(append(make([]byte, 128), "DICM"...))
	// Deflated seeds, built here so they do not need dcmtk: an image, an
	// image after a sequence and a large private element, and a deflate
	// bomb (a private element inflating to twice DeflateMargin).
	image := func(w io.Writer) {
		dicomtest.GreyAttrs(w, 32, 32)
		dicomtest.Elem(w, 0x7fe0, 0x0010, "OB", dicomtest.GreyPixels(32, 32))
	}
	f.Add(dicomtest.Deflated(f, image))
	f.Add(dicomtest.Deflated(f, func(w io.Writer) {
		w.Write([]byte{0x08, 0x00, 0x40, 0x11, 'S', 'Q', 0, 0, 0xff, 0xff, 0xff, 0xff})
		w.Write([]byte{0xfe, 0xff, 0x00, 0xe0, 0xff, 0xff, 0xff, 0xff})
		dicomtest.Elem(w, 0x0008, 0x1150, "UI", []byte("1.2.3"))
		w.Write([]byte{0xfe, 0xff, 0x0d, 0xe0, 0, 0, 0, 0})
		w.Write([]byte{0xfe, 0xff, 0xdd, 0xe0, 0, 0, 0, 0})
		dicomtest.ElemHeader(w, 0x0009, 0x1000, "OB", 128<<10)
		dicomtest.Zeros(w, 128<<10)
		image(w)
	}))
	f.Add(dicomtest.DeflateBomb(f, 2*dicom.DeflateMargin))
	sentinels := []error{dicom.ErrNotDICOM, dicom.ErrCorrupt, dicom.ErrUnsupported, dicom.ErrUnsupportedTransferSyntax, dicom.ErrTooLarge}
	f.Fuzz(func(t *testing.T, b []byte) {
		lim := dicom.Limits{MaxBytes: 64 << 20, CheckSize: func(w, h int) error {
			if w > 4096 || h > 4096 {
				return dicom.ErrTooLarge
			}
			return nil
		}}
		img, err := dicom.Decode(b, lim)
		if err != nil {
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error without a sentinel: %v", err)
		}
		if bd := img.Gray.Bounds(); bd.Dx() != img.Width || bd.Dy() != img.Height {
			t.Fatalf("decoded %v, header %dx%d", bd, img.Width, img.Height)
		}
	})
}
