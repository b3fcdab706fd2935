package dicom

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/suyashkumar/dicom/pkg/tag"

	"vetlens/internal/errs"
)

// DeflateMargin bounds what a deflated data set may inflate to beyond the
// first frame's pixel data: every other element, kept for the parser or
// skipped, counts against it. A radiograph's header is a few kB to a few
// hundred kB; a deflate bomb (a private element of hundreds of MB that
// compresses to a few hundred kB) is refused once this much is inflated.
const DeflateMargin = 8 << 20

// skipPrivateBytes is the length over which a top-level private element
// (odd group) of a deflated data set is skipped while inflating, not kept:
// nothing this package reads is in one, and leaving it out of the data
// set that the parser gets keeps it from being held in memory. Nested
// elements are kept, since an enclosing sequence's length counts them.
const skipPrivateBytes = 64 << 10

// errInflateLimit is returned by cappedReader past its allowance.
var errInflateLimit = errors.New("inflate limit reached")

// cappedReader counts what it reads and refuses to read past left.
type cappedReader struct {
	r    io.Reader
	left int64
	read int64
}

// Read reads at most what is left of the allowance.
func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errInflateLimit
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.read += int64(n)
	return n, err
}

// inflatedSet is a deflated file rewritten for the parser.
type inflatedSet struct {
	// file is the Part 10 file in explicit VR little endian: the file
	// meta information (its transfer syntax rewritten), the kept elements
	// up to the top-level pixel data, and that pixel data holding the
	// first frame only (withPixels) or nothing.
	file []byte
	// dataBytes is the size of the rewritten data set with its first frame.
	dataBytes int64
	// pixelLen is the length the pixel data element declares.
	pixelLen int64
	// inflated counts the bytes inflated.
	inflated int64
}

// imageAttrs are the top-level attributes that size a frame.
type imageAttrs struct {
	rows, cols, bitsAllocated, samples int
}

// frameBytes is the size of one native frame, or 0 when the attributes
// do not describe one this package reads.
func (a imageAttrs) frameBytes() int64 {
	if a.rows <= 0 || a.cols <= 0 || (a.bitsAllocated != 8 && a.bitsAllocated != 16) || (a.samples != 1 && a.samples != 3) {
		return 0
	}
	return int64(a.rows) * int64(a.cols) * int64(a.samples) * int64(a.bitsAllocated/8)
}

// inflateDataSet inflates a deflated data set as a stream, only as far as
// the top-level pixel data, and rewrites it with meta (the file up to the
// data set, whose transfer syntax value at tsAt is overwritten with
// explicit VR little endian) into a file the parser reads without
// inflating. Nothing beyond DeflateMargin plus the first frame is
// inflated: the elements before the pixel data count against the margin
// (ErrTooLarge past it), large top-level private elements are skipped
// without being kept, the pixel data is read for its first frame only
// and nothing after it is read. Without withPixels (a header read, which
// runs before the caller reserves memory) only the top-level image
// attributes (group 0028, up to 64 KiB each) are kept and the pixel data
// is not read, so a header read holds next to nothing whatever the file;
// dataBytes is still what a decode keeps. The frame's size is checked
// (lim.CheckSize, lim.MaxBytes) before its buffer is allocated.
func inflateDataSet(meta []byte, tsAt, tsLen int, deflated []byte, lim Limits, withPixels bool) (*inflatedSet, error) {
	out := bytes.NewBuffer(make([]byte, 0, len(meta)+4096))
	out.Write(meta)
	ts := out.Bytes()[tsAt : tsAt+tsLen]
	copy(ts, ExplicitVRLittleEndian)
	for i := len(ExplicitVRLittleEndian); i < len(ts); i++ {
		ts[i] = 0 // the parser trims trailing NULs; the meta's lengths stay as they were
	}
	cr := &cappedReader{r: flate.NewReader(bytes.NewReader(deflated)), left: DeflateMargin}
	br := bufio.NewReaderSize(cr, 32<<10)
	pos := int64(0) // offset in the inflated data set
	fail := func(what string, err error) error {
		switch {
		case errors.Is(err, errInflateLimit):
			return fmt.Errorf("%w: deflated data set inflates to over %d MB before its pixel data", ErrTooLarge, DeflateMargin>>20)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%w: deflated data set ends inside %s", ErrCorrupt, what)
		}
		return fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the deflated data set could not be inflated", err))
	}
	var hdr [12]byte
	read := func(p []byte, what string) error {
		if _, err := io.ReadFull(br, p); err != nil {
			return fail(what, err)
		}
		pos += int64(len(p))
		return nil
	}
	type open struct{ end int64 } // a sequence or item; end -1: delimited
	var stack []open
	var attrs imageAttrs
	res := &inflatedSet{}
	// kept counts what a decode keeps of the data set (withPixels: what
	// out gets), so that a header read, which keeps only the top-level
	// image attributes and reads past the rest, reports the same size.
	kept := int64(0)
	emit := func(p []byte) {
		kept += int64(len(p))
		if withPixels {
			out.Write(p)
		}
	}
	for n := 0; ; n++ {
		for len(stack) > 0 && stack[len(stack)-1].end >= 0 && pos >= stack[len(stack)-1].end {
			stack = stack[:len(stack)-1]
		}
		if n == MaxElements {
			return nil, fmt.Errorf("%w: over %d elements", ErrCorrupt, MaxElements)
		}
		if _, err := br.Peek(1); err == io.EOF {
			break // no pixel data: the parser's check says so
		}
		if err := read(hdr[:8], "an element header"); err != nil {
			return nil, err
		}
		t := tag.Tag{Group: binary.LittleEndian.Uint16(hdr[0:]), Element: binary.LittleEndian.Uint16(hdr[2:])}
		if t.Group == 0xfffe { // items and delimiters: a 4-byte length, no VR
			vl := binary.LittleEndian.Uint32(hdr[4:])
			switch t.Element {
			case 0xe000:
				end := int64(-1)
				if vl != undefinedLength {
					end = pos + int64(vl)
				}
				stack = append(stack, open{end})
			case 0xe00d, 0xe0dd:
				if len(stack) > 0 && stack[len(stack)-1].end < 0 {
					stack = stack[:len(stack)-1]
				}
			}
			emit(hdr[:8])
			continue
		}
		vr := string(hdr[4:6])
		headLen := 8
		vl := uint32(binary.LittleEndian.Uint16(hdr[6:]))
		if longVRs[vr] {
			if err := read(hdr[8:12], "an element header"); err != nil {
				return nil, err
			}
			headLen, vl = 12, binary.LittleEndian.Uint32(hdr[8:])
		}
		top := len(stack) == 0
		switch {
		case top && t == tag.PixelData:
			if vl == undefinedLength {
				return nil, fmt.Errorf("%w: encapsulated pixel data in a deflated data set", ErrCorrupt)
			}
			res.pixelLen = int64(vl)
			return res, res.finish(out, kept, br, cr, hdr[:headLen], attrs, lim, withPixels)
		case vr == "SQ" || vl == undefinedLength:
			end := int64(-1)
			if vl != undefinedLength {
				end = pos + int64(vl)
			}
			stack = append(stack, open{end})
			emit(hdr[:headLen])
		case top && t.Group%2 == 1 && vl > skipPrivateBytes:
			if _, err := br.Discard(int(vl)); err != nil {
				return nil, fail(fmt.Sprintf("element %v", t), err)
			}
			pos += int64(vl)
		default:
			if int64(vl) > cr.left+int64(br.Buffered()) {
				return nil, fmt.Errorf("%w: deflated data set: element %v claims %d bytes, over the %d MB allowed before the pixel data", ErrTooLarge, t, vl, DeflateMargin>>20)
			}
			kept += int64(headLen) + int64(vl)
			if !withPixels && !(top && t.Group == 0x0028 && vl <= skipPrivateBytes) {
				// A header read keeps the image attributes only.
				if _, err := br.Discard(int(vl)); err != nil {
					return nil, fail(fmt.Sprintf("element %v", t), err)
				}
				pos += int64(vl)
				continue
			}
			out.Write(hdr[:headLen])
			at := out.Len()
			out.Grow(int(vl))
			val := out.AvailableBuffer()[:vl]
			if err := read(val, fmt.Sprintf("element %v", t)); err != nil {
				return nil, err
			}
			out.Write(val)
			if top && vr == "US" && vl == 2 {
				v := int(binary.LittleEndian.Uint16(out.Bytes()[at:]))
				switch t {
				case tag.Rows:
					attrs.rows = v
				case tag.Columns:
					attrs.cols = v
				case tag.BitsAllocated:
					attrs.bitsAllocated = v
				case tag.SamplesPerPixel:
					attrs.samples = v
				}
			}
		}
	}
	res.file, res.dataBytes, res.inflated = out.Bytes(), kept, cr.read
	return res, nil
}

