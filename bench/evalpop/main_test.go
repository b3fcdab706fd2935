package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"vetlens/engine/cardiac"
	"vetlens/engine/pop"
)

func TestQuadErr(t *testing.T) {
	q := pop.Quad{{X: 0, Y: 0}, {X: 30, Y: 0}, {X: 30, Y: 40}, {X: 0, Y: 40}}
	it := item{Width: 30, Height: 40} // diagonal 50
	cases := []struct {
		name  string
		truth [][2]float64
		want  float64
	}{
		{"exact", [][2]float64{{0, 0}, {30, 0}, {30, 40}, {0, 40}}, 0},
		{"every corner 5 px off", [][2]float64{{3, 4}, {33, 4}, {33, 44}, {3, 44}}, 0.1},
		{"one corner 10 px off", [][2]float64{{0, 0}, {30, 0}, {30, 40}, {10, 40}}, 0.05},
		{"no truth quad (no screen in the frame)", nil, math.NaN()},
		{"truth cut short", [][2]float64{{0, 0}, {30, 0}}, math.NaN()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := quadErr(q, tc.truth, it)
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) {
					t.Fatalf("got %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCorrelation(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"perfectly linear", []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, 1},
		{"perfectly inverse", []float64{1, 2, 3, 4}, []float64{8, 6, 4, 2}, -1},
		{"NaN pairs skipped", []float64{1, nan, 2, 3, 4}, []float64{2, 5, 4, 6, nan}, 1},
		{"known value", []float64{1, 2, 3}, []float64{1, 3, 2}, 0.5},
		{"under three pairs", []float64{1, 2}, []float64{1, 2}, nan},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := correlation(tc.x, tc.y)
			if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRectifyTruth warps a frame holding a 300x200 white rectangle, its
// truth corners on the rectangle, and expects an upright image of the
// displayed aspect (3:2) that is white inside.
func TestRectifyTruth(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for y := 100; y < 300; y++ {
		for x := 150; x < 450; x++ {
			img.Set(x, y, color.White)
		}
	}
	path := filepath.Join(dir, "frame.png")
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	it := item{File: "frame.png", Corners: [][2]float64{{150, 100}, {450, 100}, {450, 300}, {150, 300}}, DisplayedSize: []float64{900, 600}}
	b, err := rectifyTruth(path, it)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if w, h := out.Bounds().Dx(), out.Bounds().Dy(); w != 300 || h != 200 {
		t.Fatalf("rectified %dx%d, want 300x200 (the displayed aspect at the quad's height)", w, h)
	}
	if r, _, _, _ := out.At(150, 100).RGBA(); r>>8 < 240 {
		t.Fatalf("centre grey %d, want white", r>>8)
	}
	if _, err := rectifyTruth(path, item{File: "frame.png"}); err == nil {
		t.Fatal("no corners: want an error")
	}
}

// TestRectifiedTruthVHS: the true quad at the displayed size leaves VHS
// as it is; a quad cut short on one side stretches the radiograph and
// moves it.
func TestRectifiedTruthVHS(t *testing.T) {
	lm := map[string][2]float64{
		"heart_top": {200, 150}, "heart_bottom": {260, 330}, "heart_right": {150, 260}, "heart_left": {320, 230},
		"VLAS": {300, 160}, "Vertebra A": {160, 90}, "Vertebra B": {400, 110},
	}
	raw, err := json.Marshal(lm)
	if err != nil {
		t.Fatal(err)
	}
	var l cardiac.Landmarks
	for k, name := range cardiac.ClassNames {
		l[k] = cardiac.Point{X: lm[name][0] - 100, Y: lm[name][1] - 50}
	}
	it := item{Landmarks: raw, VHS: cardiac.Measure(l).VHS}
	exact := pop.Quad{{X: 100, Y: 50}, {X: 500, Y: 50}, {X: 500, Y: 350}, {X: 100, Y: 350}}
	v, ok := rectifiedTruthVHS(it, exact, 400, 300)
	if !ok || math.Abs(v-it.VHS) > 1e-9 {
		t.Fatalf("exact quad: VHS %v (ok %v), want %v", v, ok, it.VHS)
	}
	short := pop.Quad{{X: 100, Y: 50}, {X: 450, Y: 50}, {X: 450, Y: 350}, {X: 100, Y: 350}}
	if v, ok := rectifiedTruthVHS(it, short, 400, 300); !ok || math.Abs(v-it.VHS) < 0.05 {
		t.Fatalf("quad cut short, stretched to 400 px: VHS %v, want it moved from %v", v, it.VHS)
	}
	if _, ok := rectifiedTruthVHS(item{}, exact, 400, 300); ok {
		t.Fatal("no landmarks: want false")
	}
}

func TestCountOver(t *testing.T) {
	cases := []struct {
		name  string
		v     []float64
		limit float64
		want  int
	}{
		{"none", nil, 1, 0},
		{"strictly above only", []float64{0.5, 1, 1.01, 2.3}, 1, 2},
		{"all above", []float64{3, 4}, 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := countOver(tc.v, tc.limit); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}
