package pop

import (
	"image"
	"math"
	"slices"
	"testing"

	"gocv.io/x/gocv"
)

// TestGrayView: a view reads the Mat's own memory, so it sees a later
// write; a copy does not.
func TestGrayView(t *testing.T) {
	m := gocv.NewMatWithSize(4, 5, gocv.MatTypeCV8UC1)
	defer m.Close()
	v, err := grayView(m)
	if err != nil {
		t.Fatal(err)
	}
	c := gray{w: m.Cols(), h: m.Rows(), pix: m.ToBytes()} // a copy
	m.SetUCharAt(2, 3, 200)
	if v.w != 5 || v.h != 4 || v.at(3, 2) != 200 {
		t.Fatalf("view %dx%d reads %v at (3, 2), want 5x4 and 200", v.w, v.h, v.at(3, 2))
	}
	if c.at(3, 2) == 200 {
		t.Fatal("the copy changed with the Mat")
	}
	col := gocv.NewMatWithSize(2, 2, gocv.MatTypeCV8UC3)
	defer col.Close()
	if _, err := grayView(col); err == nil {
		t.Fatal("a colour Mat viewed as grey")
	}
	// A region has gaps between its rows: it is copied, row by row.
	region := m.Region(image.Rect(1, 1, 4, 3))
	defer region.Close()
	if region.IsContinuous() {
		t.Fatal("the region is continuous: the test needs gaps")
	}
	r, err := grayView(region)
	if err != nil {
		t.Fatal(err)
	}
	if r.w != 3 || r.h != 2 || len(r.pix) != 6 || r.at(2, 1) != 200 {
		t.Fatalf("region view %dx%d, %d bytes, (2, 1) = %v; want 3x2, 6, 200", r.w, r.h, len(r.pix), r.at(2, 1))
	}
}

// TestStepProfile: the profile with shared samples equals sampling both
// points of every step, for grey and colour fields, offsets that do and
// do not line up, and reused buffers.
func TestStepProfile(t *testing.T) {
	g := gray{w: 7, h: 5, pix: make([]uint8, 35)}
	c := colour{w: 7, h: 5, pix: make([]uint8, 105)}
	for i := range g.pix {
		g.pix[i] = uint8(i * 37 % 251)
	}
	for i := range c.pix {
		c.pix[i] = uint8(i * 53 % 241)
	}
	direct := func(f field, px, py, nx, ny, lo, hi, st, half float64) []float64 {
		var out []float64
		for o := lo; o <= hi; o += st {
			var a, b [3]float64
			f.values(px+(o-half)*nx, py+(o-half)*ny, &a)
			f.values(px+(o+half)*nx, py+(o+half)*ny, &b)
			d := 0.0
			for k := range f.nch() {
				d = math.Max(d, math.Abs(b[k]-a[k]))
			}
			out = append(out, d)
		}
		return out
	}
	var buf stepBuf
	var got []float64
	for _, f := range []field{g, c} {
		for _, tc := range []struct{ px, py, nx, ny, lo, hi, st, half float64 }{
			{3.2, 2.1, 0.6, 0.8, -2.5, 2.5 + 1e-9, 0.5, 1},
			{3.2, 2.1, 0.6, 0.8, -26.437301, 26.437301 + 1e-9, 0.5, 1},
			{1.1, 4.7, -0.8, 0.6, 0.3, 6.3, 0.5, 1},
			{2, 2, 1, 0, -1, 1, 0.3, 1},   // 2*half/st not whole: no sharing
			{2, 2, 0, 1, -1, 1, 0.5, 0.1}, // shift rounds to 0: no sharing
		} {
			got = stepProfile(f, tc.px, tc.py, tc.nx, tc.ny, tc.lo, tc.hi, tc.st, tc.half, got[:0], &buf)
			want := direct(f, tc.px, tc.py, tc.nx, tc.ny, tc.lo, tc.hi, tc.st, tc.half)
			if !slices.Equal(got, want) {
				t.Fatalf("%T %+v:\n got %v\nwant %v", f, tc, got, want)
			}
			if len(buf.offs) != len(want) {
				t.Fatalf("%d offsets for %d steps", len(buf.offs), len(want))
			}
		}
	}
}
