// Package imageproc decodes untrusted JPEG, PNG or DICOM bytes safely
// (DICOM, told by "DICM" at offset 128, through engine/dicom as 8-bit grey)
// and prepares model input tensors (letterboxing) per
// docs/model-contract.md.
package imageproc

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"

	"vetlens/engine/dicom"

	"vetlens/internal/errs"
)

// Decode limits. The header is read first (image.DecodeConfig) and an image
// outside these bounds is refused before any pixel memory is allocated.
// Digital radiography detectors produce 3-18 MP, so real images fit easily.
const (
	// MaxPixels is the largest accepted width*height.
	MaxPixels = 40_000_000
	// MaxDecodeBytes bounds the memory a decoder is estimated to need
	// (DecodeBytes). Without it a 40 MP progressive 4:4:4 colour JPEG,
	// 7 MB on disk, takes about 600 MB to decode.
	MaxDecodeBytes = 256 << 20
	// MaxSide is the largest accepted width or height in pixels.
	MaxSide = 16384
	// MinSide is the smallest accepted width or height in pixels; anything
	// smaller cannot show a measurable thorax.
	MinSide = 32
)

// Sentinel errors returned (wrapped, with detail) by Decode. Callers match
// them with errors.Is. An HTTP layer maps ErrTooLarge to 413 and the others
// to 400.
var (
	// ErrEmpty means the input had zero bytes.
	ErrEmpty = errors.New("empty image data")
	// ErrFormat means the bytes are not a JPEG, PNG or DICOM image that
	// can be read (a DICOM in an unsupported transfer syntax also wraps
	// dicom.ErrUnsupportedTransferSyntax, naming it).
	ErrFormat = errors.New("unsupported image format: JPEG, PNG or DICOM required")
	// ErrCorrupt means the header or pixel data could not be decoded.
	ErrCorrupt = errors.New("corrupt image data")
	// ErrTooLarge means the header declares more pixels than MaxPixels or
	// a side longer than MaxSide.
	ErrTooLarge = errors.New("image dimensions too large")
	// ErrTooSmall means a side is shorter than MinSide.
	ErrTooSmall = errors.New("image dimensions too small")
)

// otherFormats are image and document formats VetLens does not read, told
// by their first bytes (an ISO base media file's brand at offset 8), with
// what a user should do about them.
var otherFormats = []struct {
	offset int
	magic  string
	name   string
}{
	{8, "heic", "a HEIC photo (an iPhone's default: export it as JPEG, or set Settings > Camera > Formats to Most Compatible)"},
	{8, "heix", "a HEIC photo (an iPhone's default: export it as JPEG, or set Settings > Camera > Formats to Most Compatible)"},
	{8, "mif1", "a HEIF image (export it as JPEG)"},
	{8, "avif", "an AVIF image (export it as JPEG or PNG)"},
	{8, "WEBP", "a WebP image (export it as JPEG or PNG)"},
	{0, "GIF8", "a GIF image (export it as PNG)"},
	{0, "BM", "a BMP image (export it as PNG)"},
	{0, "II*\x00", "a TIFF image (export it as PNG, or send the DICOM)"},
	{0, "MM\x00*", "a TIFF image (export it as PNG, or send the DICOM)"},
	{0, "%PDF-", "a PDF document (send the image itself)"},
}

// formatError is ErrFormat, saying which format the bytes are when they
// are one of otherFormats.
func formatError(b []byte) error {
	for _, f := range otherFormats {
		if len(b) >= f.offset+len(f.magic) && string(b[f.offset:f.offset+len(f.magic)]) == f.magic {
			return fmt.Errorf("%w: this is %s", ErrFormat, f.name)
		}
	}
	return ErrFormat
}

