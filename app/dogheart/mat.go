// Package dogheart reads and writes the DogHeart/CCK folder layout the
// landmark trainers read (models/train/cardiac/dataset.py read_dogheart):
// Images/NAME.png beside Labels/NAME.mat, whose "six_points" variable is
// a 6x2 double array of [x, y] pixel points in the order heart_top,
// heart_bottom, heart_right, heart_left, Vertebra A, Vertebra B.
package dogheart

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// MATLAB v5 data types and the double array class.
const (
	miINT8         = 1
	miINT32        = 5
	miUINT32       = 6
	miDOUBLE       = 9
	miMATRIX       = 14
	mxDOUBLE_CLASS = 6
)

// Matrix is a named 2-D double array, Data in row-major order
// (Data[r*Cols+c]).
type Matrix struct {
	Name       string
	Rows, Cols int
	Data       []float64
}

// WriteMat writes the matrices as a little-endian MATLAB v5 .mat file
// (what scipy.io.loadmat and MATLAB's load read).
func WriteMat(w io.Writer, ms ...Matrix) error {
	var b bytes.Buffer
	hdr := make([]byte, 128)
	for i := range 116 {
		hdr[i] = ' '
	}
	copy(hdr, "MATLAB 5.0 MAT-file, Platform: GLNXA64, Created by: vetlens")
	binary.LittleEndian.PutUint16(hdr[124:], 0x0100)
	copy(hdr[126:], "IM")
	b.Write(hdr)
	for _, m := range ms {
		if m.Rows*m.Cols != len(m.Data) || m.Name == "" {
			return fmt.Errorf("mat: %q is %dx%d with %d values", m.Name, m.Rows, m.Cols, len(m.Data))
		}
		name := []byte(m.Name)
		namePad := pad8(len(name))
		size := 16 + 16 + 8 + namePad + 8 + 8*len(m.Data)
		le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
		le([]uint32{miMATRIX, uint32(size)})
		le([]uint32{miUINT32, 8, mxDOUBLE_CLASS, 0})
		le([]uint32{miINT32, 8})
		le([]int32{int32(m.Rows), int32(m.Cols)})
		le([]uint32{miINT8, uint32(len(name))})
		b.Write(name)
		b.Write(make([]byte, namePad-len(name)))
		le([]uint32{miDOUBLE, uint32(8 * len(m.Data))})
		// MATLAB stores arrays column-major.
		for c := 0; c < m.Cols; c++ {
			for r := 0; r < m.Rows; r++ {
				le(math.Float64bits(m.Data[r*m.Cols+c]))
			}
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("mat: write: %w", err)
	}
	return nil
}

func pad8(n int) int { return (n + 7) &^ 7 }

// IsMat reports whether b starts like a MATLAB v5 .mat file (the format
// scipy.io.loadmat and the trainers read; v7.3 HDF5 files are not).
func IsMat(b []byte) bool {
	return len(b) >= 128 && bytes.HasPrefix(b, []byte("MATLAB 5.0 MAT-file"))
}
