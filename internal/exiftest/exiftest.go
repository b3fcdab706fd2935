// Package exiftest writes an EXIF Orientation tag into JPEG and PNG test
// images, as phones and cameras do, so that no photo is committed.
package exiftest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// TIFF returns a minimal TIFF block (the body of an EXIF segment) whose
// IFD0 holds one entry: Orientation (tag 0x0112, SHORT, count 1) = o, in
// big-endian ("MM", as many cameras write) or little-endian ("II", as
// phones write) byte order. An ImageDescription entry comes first, so a
// reader must walk the directory rather than read its first entry.
func TIFF(o uint16, bigEndian bool) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	var b bytes.Buffer
	if bigEndian {
		bo = binary.BigEndian
		b.WriteString("MM")
	} else {
		b.WriteString("II")
	}
	w := func(v any) { binary.Write(&b, bo, v) }
	w(uint16(42))
	w(uint32(8)) // IFD0 right after the header
	w(uint16(2))
	// ImageDescription, ASCII, 4 bytes ("vet\0") held in the entry.
	w(uint16(0x010e))
	w(uint16(2))
	w(uint32(4))
	b.WriteString("vet\x00")
	// Orientation, SHORT, 1 value, left-justified in the 4-byte field.
	w(uint16(0x0112))
	w(uint16(3))
	w(uint32(1))
	w(o)
	w(uint16(0))
	w(uint32(0)) // no next IFD
	return b.Bytes()
}

// JPEG returns jpg with an APP1 Exif segment carrying tiff (TIFF's
// output, or any bytes to test a reader) right after the start-of-image
// marker, ahead of the encoder's own segments.
func JPEG(jpg, tiff []byte) []byte {
	seg := append([]byte("Exif\x00\x00"), tiff...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xff, 0xe1, byte((len(seg)+2)>>8), byte(len(seg)+2))
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// PNG returns png with an eXIf chunk carrying tiff after its IHDR chunk.
func PNG(png, tiff []byte) []byte {
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, IHDR's length, type, data and CRC
	var c bytes.Buffer
	binary.Write(&c, binary.BigEndian, uint32(len(tiff)))
	c.WriteString("eXIf")
	c.Write(tiff)
	crc := crc32.NewIEEE()
	crc.Write([]byte("eXIf"))
	crc.Write(tiff)
	binary.Write(&c, binary.BigEndian, crc.Sum32())
	out := append([]byte{}, png[:ihdrEnd]...)
	out = append(out, c.Bytes()...)
	return append(out, png[ihdrEnd:]...)
}
