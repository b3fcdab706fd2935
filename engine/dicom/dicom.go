// Package dicom reads DICOM Part 10 files (github.com/suyashkumar/dicom
// parses the data set) into an 8-bit greyscale image for measurement: the
// first frame, through the rescale slope and intercept and the VOI LUT or
// window (else the frame's full range), MONOCHROME1 inverted. It keeps the
// pixel spacing and the patient and study tags a clinic's record needs.
// 8-bit values without a rescale or VOI are shown as stored.
//
// Untrusted bytes are checked before the parser allocates anything from
// them: every element length must fit in what is left of the file, and the
// image's size, bits and frame length must agree with the pixel data.
package dicom

import (
	"bytes"
	"errors"
	"fmt"
	"image"

	dcm "github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/tag"
	"github.com/suyashkumar/dicom/pkg/uid"

	"vetlens/internal/errs"
)

// Sentinel errors, returned wrapped with detail.
var (
	// ErrNotDICOM means the bytes have no "DICM" at offset 128.
	ErrNotDICOM = errors.New("not a DICOM Part 10 file")
	// ErrUnsupportedTransferSyntax means the pixel data is encoded in a
	// transfer syntax this reader cannot decode; the message names it.
	ErrUnsupportedTransferSyntax = errors.New("unsupported DICOM transfer syntax")
	// ErrUnsupported means an image this reader cannot show (colour
	// palette, 32-bit or 1-bit pixels, no pixel data).
	ErrUnsupported = errors.New("unsupported DICOM image")
	// ErrCorrupt means the file is malformed or truncated.
	ErrCorrupt = errors.New("corrupt DICOM file")
	// ErrTooLarge means the image needs more memory than Limits.MaxBytes.
	ErrTooLarge = errors.New("DICOM image too large")
)

// Transfer syntax UIDs this package decodes.
const (
	// ImplicitVRLittleEndian is the default uncompressed syntax.
	ImplicitVRLittleEndian = "1.2.840.10008.1.2"
	// ExplicitVRLittleEndian is uncompressed with explicit VRs.
	ExplicitVRLittleEndian = "1.2.840.10008.1.2.1"
	// DeflatedExplicitVRLE is ExplicitVRLittleEndian deflated (zlib).
	DeflatedExplicitVRLE = "1.2.840.10008.1.2.1.99"
	// ExplicitVRBigEndian is uncompressed big endian (retired, still seen).
	ExplicitVRBigEndian = "1.2.840.10008.1.2.2"
	// JPEGBaseline is JPEG process 1 (8-bit lossy).
	JPEGBaseline = "1.2.840.10008.1.2.4.50"
	// JPEGExtended is JPEG processes 2 and 4; read with 8-bit samples only.
	JPEGExtended = "1.2.840.10008.1.2.4.51"
)

// Supported reports whether pixel data in the transfer syntax uid can be
// decoded: the uncompressed syntaxes (implicit and explicit VR little
// endian, explicit big endian, deflated) and JPEG baseline and extended
// (8-bit samples, which the Go JPEG decoder reads).
func Supported(uid string) bool {
	switch uid {
	case ImplicitVRLittleEndian, ExplicitVRLittleEndian, DeflatedExplicitVRLE, ExplicitVRBigEndian, JPEGBaseline, JPEGExtended:
		return true
	}
	return false
}

// TransferSyntaxName is the DICOM name of a transfer syntax UID ("JPEG
// 2000 Image Compression"), or "unknown transfer syntax".
func TransferSyntaxName(u string) string {
	if info, err := uid.Lookup(u); err == nil && info.Type == uid.TypeTransferSyntax {
		return info.Name
	}
	return "unknown transfer syntax"
}

// Is reports whether b starts like a DICOM Part 10 file: a 128-byte
// preamble and "DICM".
func Is(b []byte) bool {
	return len(b) >= 132 && string(b[128:132]) == "DICM"
}

// Header is what a DICOM file says about its first frame, read without
// decoding pixels.
type Header struct {
	// Width and Height are the frame's Columns and Rows.
	Width, Height int
	// Frames is the number of frames (1 when absent); only the first is read.
	Frames int
	// BitsAllocated, BitsStored and SamplesPerPixel describe the samples.
	BitsAllocated, BitsStored, SamplesPerPixel int
	// Photometric is the Photometric Interpretation (MONOCHROME2, ...).
	Photometric string
	// TransferSyntaxUID and TransferSyntax (its name) say how pixels are encoded.
	TransferSyntaxUID, TransferSyntax string
	// DataBytes is the size of the data set; the parser holds about this
	// much while reading. For a deflated one it is what is inflated and
	// kept: the elements before the pixel data and the first frame
	// (inflateDataSet), whether or not the pixels were read.
	DataBytes int64
}

