package dicomtest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"testing"
)

// DeflatedTS is the deflated explicit VR little endian transfer syntax.
const DeflatedTS = "1.2.840.10008.1.2.1.99"

// longVR are the explicit VRs with a 4-byte length.
var longVR = map[string]bool{"OB": true, "OW": true, "SQ": true, "UN": true, "UT": true}

// ElemHeader writes an explicit VR little endian element header of
// length n; the caller writes the value.
func ElemHeader(w io.Writer, group, elem uint16, vr string, n uint32) {
	var h [12]byte
	binary.LittleEndian.PutUint16(h[0:], group)
	binary.LittleEndian.PutUint16(h[2:], elem)
	copy(h[4:], vr)
	if longVR[vr] {
		binary.LittleEndian.PutUint32(h[8:], n)
		w.Write(h[:12])
		return
	}
	binary.LittleEndian.PutUint16(h[6:], uint16(n))
	w.Write(h[:8])
}

// Elem writes one explicit VR little endian element, its value padded to
// an even length.
func Elem(w io.Writer, group, elem uint16, vr string, value []byte) {
	if len(value)%2 == 1 {
		pad := byte(0)
		if vr != "UI" && vr != "OB" {
			pad = ' '
		}
		value = append(bytes.Clone(value), pad)
	}
	ElemHeader(w, group, elem, vr, uint32(len(value)))
	w.Write(value)
}

// US is a DICOM unsigned short value.
func US(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

// Zeros writes n zero bytes, 1 MiB at a time.
func Zeros(w io.Writer, n int64) {
	chunk := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(chunk)))
		w.Write(chunk[:k])
		n -= k
	}
}

// GreyAttrs writes the image attributes of a w x h 8-bit MONOCHROME2
// image, in tag order (group 0028).
func GreyAttrs(out io.Writer, w, h int) {
	Elem(out, 0x0028, 0x0002, "US", US(1))
	Elem(out, 0x0028, 0x0004, "CS", []byte("MONOCHROME2"))
	Elem(out, 0x0028, 0x0010, "US", US(uint16(h)))
	Elem(out, 0x0028, 0x0011, "US", US(uint16(w)))
	Elem(out, 0x0028, 0x0100, "US", US(8))
	Elem(out, 0x0028, 0x0101, "US", US(8))
	Elem(out, 0x0028, 0x0102, "US", US(7))
	Elem(out, 0x0028, 0x0103, "US", US(0))
}

// GreyPixels is the 8-bit test pattern of a w x h image: (x + 3y) mod 256.
func GreyPixels(w, h int) []byte {
	p := make([]byte, w*h)
	for y := range h {
		for x := range w {
			p[y*w+x] = byte(x + 3*y)
		}
	}
	return p
}

// partTen is the preamble, "DICM" and the file meta information of a
// Part 10 file in transfer syntax ts.
func partTen(ts string) *bytes.Buffer {
	var meta bytes.Buffer
	Elem(&meta, 0x0002, 0x0001, "OB", []byte{0, 1})
	Elem(&meta, 0x0002, 0x0010, "UI", []byte(ts))
	var file bytes.Buffer
	file.Write(make([]byte, 128))
	file.WriteString("DICM")
	Elem(&file, 0x0002, 0x0000, "UL", binary.LittleEndian.AppendUint32(nil, uint32(meta.Len())))
	file.Write(meta.Bytes())
	return &file
}

// Explicit is a DICOM Part 10 file with the explicit VR little endian
// transfer syntax whose data set is what write writes.
func Explicit(write func(w io.Writer)) []byte {
	file := partTen("1.2.840.10008.1.2.1")
	write(file)
	return file.Bytes()
}

// Deflated is a DICOM Part 10 file with the deflated explicit VR little
// endian transfer syntax whose data set is what write writes, deflated as
// it is written (so a data set of hundreds of MB never sits in memory).
func Deflated(t testing.TB, write func(w io.Writer)) []byte {
	t.Helper()
	file := partTen(DeflatedTS)
	z, err := flate.NewWriter(file, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	write(z)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return file.Bytes()
}

// DeflateBomb is a deflated DICOM of a small (64 x 64) image preceded by a
// top-level private OB element of n zero bytes: about n/1000 bytes on the
// wire. Issue 46's bomb is 300 MiB (a 306 KB file).
func DeflateBomb(t testing.TB, n int64) []byte {
	return Deflated(t, func(w io.Writer) {
		Elem(w, 0x0008, 0x0060, "CS", []byte("DX"))
		Elem(w, 0x0009, 0x0010, "LO", []byte("BOMB"))
		ElemHeader(w, 0x0009, 0x1000, "OB", uint32(n))
		Zeros(w, n)
		GreyAttrs(w, 64, 64)
		Elem(w, 0x7fe0, 0x0010, "OB", GreyPixels(64, 64))
	})
}
