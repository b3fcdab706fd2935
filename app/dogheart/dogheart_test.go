package dogheart

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteMat: the file has the v5 header, the variable's name and its
// values column-major; a wrong shape is refused.
func TestWriteMat(t *testing.T) {
	tests := []struct {
		name    string
		m       Matrix
		wantErr bool
		want    []float64 // column-major
	}{
		{"six points", Matrix{Name: "six_points", Rows: 3, Cols: 2, Data: []float64{1, 2, 3, 4, 5.5, 6}}, false, []float64{1, 3, 5.5, 2, 4, 6}},
		{"wrong shape", Matrix{Name: "x", Rows: 2, Cols: 2, Data: []float64{1}}, true, nil},
		{"no name", Matrix{Rows: 1, Cols: 1, Data: []float64{1}}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteMat(&b, tc.m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			f := b.Bytes()
			if !bytes.HasPrefix(f, []byte("MATLAB 5.0 MAT-file")) || string(f[126:128]) != "IM" || !bytes.Contains(f, []byte(tc.m.Name)) {
				t.Fatalf("header or name missing")
			}
			if len(f)%8 != 0 {
				t.Errorf("length %d not 8-aligned", len(f))
			}
			vals := f[len(f)-8*len(tc.want):]
			for i, w := range tc.want {
				if got := math.Float64frombits(binary.LittleEndian.Uint64(vals[8*i:])); got != w {
					t.Errorf("value %d = %v, want %v", i, got, w)
				}
			}
		})
	}
}

// TestSalt: a salt is created once and read back the same; a damaged
// one is refused.
func TestSalt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "learn", "salt")
	a, err := LoadOrCreateSalt(p)
	if err != nil || len(a) != 32 {
		t.Fatalf("create: %v %d", err, len(a))
	}
	b, err := LoadOrCreateSalt(p)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("reload differs: %v", err)
	}
	c, _ := LoadOrCreateSalt(filepath.Join(t.TempDir(), "salt"))
	if bytes.Equal(a, c) {
		t.Error("two new salts are equal")
	}
	os.WriteFile(p, []byte("not hex"), 0o600)
	if _, err := LoadOrCreateSalt(p); err == nil {
		t.Error("damaged salt accepted")
	}
}

// TestStems: only images with a label count.
func TestStems(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCase(dir, "b", []byte("png"), [6][2]float64{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteCase(dir, "a", []byte("png"), [6][2]float64{}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "Images", "c.png"), []byte("x"), 0o644)
	got, err := Stems(dir)
	if err != nil || len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("stems %v %v", got, err)
	}
}