// CheckSize returns a wrapped ErrTooLarge or ErrTooSmall when a w x h image
// is outside the decode limits, or nil.
func CheckSize(w, h int) error {
	switch {
	case w > MaxSide || h > MaxSide:
		return fmt.Errorf("%w: %dx%d has a side over %d pixels", ErrTooLarge, w, h, MaxSide)
	case int64(w)*int64(h) > MaxPixels:
		return fmt.Errorf("%w: %dx%d is over %d megapixels", ErrTooLarge, w, h, MaxPixels/1_000_000)
	case w < MinSide || h < MinSide:
		return fmt.Errorf("%w: %dx%d has a side under %d pixels", ErrTooSmall, w, h, MinSide)
	}
	return nil
}

// CheckHeader reads the header of JPEG or PNG bytes, without decoding
// pixels, and checks the size against the limits: ErrEmpty, ErrFormat (not
// a JPEG or PNG), ErrCorrupt (an unreadable header), ErrTooLarge or
// ErrTooSmall, wrapped; a JPEG cut short after its header is ErrCorrupt
// too (jpegCutShort). It returns the header, its size the picture's as
// shown upright (ReadOrientation: a phone's portrait photo stored as
// landscape pixels is taller than wide), and the format.
func CheckHeader(b []byte) (image.Config, string, error) {
	if len(b) == 0 {
		return image.Config{}, "", ErrEmpty
	}
	if dicom.Is(b) {
		h, err := dicom.ReadHeader(b, DICOMLimits())
		return image.Config{ColorModel: color.GrayModel, Width: h.Width, Height: h.Height}, "dicom", DICOMError(err)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	switch {
	case errors.Is(err, image.ErrFormat):
		return cfg, "", formatError(b)
	case err != nil:
		return cfg, format, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the image header could not be read", err))
	case format != "jpeg" && format != "png":
		return cfg, format, formatError(b)
	case format == "jpeg" && jpegCutShort(b):
		return cfg, format, fmt.Errorf("%w: the JPEG data ends before its end-of-image marker (the file is cut short)", ErrCorrupt)
	}
	cfg.Width, cfg.Height = ReadOrientation(b).Displayed(cfg.Width, cfg.Height)
	return cfg, format, CheckSize(cfg.Width, cfg.Height)
}

// DecodeCost reads the header of JPEG or PNG bytes, checks it as
// CheckHeader does (same errors), and returns the header and the memory
// Decode will need for it (DecodeBytes), so that a caller can reserve it
// before decoding.
func DecodeCost(b []byte) (image.Config, int64, error) {
	if dicom.Is(b) {
		h, err := dicom.ReadHeader(b, DICOMLimits())
		if err != nil {
			return image.Config{}, 0, DICOMError(err)
		}
		return image.Config{ColorModel: color.GrayModel, Width: h.Width, Height: h.Height}, DICOMDecodeBytes(h), nil
	}
	cfg, format, err := CheckHeader(b)
	if err != nil {
		return cfg, 0, err
	}
	return cfg, decodeBytes(b, format, cfg, ReadOrientation(b)), nil
}

// decodeBytes is the memory Decode needs for bytes b with this header and
// orientation: the decoder's (DecodeBytes) and turning the picture
// upright's (OrientBytes).
func decodeBytes(b []byte, format string, cfg image.Config, o Orientation) int64 {
	return DecodeBytes(format, cfg, format == "jpeg" && jpegProgressive(b)) + OrientBytes(format, cfg, o)
}

// DICOMLimits are the decode limits applied to a DICOM file: its frame
// size by CheckSize, its data set and decoding memory by MaxDecodeBytes.
func DICOMLimits() dicom.Limits {
	return dicom.Limits{CheckSize: CheckSize, MaxBytes: MaxDecodeBytes}
}

// DICOMDecodeBytes estimates the peak memory of decoding a DICOM file:
// the parsed data set (its pixel data included; for a deflated file, also
// the inflated copy the parser reads, which holds the elements before the
// pixel data and the first frame only), the stored values of the first
// frame (2 bytes per pixel), a JPEG frame's decoded image (up to 3) and
// the grey image (1).
func DICOMDecodeBytes(h dicom.Header) int64 {
	data := h.DataBytes
	if h.TransferSyntaxUID == dicom.DeflatedExplicitVRLE {
		data *= 2
	}
	return data + 6*int64(h.Width)*int64(h.Height)
}

// DICOMError maps engine/dicom's errors to this package's sentinels,
// keeping both in the chain: ErrCorrupt, ErrTooLarge, and ErrFormat for a
// file that is not DICOM or is in an unsupported transfer syntax or pixel
// format. Errors of CheckSize pass as they are; nil stays nil.
func DICOMError(err error) error {
	switch {
	case err == nil, errors.Is(err, ErrTooLarge), errors.Is(err, ErrTooSmall):
		return err
	case errors.Is(err, dicom.ErrTooLarge):
		return sentinelError{ErrTooLarge, err}
	case errors.Is(err, dicom.ErrCorrupt):
		return sentinelError{ErrCorrupt, err}
	}
	return sentinelError{ErrFormat, err}
}

// sentinelError is err, which already says what is wrong, matching one
// of this package's sentinels too.
type sentinelError struct{ sentinel, err error }

func (e sentinelError) Error() string   { return e.err.Error() }
func (e sentinelError) Unwrap() []error { return []error{e.sentinel, e.err} }

// DecodeDICOM decodes a DICOM file's first frame with its pixel spacing
// and tags, under DICOMLimits; errors as DICOMError maps them.
func DecodeDICOM(b []byte) (*dicom.Image, error) {
	img, err := dicom.Decode(b, DICOMLimits())
	if err != nil {
		return nil, DICOMError(err)
	}
	return img, nil
}

// Decode decodes JPEG, PNG or DICOM bytes and returns the image and its
// format ("jpeg", "png" or "dicom": the first frame as *image.Gray).
// Dimensions are checked against the limits from the header before
// decoding. A JPEG or PNG with an EXIF orientation comes back shown
// upright (Orient), as browsers and photo viewers show it, so every point
// VetLens returns is in the picture the user sees. A panic inside a
// decoder is reported as ErrCorrupt.
func Decode(b []byte) (img image.Image, format string, err error) {
	if len(b) == 0 {
		return nil, "", ErrEmpty
	}
	if dicom.Is(b) {
		d, err := DecodeDICOM(b)
		if err != nil {
			return nil, "dicom", err
		}
		return d.Gray, "dicom", nil
	}
	var decode func([]byte) (image.Image, error)
	var config func([]byte) (image.Config, error)
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		format = "png"
		config = func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) }
	case bytes.HasPrefix(b, []byte{0xff, 0xd8}):
		format = "jpeg"
		config = func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }
		decode = func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) }
	default:
		return nil, "", formatError(b)
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the "+format+" decoder failed", fmt.Errorf("panic: %v", r)))
		}
	}()
	cfg, err := config(b)
	if err != nil {
		return nil, format, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the "+format+" header could not be read", err))
	}
	if err := CheckSize(cfg.Width, cfg.Height); err != nil {
		return nil, format, err
	}
	o := ReadOrientation(b)
	if need := decodeBytes(b, format, cfg, o); need > MaxDecodeBytes {
		return nil, format, fmt.Errorf("%w: %dx%d %s needs about %d MB to decode, over %d MB",
			ErrTooLarge, cfg.Width, cfg.Height, format, need>>20, MaxDecodeBytes>>20)
	}
	img, err = decode(b)
	if err != nil {
		return nil, format, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the "+format+" data could not be decoded", err))
	}
	if bd := img.Bounds(); bd.Dx() != cfg.Width || bd.Dy() != cfg.Height {
		return nil, format, fmt.Errorf("%w: %s decoded to %dx%d, header said %dx%d", ErrCorrupt, format, bd.Dx(), bd.Dy(), cfg.Width, cfg.Height)
	}
	return Orient(img, o), format, nil
}

