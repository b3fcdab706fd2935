package heldout

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/engine/cardiac"
)

func TestReadTruth(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
		wantItems           int
	}{
		{"two items", `{"generator":"xraysim","items":[{"file":"a.png","radiograph":true,"landmarks":{"Vertebra A":[1,2]}},{"file":"n.png"}]}`, "", 2},
		{"not JSON", `{"items":[`, "parse held-out truth", 0},
		{"missing", "", "read held-out truth", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.body != "" {
				if err := os.WriteFile(filepath.Join(dir, "truth.json"), []byte(tc.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tr, err := ReadTruth(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Items) != tc.wantItems || tr.Generator != "xraysim" {
				t.Fatalf("got %+v", tr)
			}
			p, ok := tr.Items[0].Point(cardiac.ClassNames[cardiac.VertebraA])
			if !ok || p != (cardiac.Point{X: 1, Y: 2}) {
				t.Errorf("Vertebra A = %v, %v", p, ok)
			}
			if _, ok := tr.Items[0].Point(cardiac.ClassNames[cardiac.VertebraB]); ok {
				t.Error("a landmark the truth lacks was found")
			}
		})
	}
}

func TestReadDump(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"file":"a.png","code":4,"vhs":10.5,"pred_vhs":10.2}`+"\n"+`{"file":"n.png","negative":true,"code":6}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDump(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 2 || d["a.png"].PredVHS == nil || *d["a.png"].PredVHS != 10.2 || !d["n.png"].Negative || d["n.png"].PredVHS != nil {
		t.Errorf("got %+v", d)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"file":"a.png"}`+"\n"+`{"file":`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDump(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad dump: err %v, want it to name line 2", err)
	}
}

// TestQuantileAndShareWithin: the summary figures the evaluation tools
// report, on a small set and on none.
func TestQuantileAndShareWithin(t *testing.T) {
	x := []float64{0.9, 0.1, 0.4, 2.0, 0.5}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"median", Quantile(x, 0.5), 0.5},
		{"95th percentile", Quantile(x, 0.95), 2.0},
		{"worst", Quantile(x, 1), 2.0},
		{"best", Quantile(x, 0), 0.1},
		{"within 0.5", ShareWithin(x, 0.5), 0.6},
		{"within 1.0", ShareWithin(x, 1.0), 0.8},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if x[0] != 0.9 {
		t.Error("Quantile sorted its input")
	}
	if !math.IsNaN(Quantile(nil, 0.5)) || !math.IsNaN(ShareWithin(nil, 1)) {
		t.Error("an empty set has a figure")
	}
}
