package imageproc

import (
	"errors"
	"image"
	"os"
	"testing"

	"vetlens/engine/dicom"
	"vetlens/internal/dicomtest"
)

// TestDecodeDICOMByContent: every entry point (CheckHeader, DecodeCost,
// Decode) tells a DICOM file by its bytes and reads it as grey, or maps an
// unsupported transfer syntax to ErrFormat naming it.
func TestDecodeDICOMByContent(t *testing.T) {
	set := dicomtest.Build(t)
	for _, tc := range []struct {
		fixture string
		want    error
	}{
		{"jpeg-baseline", nil},
		{"mono1-16bit", nil},
		{"windowed-12bit", nil},
		{"rle", ErrFormat},
		{"jpeg-extended-12bit", ErrFormat},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			b, err := os.ReadFile(set.Get(t, tc.fixture).Path)
			if err != nil {
				t.Fatal(err)
			}
			img, format, err := Decode(b)
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !errors.Is(err, dicom.ErrUnsupportedTransferSyntax) {
					t.Fatalf("Decode err = %v, want %v wrapping dicom.ErrUnsupportedTransferSyntax", err, tc.want)
				}
				if _, _, err := DecodeCost(b); tc.fixture == "rle" && !errors.Is(err, ErrFormat) {
					t.Errorf("DecodeCost err = %v, want ErrFormat", err)
				}
				return
			}
			if err != nil || format != "dicom" {
				t.Fatalf("Decode = %s, %v", format, err)
			}
			g, ok := img.(*image.Gray)
			if !ok || g.Bounds() != set.Source.Bounds() {
				t.Fatalf("Decode gave %T %v", img, img.Bounds())
			}
			cfg, format, err := CheckHeader(b)
			if err != nil || format != "dicom" || cfg.Width != set.Source.Bounds().Dx() || cfg.Height != set.Source.Bounds().Dy() {
				t.Fatalf("CheckHeader = %+v, %s, %v", cfg, format, err)
			}
			cfg2, need, err := DecodeCost(b)
			if err != nil || cfg2.Width != cfg.Width || need < int64(cfg.Width*cfg.Height) || need > int64(len(b))+8*int64(cfg.Width*cfg.Height) {
				t.Fatalf("DecodeCost = %+v, %d, %v", cfg2, need, err)
			}
		})
	}
}