// finish ends the rewritten file at the top-level pixel data, whose
// header is head: with the first frame read into it (withPixels, a frame
// these attributes describe) or with no value.
func (res *inflatedSet) finish(out *bytes.Buffer, kept int64, br *bufio.Reader, cr *cappedReader, head []byte, attrs imageAttrs, lim Limits, withPixels bool) error {
	metaAndKept := int64(out.Len())
	frame := attrs.frameBytes()
	if frame > 0 && lim.CheckSize != nil {
		if err := lim.CheckSize(attrs.cols, attrs.rows); err != nil {
			return err
		}
	}
	if frame > 0 && res.pixelLen < frame {
		return fmt.Errorf("%w: pixel data holds %d bytes, one %dx%d frame needs %d", ErrCorrupt, res.pixelLen, attrs.cols, attrs.rows, frame)
	}
	padded := frame + frame&1
	px := int64(attrs.rows) * int64(attrs.cols)
	dataBytes := kept + int64(len(head)) + padded
	if lim.MaxBytes > 0 && frame > 0 && dataBytes+4*px > lim.MaxBytes {
		return fmt.Errorf("%w: %dx%d DICOM needs about %d MB to decode, over %d MB", ErrTooLarge, attrs.cols, attrs.rows, (dataBytes+4*px)>>20, lim.MaxBytes>>20)
	}
	if !withPixels || frame == 0 {
		padded = 0
	}
	if len(head) == 8 && padded > 0xffff {
		return fmt.Errorf("%w: pixel data of VR %s too long for its length field", ErrCorrupt, head[4:6])
	}
	file := make([]byte, metaAndKept+int64(len(head))+padded)
	copy(file, out.Bytes())
	w := file[metaAndKept:]
	copy(w, head)
	if len(head) == 12 {
		binary.LittleEndian.PutUint32(w[8:], uint32(padded))
	} else {
		binary.LittleEndian.PutUint16(w[6:], uint16(padded))
	}
	if padded > 0 {
		cr.left += frame // the frame is what the declared image needs
		if _, err := io.ReadFull(br, w[len(head):int64(len(head))+frame]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: deflated data set ends inside its pixel data", ErrCorrupt)
			}
			return fmt.Errorf("%w: %w", ErrCorrupt, errs.Hide("the deflated pixel data could not be inflated", err))
		}
	}
	res.file = file
	res.dataBytes = dataBytes
	res.inflated = cr.read
	return nil
}
