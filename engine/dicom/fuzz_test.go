package dicom_test

import (
	"errors"
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
