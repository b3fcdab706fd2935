package pop

import (
	"image"
	"testing"

	"gocv.io/x/gocv"
)

// TestShrinkArea: halving first gives the requested size and stays within
// a few grey levels of one area resize on a camera frame (a composite
// photo of a screen, also in grey and at twice the size); a size not
// under half of the source both ways, or a source with an odd side, takes
// one area resize and matches it exactly. (The halved path averages over up to one source pixel more on
// each side, so on a synthetic step of 150 levels with no optical blur it
// can differ by up to 150/scale at the step.)
func TestShrinkArea(t *testing.T) {
	frame, err := DecodeFrame(readFrame(t, "testdata/bench/screen_0000.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	defer frame.Close()
	grey := gocv.NewMat()
	defer grey.Close()
	gocv.CvtColor(frame, &grey, gocv.ColorBGRToGray)
	big := gocv.NewMat()
	defer big.Close()
	gocv.Resize(grey, &big, image.Point{2 * grey.Cols(), 2 * grey.Rows()}, 0, 0, gocv.InterpolationLinear)
	odd := frame.Region(image.Rect(3, 5, 1282, 726))
	defer odd.Close()
	for _, tc := range []struct {
		name   string
		src    gocv.Mat
		ow, oh int
		exact  bool
	}{
		{"colour frame to the working copy", frame, 512, 288, false},
		{"grey frame to the classical scene", grey, 800, 450, false},
		{"twice the size: two halvings", big, 800, 450, false},
		{"odd size, not continuous: one resize", odd, 300, 170, true},
		{"under half one way only: one resize", grey, 900, 600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := gocv.NewMat(), gocv.NewMat()
			defer got.Close()
			defer want.Close()
			shrinkArea(tc.src, &got, image.Point{tc.ow, tc.oh})
			gocv.Resize(tc.src, &want, image.Point{tc.ow, tc.oh}, 0, 0, gocv.InterpolationArea)
			if got.Cols() != tc.ow || got.Rows() != tc.oh || got.Channels() != tc.src.Channels() {
				t.Fatalf("got %dx%dx%d, want %dx%dx%d", got.Cols(), got.Rows(), got.Channels(), tc.ow, tc.oh, tc.src.Channels())
			}
			g, w := got.ToBytes(), want.ToBytes()
			maxDiff, within1 := 0, 0
			for i := range g {
				d := int(g[i]) - int(w[i])
				d = max(d, -d)
				maxDiff = max(maxDiff, d)
				if d <= 1 {
					within1++
				}
			}
			share := float64(within1) / float64(len(g))
			t.Logf("max difference %d, %.1f %% within one level", maxDiff, 100*share)
			switch {
			case tc.exact && maxDiff != 0:
				t.Fatalf("max difference %d, want none", maxDiff)
			case maxDiff > 16 || share < 0.80:
				t.Fatalf("max difference %d (limit 16), %.1f %% within one level (want 80 %%)", maxDiff, 100*share)
			}
		})
	}
}

// TestGrayView: a view reads the Mat's own memory, so it sees a later
// write; a copy does not.
func TestGrayView(t *testing.T) {
	m := gocv.NewMatWithSize(4, 5, gocv.MatTypeCV8UC1)
	defer m.Close()
	v, err := grayView(m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := grayOf(m)
	if err != nil {
		t.Fatal(err)
	}
	m.SetUCharAt(2, 3, 200)
	if v.w != 5 || v.h != 4 || v.at(3, 2) != 200 {
		t.Fatalf("view %dx%d reads %v at (3, 2), want 5x4 and 200", v.w, v.h, v.at(3, 2))
	}
	if c.at(3, 2) == 200 {
		t.Fatal("the copy changed with the Mat")
	}
	if _, err := grayView(gocv.NewMatWithSize(2, 2, gocv.MatTypeCV8UC3)); err == nil {
		t.Fatal("a colour Mat viewed as grey")
	}
}
