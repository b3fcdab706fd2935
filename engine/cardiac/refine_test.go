package cardiac

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"
)

// TestRefineBox: the crop is the landmarks' extent padded by margin times
// its larger side, outward to whole pixels and clipped to the image; the
// same cases are checked against models/train/cardiac/refine.py in
// models/train/tests/test_refine.py.
func TestRefineBox(t *testing.T) {
	square := func(x0, y0, x1, y1 float64) Landmarks {
		return Landmarks{{x0, y0}, {x1, y1}, {x0, y1}, {x1, y0}, {x0, y0}, {x1, y1}, {x0, y0}}
	}
	nan := square(10, 10, 50, 50)
	nan[4] = Point{math.NaN(), 3}
	inf := square(10, 10, 50, 50)
	inf[6] = Point{1, math.Inf(1)}
	cases := []struct {
		name   string
		l      Landmarks
		w, h   int
		margin float64
		want   image.Rectangle
		ok     bool
	}{
		{"inside", square(100, 200, 300, 300), 1000, 800, 0.2, image.Rect(60, 160, 340, 340), true},
		{"fractional outward", square(100.5, 200.25, 300.5, 300.75), 1000, 800, 0.2, image.Rect(60, 160, 341, 341), true},
		{"clipped", square(10, 20, 390, 290), 400, 300, 0.2, image.Rect(0, 0, 400, 300), true},
		{"no margin", square(100, 200, 300, 300), 1000, 800, 0, image.Rect(100, 200, 300, 300), true},
		{"too small", square(100, 100, 110, 140), 1000, 800, 0, image.Rect(100, 100, 110, 140), false},
		{"far outside", square(5000, 5000, 6000, 6000), 1000, 800, 0.2, image.Rect(1000, 800, 1000, 800), false},
		{"huge values do not overflow", square(-1e300, -1e300, 1e300, 1e300), 1000, 800, 0.2, image.Rect(0, 0, 1000, 800), true},
		{"NaN", nan, 1000, 800, 0.2, image.Rectangle{}, false},
		{"Inf", inf, 1000, 800, 0.2, image.Rectangle{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := RefineBox(tc.l, tc.w, tc.h, tc.margin)
			if ok != tc.ok || (tc.ok && got != tc.want) || (!tc.ok && tc.want != (image.Rectangle{}) && got != tc.want) {
				t.Errorf("RefineBox = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestCropImageSharesOrCopies: a standard image is cropped in place; any
// other image.Image is copied with the same pixels.
func TestCropImageSharesOrCopies(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 40, 30))
	for i := range g.Pix {
		g.Pix[i] = uint8(i)
	}
	r := image.Rect(5, 6, 25, 16)
	sub := cropImage(g, r)
	if _, ok := sub.(*image.Gray); !ok || sub.Bounds() != r {
		t.Fatalf("gray crop is %T %v, want *image.Gray %v", sub, sub.Bounds(), r)
	}
	other := cropImage(opaqueImage{g}, r)
	if other.Bounds() != image.Rect(0, 0, 20, 10) {
		t.Fatalf("copied crop bounds %v", other.Bounds())
	}
	for y := 0; y < 10; y++ {
		for x := 0; x < 20; x++ {
			want := g.GrayAt(x+5, y+6).Y
			if got := color.GrayModel.Convert(other.At(x, y)).(color.Gray).Y; got != want {
				t.Fatalf("pixel (%d,%d) = %d, want %d", x, y, got, want)
			}
		}
	}
}

// opaqueImage hides the wrapped image's type (no SubImage method).
type opaqueImage struct{ image.Image }

// refiningEngine is the shipped engine, skipping the test when it has no
// refinement stage (a test double, or models from before the stage).
func refiningEngine(t *testing.T) *Engine {
	t.Helper()
	e := testEngine(t)
	if e.RefineModels() == 0 {
		t.Skip("no cardiac_refine models in the manifest")
	}
	if strings.HasPrefix(e.ModelVersion(), "test-double") {
		t.Skip("untrained test double models: accuracy is meaningless")
	}
	return e
}

// TestRefinementImprovesLandmarks: on the held-out test phantoms, the two
// stages place the landmarks closer to the truth than the first stage
// alone, and every refined landmark lies inside the crop it was found in.
func TestRefinementImprovesLandmarks(t *testing.T) {
	e := refiningEngine(t)
	first, err := loadORT(testModelsDir(t), Options{IntraOpThreads: 2, Concurrency: 1, FirstStageOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if first.RefineModels() != 0 {
		t.Fatalf("FirstStageOnly engine loaded %d refinement models", first.RefineModels())
	}
	var errOne, errTwo float64
	for _, p := range loadPhantoms(t).Phantoms {
		img := testPhantom(t, p.File)
		truth := truthLandmarks(t, p.Landmarks)
		scale := float64(max(p.Width, p.Height))
		r1, err := first.Predict(t.Context(), img, PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := e.Predict(t.Context(), img, PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		box, ok := RefineBox(EnsembleMean(r1.ModelLandmarks), p.Width, p.Height, e.margin)
		if !ok {
			t.Fatalf("%s: no refinement box for the first stage's landmarks", p.File)
		}
		var e1, e2 float64
		for k := range truth {
			e1 += r1.Landmarks[k].Dist(truth[k]) / scale / NumLandmarks
			e2 += r2.Landmarks[k].Dist(truth[k]) / scale / NumLandmarks
			for m, l := range r2.ModelLandmarks {
				if pt := l[k]; pt.X < float64(box.Min.X) || pt.X > float64(box.Max.X) || pt.Y < float64(box.Min.Y) || pt.Y > float64(box.Max.Y) {
					t.Errorf("%s: refinement model %d put %s at %v, outside its crop %v", p.File, m+1, ClassNames[k], pt, box)
				}
			}
		}
		t.Logf("%s: mean landmark error %.4f -> %.4f of the longer side; VHS %.2f -> %.2f (truth %.2f)",
			p.File, e1, e2, r1.Geometry.VHS, r2.Geometry.VHS, p.VHS)
		errOne += e1
		errTwo += e2
	}
	if errTwo >= errOne {
		t.Errorf("refinement did not help: summed mean landmark error %.4f, first stage alone %.4f", errTwo, errOne)
	}
}

// TestRefineStageKeepsFirstStageWithoutBox: first-stage landmarks that
// give no crop (not finite) come back unchanged, peaks included.
func TestRefineStageKeepsFirstStageWithoutBox(t *testing.T) {
	e := refiningEngine(t)
	img := testPhantom(t, "xraysim_1_640x480.png")
	var l Landmarks
	for k := range l {
		l[k] = Point{math.NaN(), 10}
	}
	models := []Landmarks{l, l}
	peaks := [][NumLandmarks]float64{{0.1}, {0.2}}
	gotM, gotP, err := e.refineStage(t.Context(), img, models, peaks)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotM) != 2 || !math.IsNaN(gotM[0][0].X) || gotP[1][0] != 0.2 {
		t.Errorf("refineStage changed unusable first-stage results: %v %v", gotM, gotP)
	}
}
