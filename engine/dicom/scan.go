package dicom

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/suyashkumar/dicom/pkg/tag"
)

// undefinedLength is the value length of an element whose end is marked
// by a delimitation item.
const undefinedLength = 0xffffffff

// longVRs are the explicit VRs with a 2-byte reserved field and a 4-byte
// length.
var longVRs = map[string]bool{"OB": true, "OD": true, "OF": true, "OL": true, "OV": true, "OW": true,
	"SQ": true, "SV": true, "UC": true, "UN": true, "UR": true, "UT": true, "UV": true}

// fileMeta is where a file's meta information puts things.
type fileMeta struct {
	// ts is the transfer syntax UID.
	ts string
	// tsAt and tsLen locate the transfer syntax value in the file.
	tsAt, tsLen int
	// dataAt is the offset of the data set.
	dataAt int
}

// readMeta reads the file meta information (explicit VR little endian)
// for the transfer syntax, checking that each length fits in the file.
func readMeta(b []byte) (m fileMeta, err error) {
	pos := 132
	for pos+8 <= len(b) && binary.LittleEndian.Uint16(b[pos:]) == 0x0002 {
		elem := binary.LittleEndian.Uint16(b[pos+2:])
		vr := string(b[pos+4 : pos+6])
		var vl uint32
		if longVRs[vr] {
			if pos+12 > len(b) {
				return m, fmt.Errorf("%w: truncated file meta information", ErrCorrupt)
			}
			vl, pos = binary.LittleEndian.Uint32(b[pos+8:]), pos+12
		} else {
			vl, pos = uint32(binary.LittleEndian.Uint16(b[pos+6:])), pos+8
		}
		if int64(vl) > int64(len(b)-pos) {
			return m, fmt.Errorf("%w: file meta element (0002,%04x) claims %d bytes, %d left", ErrCorrupt, elem, vl, len(b)-pos)
		}
		if elem == 0x0010 {
			m.ts, m.tsAt, m.tsLen = strings.TrimRight(string(b[pos:pos+int(vl)]), " \x00"), pos, int(vl)
		}
		pos += int(vl)
	}
	if m.ts == "" {
		return m, fmt.Errorf("%w: no transfer syntax in the file meta information", ErrCorrupt)
	}
	m.dataAt = pos
	return m, nil
}

// prescan walks every element of an uncompressed data set, checking that
// each defined length fits in what is left, so that the parser never
// allocates for a length the file cannot hold. (A deflated data set is
// checked while inflateDataSet reads it.)
func prescan(b []byte, m fileMeta) error {
	var bo binary.ByteOrder = binary.LittleEndian
	if m.ts == ExplicitVRBigEndian {
		bo = binary.BigEndian
	}
	return scanLengths(b[m.dataAt:], bo, m.ts == ImplicitVRLittleEndian)
}

// MaxElements bounds the elements, items and fragments of a data set: a
// radiograph has a few hundred; a crafted file of millions of tiny
// elements would make the parser allocate gigabytes.
const MaxElements = 200_000

// scanLengths walks a data set's elements flat: a sequence or an item of
// a sequence is entered (its elements follow), a leaf element is skipped
// after checking that its length fits, and the items of encapsulated
// pixel data are skipped the same way.
func scanLengths(d []byte, bo binary.ByteOrder, implicit bool) error {
	pos := 0
	fragments := false // inside encapsulated pixel data
	for n := 0; pos+8 <= len(d); n++ {
		if n == MaxElements {
			return fmt.Errorf("%w: over %d elements", ErrCorrupt, MaxElements)
		}
		t := tag.Tag{Group: bo.Uint16(d[pos:]), Element: bo.Uint16(d[pos+2:])}
		if t.Group == 0xfffe { // item and delimiters: always a 4-byte length
			vl := bo.Uint32(d[pos+4:])
			pos += 8
			switch {
			case t.Element == 0xe000 && fragments:
				if vl == undefinedLength || int64(vl) > int64(len(d)-pos) {
					return fmt.Errorf("%w: pixel data fragment claims %d bytes, %d left", ErrCorrupt, vl, len(d)-pos)
				}
				pos += int(vl)
			case t.Element == 0xe0dd:
				fragments = false
			}
			continue
		}
		var vr string
		var vl uint32
		if implicit {
			vr = "UN"
			if info, err := tag.Find(t); err == nil && len(info.VRs) > 0 {
				vr = info.VRs[0]
			}
			vl, pos = bo.Uint32(d[pos+4:]), pos+8
		} else {
			vr = string(d[pos+4 : pos+6])
			if longVRs[vr] {
				if pos+12 > len(d) {
					return fmt.Errorf("%w: truncated element %v", ErrCorrupt, t)
				}
				vl, pos = bo.Uint32(d[pos+8:]), pos+12
			} else {
				vl, pos = uint32(bo.Uint16(d[pos+6:])), pos+8
			}
		}
		switch {
		case vl == undefinedLength && t == tag.PixelData:
			fragments = true
		case vl == undefinedLength || vr == "SQ":
			// A sequence (or UN holding one): its items follow.
		case int64(vl) > int64(len(d)-pos):
			return fmt.Errorf("%w: element %v claims %d bytes, %d left", ErrCorrupt, t, vl, len(d)-pos)
		default:
			pos += int(vl)
		}
	}
	return nil
}
