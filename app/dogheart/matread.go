package dogheart

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// More MATLAB v5 data types (a stored array may use any numeric one).
const (
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miSINGLE     = 7
	miINT64      = 12
	miUINT64     = 13
	miCOMPRESSED = 15
)

// maxMatBytes bounds what ReadMat inflates from one compressed element.
const maxMatBytes = 16 << 20

// ReadMat reads the numeric matrix called name from a little-endian
// MATLAB v5 file (plain or zlib-compressed elements, any numeric storage
// type, as MATLAB and scipy.io.savemat write them). Data comes back
// row-major (Data[r*Cols+c]) as float64.
func ReadMat(b []byte, name string) (Matrix, error) {
	if !IsMat(b) {
		return Matrix{}, errors.New("mat: not a MATLAB v5 file")
	}
	if string(b[126:128]) != "IM" {
		return Matrix{}, errors.New("mat: big-endian files are not supported")
	}
	rest := b[128:]
	for len(rest) >= 8 {
		typ, data, next, err := element(rest)
		if err != nil {
			return Matrix{}, err
		}
		rest = next
		if typ == miCOMPRESSED {
			zr, err := zlib.NewReader(bytes.NewReader(data))
			if err != nil {
				return Matrix{}, fmt.Errorf("mat: compressed element: %w", err)
			}
			inner, err := io.ReadAll(io.LimitReader(zr, maxMatBytes))
			zr.Close()
			if err != nil {
				return Matrix{}, fmt.Errorf("mat: compressed element: %w", err)
			}
			if typ, data, _, err = element(inner); err != nil {
				return Matrix{}, err
			}
		}
		if typ != miMATRIX {
			continue
		}
		m, ok, err := matrix(data, name)
		if err != nil {
			return Matrix{}, err
		}
		if ok {
			return m, nil
		}
	}
	return Matrix{}, fmt.Errorf("mat: no variable %q", name)
}

// element splits one data element off b: its type, its data and what
// follows it (8-byte aligned).
func element(b []byte) (typ uint32, data, rest []byte, err error) {
	if len(b) < 8 {
		return 0, nil, nil, errors.New("mat: truncated element")
	}
	first := binary.LittleEndian.Uint32(b)
	if small := first >> 16; small != 0 { // small data element: 4 bytes of data in the tag
		if small > 4 {
			return 0, nil, nil, errors.New("mat: bad small element")
		}
		return first & 0xffff, b[4 : 4+small], b[8:], nil
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if n < 0 || n > len(b)-8 {
		return 0, nil, nil, errors.New("mat: truncated element")
	}
	end := 8 + n
	if first != miCOMPRESSED {
		end = min(8+pad8(n), len(b))
	}
	return first, b[8 : 8+n], b[end:], nil
}

// matrix decodes a miMATRIX element's data when its name is name.
func matrix(b []byte, name string) (Matrix, bool, error) {
	var parts [4][]byte
	var types [4]uint32
	for i := range parts {
		t, d, rest, err := element(b)
		if err != nil {
			return Matrix{}, false, err
		}
		parts[i], types[i], b = d, t, rest
	}
	if string(parts[2]) != name {
		return Matrix{}, false, nil
	}
	if len(parts[0]) < 4 || parts[0][0] < mxDOUBLE_CLASS || parts[0][0] > 15 || parts[0][1]&0x08 != 0 {
		return Matrix{}, false, fmt.Errorf("mat: %s is not a real numeric array", name)
	}
	if types[1] != miINT32 || len(parts[1]) != 8 {
		return Matrix{}, false, fmt.Errorf("mat: %s is not a 2-D array", name)
	}
	rows := int(int32(binary.LittleEndian.Uint32(parts[1])))
	cols := int(int32(binary.LittleEndian.Uint32(parts[1][4:])))
	vals, err := numbers(types[3], parts[3])
	if err != nil {
		return Matrix{}, false, fmt.Errorf("mat: %s: %w", name, err)
	}
	if rows < 0 || cols < 0 || len(vals) != rows*cols {
		return Matrix{}, false, fmt.Errorf("mat: %s has %d values for %dx%d", name, len(vals), rows, cols)
	}
	m := Matrix{Name: name, Rows: rows, Cols: cols, Data: make([]float64, len(vals))}
	for c := range cols { // column-major on disk
		for r := range rows {
			m.Data[r*cols+c] = vals[c*rows+r]
		}
	}
	return m, true, nil
}

// numbers decodes a numeric element of MATLAB type typ.
func numbers(typ uint32, b []byte) ([]float64, error) {
	sizes := map[uint32]int{miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
		miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8}
	sz, ok := sizes[typ]
	if !ok {
		return nil, fmt.Errorf("unsupported data type %d", typ)
	}
	out := make([]float64, len(b)/sz)
	le := binary.LittleEndian
	for i := range out {
		p := b[i*sz:]
		switch typ {
		case miINT8:
			out[i] = float64(int8(p[0]))
		case miUINT8:
			out[i] = float64(p[0])
		case miINT16:
			out[i] = float64(int16(le.Uint16(p)))
		case miUINT16:
			out[i] = float64(le.Uint16(p))
		case miINT32:
			out[i] = float64(int32(le.Uint32(p)))
		case miUINT32:
			out[i] = float64(le.Uint32(p))
		case miSINGLE:
			out[i] = float64(math.Float32frombits(le.Uint32(p)))
		case miDOUBLE:
			out[i] = math.Float64frombits(le.Uint64(p))
		case miINT64:
			out[i] = float64(int64(le.Uint64(p)))
		case miUINT64:
			out[i] = float64(le.Uint64(p))
		}
	}
	return out, nil
}

// ReadLabel reads dir/Labels/stem.mat's six_points (ParseLabel).
func ReadLabel(dir, stem string) ([6][2]float64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Labels", stem+".mat"))
	if err != nil {
		return [6][2]float64{}, fmt.Errorf("dogheart: %w", err)
	}
	six, err := ParseLabel(b)
	if err != nil {
		return six, fmt.Errorf("dogheart: %s: %w", stem, err)
	}
	return six, nil
}

// ParseLabel reads a label file's six_points (6x2, or 12 values read in
// row order as the trainers' reshape(6, 2) does).
func ParseLabel(b []byte) ([6][2]float64, error) {
	var six [6][2]float64
	m, err := ReadMat(b, "six_points")
	if err != nil {
		return six, err
	}
	if len(m.Data) != 12 {
		return six, fmt.Errorf("six_points is %dx%d, want 6x2", m.Rows, m.Cols)
	}
	for i := range six {
		six[i] = [2]float64{m.Data[2*i], m.Data[2*i+1]}
	}
	return six, nil
}