// DecodeBytes estimates the peak memory Go's decoder needs for an image
// with this header, from its colour model: PNG holds the image (1 byte per
// pixel for gray and paletted, 2 for 16-bit gray, 4 for RGBA, 8 for 16-bit
// RGBA). JPEG holds the image (1 byte per pixel for gray, 3 for YCbCr
// assuming no chroma subsampling, 8 for CMYK: component planes plus the
// converted image) and, when progressive, 4 bytes per pixel per component of
// DCT coefficients.
func DecodeBytes(format string, cfg image.Config, progressive bool) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	if format == "jpeg" {
		img, comps := int64(3), int64(3)
		switch cfg.ColorModel {
		case color.GrayModel:
			img, comps = 1, 1
		case color.CMYKModel:
			img, comps = 8, 4
		}
		if progressive {
			return px * (img + 4*comps)
		}
		return px * img
	}
	switch cfg.ColorModel.(type) {
	case color.Palette:
		return px
	}
	switch cfg.ColorModel {
	case color.GrayModel:
		return px
	case color.Gray16Model:
		return 2 * px
	case color.RGBAModel, color.NRGBAModel:
		return 4 * px
	}
	return 8 * px
}

// jpegProgressive reports whether the JPEG's frame header (the first SOFn
// marker) is progressive (SOF2, SOF6, SOF10, SOF14).
func jpegProgressive(b []byte) bool {
	progressive := false
	jpegSegments(b, func(m byte, _ []byte) bool {
		switch m {
		case 0xc2, 0xc6, 0xca, 0xce:
			progressive = true
			return false
		case 0xc0, 0xc1, 0xc3, 0xc5, 0xc7, 0xc9, 0xcb, 0xcd, 0xcf:
			return false
		}
		return true
	})
	return progressive
}