// Image is a decoded DICOM image.
type Image struct {
	Header
	// Gray is the first frame for display: 0 black, 255 white.
	Gray *image.Gray
	// PixelSpacing is the row and column spacing in mm (Pixel Spacing,
	// else Imager Pixel Spacing); zero when the file gives neither.
	PixelSpacing [2]float64
	// SpacingTag names the tag PixelSpacing came from ("PixelSpacing",
	// "ImagerPixelSpacing" or "").
	SpacingTag string
	// VOI says how grey levels were chosen: "VOI LUT", "window C/W",
	// "stored values" (8 bits, no rescale) or "full range".
	VOI string
	// Tags are the patient and study tags.
	Tags Tags
}

// Limits bound what Decode accepts before it allocates pixel memory.
type Limits struct {
	// CheckSize returns an error for a frame size the caller refuses (nil: any).
	CheckSize func(w, h int) error
	// MaxBytes bounds the data set size (inflated) and the memory decoding
	// needs (0: no bound).
	MaxBytes int64
}

// ReadHeader checks the file (ErrNotDICOM, ErrCorrupt, ErrUnsupported,
// ErrUnsupportedTransferSyntax, or the error of lim.CheckSize) and returns
// its header without decoding pixels. A deflated data set is inflated only
// as far as its pixel data, whose value is not read.
func ReadHeader(b []byte, lim Limits) (Header, error) {
	p, err := parse(b, lim, false)
	if err != nil {
		return Header{}, err
	}
	return p.hdr, nil
}

// Decode checks the file as ReadHeader does and decodes its first frame
// to 8-bit grey, with its pixel spacing and tags.
func Decode(b []byte, lim Limits) (img *Image, err error) {
	p, err := parse(b, lim, true)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the pixel data could not be read", fmt.Errorf("panic: %v", r)))
		}
	}()
	gray, voi, err := p.render()
	if err != nil {
		return nil, err
	}
	img = &Image{Header: p.hdr, Gray: gray, VOI: voi, Tags: tagsOf(&p.ds)}
	img.PixelSpacing, img.SpacingTag = spacingOf(&p.ds)
	return img, nil
}

// parsed is a checked data set.
type parsed struct {
	hdr   Header
	ds    dcm.Dataset
	pixel dcm.PixelDataInfo
	big   bool // big-endian native pixel data
	// declaredPixel is the pixel data's declared length when its value
	// was not read (a deflated file's header), else -1.
	declaredPixel int64
}

// parse checks lengths, parses the data set (pixel data kept raw) and
// checks the image attributes against the pixel data. A deflated data set
// is inflated as a stream (inflateDataSet) up to its pixel data, and with
// its first frame only when withPixels.
func parse(b []byte, lim Limits, withPixels bool) (p *parsed, err error) {
	if !Is(b) {
		return nil, ErrNotDICOM
	}
	m, err := readMeta(b)
	if err != nil {
		return nil, err
	}
	p = &parsed{hdr: Header{TransferSyntaxUID: m.ts, TransferSyntax: TransferSyntaxName(m.ts), DataBytes: int64(len(b) - m.dataAt)},
		big: m.ts == ExplicitVRBigEndian, declaredPixel: -1}
	src := b
	if m.ts == DeflatedExplicitVRLE {
		inf, err := inflateDataSet(b[:m.dataAt], m.tsAt, m.tsLen, b[m.dataAt:], lim, withPixels)
		if err != nil {
			return nil, err
		}
		src, p.hdr.DataBytes = inf.file, inf.dataBytes
		if !withPixels {
			p.declaredPixel = inf.pixelLen
		}
	} else if err := prescan(b, m); err != nil {
		return nil, err
	}
	if !Supported(m.ts) {
		return nil, unsupportedTS(m.ts, "")
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the data set could not be parsed", fmt.Errorf("panic: %v", r)))
		}
	}()
	p.ds, err = dcm.Parse(bytes.NewReader(src), int64(len(src)), nil,
		dcm.SkipProcessingPixelDataValue(), dcm.AllowUnknownSpecificCharacterSet(), dcm.AllowMissingMetaElementGroupLength())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the data set could not be parsed", err))
	}
	if err := p.checkImage(lim); err != nil {
		return nil, err
	}
	return p, nil
}

// unsupportedTS is ErrUnsupportedTransferSyntax naming the syntax.
func unsupportedTS(ts, detail string) error {
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return fmt.Errorf("%w: %s (%s)%s; uncompressed, deflated and 8-bit JPEG baseline or extended DICOM are read: export the image in one of those",
		ErrUnsupportedTransferSyntax, TransferSyntaxName(ts), ts, detail)
}

