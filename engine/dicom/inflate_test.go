package dicom_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"vetlens/engine/dicom"
	"vetlens/internal/dicomtest"
)

// allocated is the bytes f allocates on the heap (runtime.MemStats'
// TotalAlloc before and after): what an input makes the reader build,
// whether or not it is garbage by the time f returns.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDeflatedDataSetIsInflatedOnlyAsFarAsThePixels: a deflated data set
// is inflated as a stream, only as far as its first frame, and a deflate
// bomb is refused (ErrTooLarge) before anything of its size is allocated.
// Both ReadHeader (what a caller runs before it reserves memory) and
// Decode stay within the small margin plus the declared frame, wherever
// the bomb sits: a top-level private element before or after the image
// attributes, an element inside a sequence, the pixel data's own length,
// or padding after it. Files with a large (but bounded) private element
// still decode to their pixels.
func TestDeflatedDataSetIsInflatedOnlyAsFarAsThePixels(t *testing.T) {
	const bomb = 64 << 20 // 8 x DeflateMargin, on the wire about 64 KB
	const w, h = 64, 64
	image := func(out io.Writer) {
		dicomtest.GreyAttrs(out, w, h)
		dicomtest.Elem(out, 0x7fe0, 0x0010, "OB", dicomtest.GreyPixels(w, h))
	}
	private := func(out io.Writer, group uint16, n int64) {
		dicomtest.Elem(out, group, 0x0010, "LO", []byte("VENDOR"))
		dicomtest.ElemHeader(out, group, 0x1000, "OB", uint32(n))
		dicomtest.Zeros(out, n)
	}
	lim := dicom.Limits{MaxBytes: 256 << 20}
	for _, tc := range []struct {
		name  string
		write func(io.Writer)
		want  error // nil: decodes to the pattern
	}{
		{"plain", image, nil},
		{"private bomb before the image attributes", func(out io.Writer) {
			private(out, 0x0009, bomb)
			image(out)
		}, dicom.ErrTooLarge},
		{"private bomb after the image attributes", func(out io.Writer) {
			dicomtest.GreyAttrs(out, w, h)
			private(out, 0x0029, bomb)
			dicomtest.Elem(out, 0x7fe0, 0x0010, "OB", dicomtest.GreyPixels(w, h))
		}, dicom.ErrTooLarge},
		{"bomb inside a sequence", func(out io.Writer) {
			dicomtest.ElemHeader(out, 0x0008, 0x1140, "SQ", 0xffffffff)
			out.Write([]byte{0xfe, 0xff, 0x00, 0xe0, 0xff, 0xff, 0xff, 0xff})
			dicomtest.ElemHeader(out, 0x0008, 0x0001, "OB", bomb)
			dicomtest.Zeros(out, bomb)
			image(out)
		}, dicom.ErrTooLarge},
		{"pixel data claims far more than one frame", func(out io.Writer) {
			dicomtest.GreyAttrs(out, w, h)
			dicomtest.ElemHeader(out, 0x7fe0, 0x0010, "OB", bomb)
			out.Write(dicomtest.GreyPixels(w, h))
			dicomtest.Zeros(out, bomb-w*h)
		}, nil},
		{"padding after the pixel data", func(out io.Writer) {
			image(out)
			dicomtest.ElemHeader(out, 0xfffc, 0xfffc, "OB", bomb)
			dicomtest.Zeros(out, bomb)
		}, nil},
		{"a 2 MB private element is skipped, the image read", func(out io.Writer) {
			private(out, 0x0009, 2<<20)
			image(out)
		}, nil},
		{"a 1 MB element in a sequence is kept, the image read", func(out io.Writer) {
			out.Write([]byte{0x08, 0x00, 0x40, 0x11, 'S', 'Q', 0, 0, 0xff, 0xff, 0xff, 0xff})
			out.Write([]byte{0xfe, 0xff, 0x00, 0xe0, 0xff, 0xff, 0xff, 0xff})
			dicomtest.ElemHeader(out, 0x0009, 0x1001, "OB", 1<<20)
			dicomtest.Zeros(out, 1<<20)
			out.Write([]byte{0xfe, 0xff, 0x0d, 0xe0, 0, 0, 0, 0})
			out.Write([]byte{0xfe, 0xff, 0xdd, 0xe0, 0, 0, 0, 0})
			image(out)
		}, nil},
		{"cut short inside the pixel data", func(out io.Writer) {
			dicomtest.GreyAttrs(out, w, h)
			dicomtest.ElemHeader(out, 0x7fe0, 0x0010, "OB", w*h)
			out.Write(dicomtest.GreyPixels(w, h)[:w*h/2])
		}, dicom.ErrCorrupt},
		{"pixel data shorter than one frame", func(out io.Writer) {
			dicomtest.GreyAttrs(out, w, h)
			dicomtest.Elem(out, 0x7fe0, 0x0010, "OB", dicomtest.GreyPixels(w, h)[:w*h-2])
		}, dicom.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := dicomtest.Deflated(t, tc.write)
			var hdr dicom.Header
			var herr, derr error
			var img *dicom.Image
			// Decode: the margin, the frame and the parser's copy of both,
			// with room for the parser's bookkeeping. ReadHeader, which
			// runs before a caller reserves memory, keeps only the image
			// attributes: the inflater's and reader's buffers.
			const maxAlloc, maxHeaderAlloc = 2*dicom.DeflateMargin + 4<<20, 1 << 20
			ha := allocated(func() { hdr, herr = dicom.ReadHeader(file, lim) })
			if ha > maxHeaderAlloc {
				t.Errorf("ReadHeader of %d bytes allocated %d KB, over %d KB", len(file), ha>>10, maxHeaderAlloc>>10)
			}
			da := allocated(func() { img, derr = dicom.Decode(file, lim) })
			if da > maxAlloc {
				t.Errorf("Decode of %d bytes allocated %d MB, over %d MB", len(file), da>>20, maxAlloc>>20)
			}
			t.Logf("%d bytes: ReadHeader allocated %d KB, Decode %d KB", len(file), ha>>10, da>>10)
			if tc.want != nil {
				if !errors.Is(derr, tc.want) {
					t.Fatalf("Decode err = %v, want %v", derr, tc.want)
				}
				if tc.want == dicom.ErrTooLarge && !errors.Is(herr, tc.want) {
					t.Fatalf("ReadHeader err = %v, want %v", herr, tc.want)
				}
				return
			}
			if herr != nil || derr != nil {
				t.Fatalf("ReadHeader: %v; Decode: %v", herr, derr)
			}
			if hdr.Width != w || hdr.Height != h || hdr.TransferSyntaxUID != dicom.DeflatedExplicitVRLE {
				t.Errorf("header %dx%d %s", hdr.Width, hdr.Height, hdr.TransferSyntaxUID)
			}
			if hdr.DataBytes != img.DataBytes || hdr.DataBytes > dicom.DeflateMargin+w*h {
				t.Errorf("data bytes: header %d, decode %d (at most %d)", hdr.DataBytes, img.DataBytes, dicom.DeflateMargin+w*h)
			}
			if !bytes.Equal(img.Gray.Pix, dicomtest.GreyPixels(w, h)) {
				t.Errorf("pixels differ from the pattern")
			}
		})
	}
}
