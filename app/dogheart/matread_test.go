package dogheart

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// scipyCompressed is scipy.io.savemat({"other": eye(2), "six_points": A},
// do_compression=True) and scipySingle savemat({"six_points":
// A.astype(float32)}), A = [[1.5,2],[3,4],[5,6],[7,8],[9,10],[11,12.25]].
const (
	scipyCompressed = "4d41544c414220352e30204d41542d66696c6520506c6174666f726d3a20706f7369782c2043726561746564206f6e3a20547565204e6f762032342030363a30303a323320323032360000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001494d0f00000031000000789ce36360608800623620e680d220c00ae533413123542cbf2423b508487302b102030c7cb067c00a3ed80300ba3f053b0f00000053000000789ce36360605800c46c40cc01a541801589cf04c48c40cc05c4c59915f105f9997925c510759c409cc000033fec21348703841681d232505a094aab416906282d00a525a0b402945681d00d1a0e00af280b27"
	scipySingle     = "4d41544c414220352e30204d41542d66696c6520506c6174666f726d3a20706f7369782c2043726561746564206f6e3a20547565204e6f762032342030363a30303a323320323032360000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001494d0e000000700000000600000008000000070000000000000005000000080000000600000002000000010000000a0000007369785f706f696e747300000000000007000000300000000000c03f000040400000a0400000e040000010410000304100000040000080400000c040000000410000204100004441"
)

// TestReadMat: scipy's compressed and single-precision files and our
// own writer's files read back row-major; damaged input is an error.
func TestReadMat(t *testing.T) {
	want := []float64{1.5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.25}
	var own bytes.Buffer
	if err := WriteMat(&own, Matrix{Name: "six_points", Rows: 6, Cols: 2, Data: want}); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	tests := []struct {
		name    string
		file    []byte
		varName string
		wantErr bool
	}{
		{"scipy compressed", dec(scipyCompressed), "six_points", false},
		{"scipy single", dec(scipySingle), "six_points", false},
		{"vetlens writer", own.Bytes(), "six_points", false},
		{"missing variable", own.Bytes(), "nope", true},
		{"truncated", own.Bytes()[:150], "six_points", true},
		{"not mat", []byte("hello"), "six_points", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ReadMat(tc.file, tc.varName)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if m.Rows != 6 || m.Cols != 2 {
				t.Fatalf("shape %dx%d", m.Rows, m.Cols)
			}
			for i, w := range want {
				if m.Data[i] != w {
					t.Errorf("value %d = %v, want %v", i, m.Data[i], w)
				}
			}
		})
	}
}

// TestReadLabel: WriteLabel's points come back.
func TestReadLabel(t *testing.T) {
	dir := t.TempDir()
	six := [6][2]float64{{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}}
	if err := WriteCase(dir, "a", []byte("png"), six); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLabel(dir, "a")
	if err != nil || got != six {
		t.Fatalf("got %v %v", got, err)
	}
	if _, err := ReadLabel(dir, "missing"); err == nil {
		t.Error("missing label read")
	}
}
