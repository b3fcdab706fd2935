package cardiac

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"math"
	"strings"
	"testing"

	"vetlens/engine/imageproc"
)

func TestSpineTilt(t *testing.T) {
	// along returns landmarks whose A-B runs 100 px at deg degrees below
	// the horizontal (y grows downwards), pointing right or left.
	along := func(deg float64, right bool) Landmarks {
		var l Landmarks
		l[VertebraA] = Point{500, 300}
		dx, dy := 100*math.Cos(deg*math.Pi/180), 100*math.Sin(deg*math.Pi/180)
		if !right {
			dx = -dx
		}
		l[VertebraB] = Point{500 + dx, 300 + dy}
		return l
	}
	cases := []struct {
		name string
		l    Landmarks
		want float64
	}{
		{"canonical, head left", along(CanonicalSpineDeg, true), 0},
		{"canonical, head right", along(CanonicalSpineDeg, false), 0},
		// Head left, tail end raised 20 degrees (B above A): turning
		// clockwise on screen (negative) levels it.
		{"head left, tail raised", along(CanonicalSpineDeg-20, true), -20},
		{"head left, tail lowered", along(CanonicalSpineDeg+25, true), 25},
		// Head right, tail (on the left) raised: counter-clockwise.
		{"head right, tail raised", along(CanonicalSpineDeg-20, false), 20},
		{"head right, tail lowered", along(CanonicalSpineDeg+25, false), -25},
		{"A on B", Landmarks{}, 0},
		{"not finite", func() Landmarks { l := along(30, true); l[VertebraB].X = math.NaN(); return l }(), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpineTilt(tc.l); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("SpineTilt = %.6f, want %.6f", got, tc.want)
			}
		})
	}
}

// TestLevelsTiltedSpine turns the simulator's test radiographs 25 degrees
// either way, further than anything in training: the engine reads the
// tilt from its first pass, measures the image levelled, and returns
// landmarks in the turned image's own pixels, near its truth.
func TestLevelsTiltedSpine(t *testing.T) {
	e := testEngine(t)
	if strings.HasPrefix(e.ModelVersion(), "test-double") {
		t.Skip("untrained test double models: tilt is meaningless")
	}
	levelled, n := 0, 0
	for _, p := range loadPhantoms(t).Phantoms {
		if p.Generator != "xraysim" {
			continue
		}
		img := testPhantom(t, p.File)
		truth := truthLandmarks(t, p.Landmarks)
		for _, deg := range []float64{25, -25} {
			n++
			rot := imageproc.RotateGray(img, deg, 1024)
			var want Landmarks
			for k, q := range truth {
				x, y := rot.FromOriginal(q.X, q.Y)
				want[k] = Point{x, y}
			}
			b := rot.Image.Bounds()
			diag := math.Hypot(float64(b.Dx()), float64(b.Dy()))

			plain, err := e.Predict(context.Background(), rot.Image, PredictOptions{NoLevel: true})
			if err != nil {
				t.Fatal(err)
			}
			if plain.LevelledDeg != 0 {
				t.Errorf("%s %+.0f: NoLevel measured under a turn of %.1f", p.File, deg, plain.LevelledDeg)
			}
			r, err := e.Predict(context.Background(), rot.Image, PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkConsistent(t, r)
			if r.LevelledDeg == 0 {
				t.Logf("%s %+.0f: not levelled (members' directions disagree)", p.File, deg)
				continue
			}
			levelled++
			// The turn undoes the tilt (the simulator's own spine lies
			// within about 15 degrees of canonical).
			if d := math.Abs(r.LevelledDeg + deg); d > 16 {
				t.Errorf("%s %+.0f: levelled by %.1f", p.File, deg, r.LevelledDeg)
			}
			// The models' points: on the column route Vertebra A and B
			// are placed on the column by rule (bench/columncal
			// measures them).
			var lmErr float64
			for k := range VertebraA {
				lmErr += r.Landmarks[k].Dist(want[k]) / diag / VertebraA
			}
			t.Logf("%s %+.0f: levelled by %.1f, code %d, mean heart landmark error %.2f %% of the diagonal, VHS %.2f (truth %.2f)",
				p.File, deg, r.LevelledDeg, r.Code, 100*lmErr, r.Geometry.VHS, p.VHS)
			if lmErr > 0.02 {
				t.Errorf("%s %+.0f: mean heart landmark error %.2f %% of the diagonal after levelling", p.File, deg, 100*lmErr)
			}
			if r.Code.HasVHS() && math.Abs(r.Geometry.VHS-p.VHS) > phantomMaxVHSError {
				t.Errorf("%s %+.0f: VHS %.2f returned, truth %.2f", p.File, deg, r.Geometry.VHS, p.VHS)
			}
		}
	}
	if levelled < n/2 {
		t.Errorf("%d of %d tilted radiographs levelled, want at least half", levelled, n)
	}
}

// BenchmarkPredictTilted1024 is BenchmarkPredict1024 on the same
// radiograph turned 25 degrees into a 1024x1024 JPEG: the worst case,
// where the engine levels the spine and runs the ensemble twice.
func BenchmarkPredictTilted1024(b *testing.B) {
	e := testEngine(b)
	img, _, err := image.Decode(bytes.NewReader(bench1024(b)))
	if err != nil {
		b.Fatal(err)
	}
	rot := imageproc.RotateGray(img, 25, 0)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, cropCentre(rot.Image, 1024), &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	r, err := e.PredictBytes(context.Background(), buf.Bytes(), PredictOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if r.LevelledDeg == 0 {
		b.Fatal("the tilted benchmark image was not levelled")
	}
	benchPredict(b, e, buf.Bytes())
}

// cropCentre is the central side x side square of g.
func cropCentre(g *image.Gray, side int) image.Image {
	b := g.Bounds()
	x0, y0 := (b.Dx()-side)/2, (b.Dy()-side)/2
	return g.SubImage(image.Rect(x0, y0, x0+side, y0+side))
}