// jpegSegments walks the marker segments of JPEG bytes b after the start
// of image, calling f with each segment's marker and data (nil when its
// declared length runs past b, which ends the walk), until f returns
// false, the scan or the image starts or ends, the data runs out, or the
// bytes stop looking like markers. It never trusts a length beyond the
// data. It returns the offset of the start-of-scan or end-of-image marker
// that ended the walk, len(b) when the data ran out first, or -1 when f
// or a byte that is not a marker ended it.
func jpegSegments(b []byte, f func(marker byte, data []byte) bool) int {
	i := 2 // after SOI
	for {
		if i+4 > len(b) {
			if i+2 <= len(b) && b[i] == 0xff && (b[i+1] == 0xd9 || b[i+1] == 0xda) {
				return i
			}
			return len(b)
		}
		if b[i] != 0xff {
			return -1
		}
		m := b[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0x01 || m >= 0xd0 && m <= 0xd8: // markers without a length
			i += 2
			continue
		case m == 0xd9 || m == 0xda: // end of image, start of scan
			return i
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 {
			return -1
		}
		if i+2+n > len(b) {
			f(m, nil)
			return len(b)
		}
		if !f(m, b[i+4:i+2+n]) {
			return -1
		}
		i += 2 + n
	}
}

// jpegCutShort reports whether JPEG bytes b end before their image does:
// before the first scan, or after it without an end-of-image marker (an
// interrupted upload or copy). Inside the entropy-coded data every 0xFF
// byte is followed by 0x00 or a restart marker, so an 0xFF 0xD9 after the
// scan's start is the end of the image (a thumbnail's, in an APP segment,
// comes before the scan). Go's decoder refuses such a file; OpenCV's
// decodes what is there and fills the rest with grey, which without this
// check would be measured. Bytes that stop looking like marker segments
// before the scan are left to the decoders.
func jpegCutShort(b []byte) bool {
	end := jpegSegments(b, func(byte, []byte) bool { return true })
	switch {
	case end == len(b):
		return true
	case end < 0:
		return false
	case b[end+1] == 0xd9: // the image ends with no scan at all
		return true
	}
	return bytes.LastIndex(b[end+2:], []byte{0xff, 0xd9}) < 0
}