// checkImage reads the image attributes and checks them against each
// other, the limits and the pixel data.
func (p *parsed) checkImage(lim Limits) error {
	h := &p.hdr
	h.Height, _ = intOf(&p.ds, tag.Rows)
	h.Width, _ = intOf(&p.ds, tag.Columns)
	h.BitsAllocated, _ = intOf(&p.ds, tag.BitsAllocated)
	h.BitsStored, _ = intOf(&p.ds, tag.BitsStored)
	h.SamplesPerPixel, _ = intOf(&p.ds, tag.SamplesPerPixel)
	h.Photometric = stringOf(&p.ds, tag.PhotometricInterpretation)
	h.Frames = 1
	if n, ok := numberOf(&p.ds, tag.NumberOfFrames); ok {
		h.Frames = int(n)
	}
	pe, err := p.ds.FindElementByTag(tag.PixelData)
	if err != nil {
		return fmt.Errorf("%w: no pixel data", ErrUnsupported)
	}
	info, ok := pe.Value.GetValue().(dcm.PixelDataInfo)
	if !ok {
		return fmt.Errorf("%w: pixel data of type %T", ErrCorrupt, pe.Value.GetValue())
	}
	p.pixel = info
	if h.Width <= 0 || h.Height <= 0 {
		return fmt.Errorf("%w: %dx%d pixels", ErrCorrupt, h.Width, h.Height)
	}
	if lim.CheckSize != nil {
		if err := lim.CheckSize(h.Width, h.Height); err != nil {
			return err
		}
	}
	if h.Frames < 1 {
		return fmt.Errorf("%w: %d frames", ErrCorrupt, h.Frames)
	}
	if h.BitsStored == 0 {
		h.BitsStored = h.BitsAllocated
	}
	switch {
	case h.BitsAllocated != 8 && h.BitsAllocated != 16:
		return fmt.Errorf("%w: %d bits allocated (8 or 16 read)", ErrUnsupported, h.BitsAllocated)
	case h.BitsStored < 1 || h.BitsStored > h.BitsAllocated:
		return fmt.Errorf("%w: %d bits stored in %d", ErrCorrupt, h.BitsStored, h.BitsAllocated)
	case h.SamplesPerPixel != 1 && h.SamplesPerPixel != 3:
		return fmt.Errorf("%w: %d samples per pixel", ErrUnsupported, h.SamplesPerPixel)
	}
	switch h.Photometric {
	case "MONOCHROME1", "MONOCHROME2":
		if h.SamplesPerPixel != 1 {
			return fmt.Errorf("%w: %s with %d samples per pixel", ErrCorrupt, h.Photometric, h.SamplesPerPixel)
		}
	case "RGB", "YBR_FULL", "YBR_FULL_422":
		if h.SamplesPerPixel != 3 {
			return fmt.Errorf("%w: %s with %d samples per pixel", ErrCorrupt, h.Photometric, h.SamplesPerPixel)
		}
	default:
		return fmt.Errorf("%w: photometric interpretation %q (MONOCHROME1, MONOCHROME2, RGB, YBR_FULL read)", ErrUnsupported, h.Photometric)
	}
	px := int64(h.Width) * int64(h.Height)
	if lim.MaxBytes > 0 && h.DataBytes+4*px > lim.MaxBytes {
		return fmt.Errorf("%w: %dx%d DICOM needs about %d MB to decode, over %d MB", ErrTooLarge, h.Width, h.Height, (h.DataBytes+4*px)>>20, lim.MaxBytes>>20)
	}
	encapsulatedTS := p.hdr.TransferSyntaxUID == JPEGBaseline || p.hdr.TransferSyntaxUID == JPEGExtended
	if p.pixel.IsEncapsulated != encapsulatedTS {
		return fmt.Errorf("%w: pixel data encapsulated %v in %s", ErrCorrupt, p.pixel.IsEncapsulated, p.hdr.TransferSyntax)
	}
	if p.pixel.IsEncapsulated {
		if len(p.pixel.Frames) == 0 {
			return fmt.Errorf("%w: no encapsulated frames", ErrCorrupt)
		}
		return nil
	}
	frame := px * int64(h.SamplesPerPixel) * int64(h.BitsAllocated/8)
	have := int64(len(p.pixel.UnprocessedValueData))
	if p.declaredPixel >= 0 {
		have = p.declaredPixel
	}
	if have < frame {
		return fmt.Errorf("%w: pixel data holds %d bytes, one %dx%d frame needs %d", ErrCorrupt, have, h.Width, h.Height, frame)
	}
	return nil
}
