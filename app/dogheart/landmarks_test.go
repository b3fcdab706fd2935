package dogheart

import (
	"os"
	"path/filepath"
	"testing"

	"vetlens/engine/cardiac"
)

// TestLandmarksRoundTrip: landmarks written as a label file and read back
// come out where they were, in DogHeart's order (long axis, short axis,
// then the vertebrae), with the VLAS point, which labels lack, at zero.
func TestLandmarksRoundTrip(t *testing.T) {
	var l cardiac.Landmarks
	for k := range l {
		l[k] = cardiac.Point{X: 10*float64(k) + 1.25, Y: 300 - 7*float64(k)}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "Labels"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteLabel(dir, "case", SixPoints(l)); err != nil {
		t.Fatal(err)
	}
	six, err := ReadLabel(dir, "case")
	if err != nil {
		t.Fatal(err)
	}
	order := []struct {
		six int
		k   int
	}{
		{0, cardiac.HeartTop}, {1, cardiac.HeartBottom}, {2, cardiac.HeartRight},
		{3, cardiac.HeartLeft}, {4, cardiac.VertebraA}, {5, cardiac.VertebraB},
	}
	for _, o := range order {
		if got := (cardiac.Point{X: six[o.six][0], Y: six[o.six][1]}); got != l[o.k] {
			t.Errorf("six_points[%d] = %v, want landmark %d at %v", o.six, got, o.k, l[o.k])
		}
	}
	got := Landmarks(six)
	want := l
	want[cardiac.VLASPoint] = cardiac.Point{}
	if got != want {
		t.Errorf("Landmarks(read back) = %v, want %v", got, want)
	}
}
