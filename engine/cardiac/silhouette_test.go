package cardiac

import (
	"encoding/json"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestSilhouetteAxesEllipse(t *testing.T) {
	const n = 200
	prob := make([]float32, n*n)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			x, y := (float64(c)+0.5-100)/40, (float64(r)+0.5-100)/70
			if x*x+y*y <= 1 {
				prob[r*n+c] = 1
			}
		}
	}
	ax, ok := SilhouetteAxes(prob, n, Point{100, 30})
	if !ok {
		t.Fatal("no axes on a plain ellipse")
	}
	if math.Abs(ax.Bottom.Y-170) > 1 {
		t.Errorf("apex y %.2f, want 170", ax.Bottom.Y)
	}
	if w := ax.Right.Dist(ax.Left); math.Abs(w-80) > 1.5 {
		t.Errorf("short axis %.2f, want 80", w)
	}
}

func TestSilhouetteAxesRefusesTooLittle(t *testing.T) {
	tests := []struct {
		name string
		prob []float32
		size int
		top  Point
	}{
		{"empty", make([]float32, 64*64), 64, Point{10, 10}},
		{"dot", squareMap(64, 30, 33), 64, Point{31, 31}},
		{"wrong length", make([]float32, 10), 64, Point{1, 1}},
		{"no size", nil, 0, Point{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := SilhouetteAxes(tc.prob, tc.size, tc.top); ok {
				t.Error("measured a map with too little heart")
			}
		})
	}
}

func TestSilhouetteDoubt(t *testing.T) {
	tests := []struct {
		name string
		prob []float32
		want float64
	}{
		{"crisp", []float32{0, 0, 1, 1, 0.9}, 0},
		{"soft everywhere", []float32{0.5, 0.3, 0.7}, 1},
		{"empty", []float32{0, 0.1, 0.2}, 1},
		{"no map", nil, 1},
		{"one soft pixel in four", []float32{1, 1, 0.95, 0.5, 0.05}, 0.25},
		{"the bounds: 0.2 is not heart, 0.8 is not soft", []float32{0.2, 0.8, 0.8, 0.79999}, 1.0 / 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SilhouetteDoubt(tc.prob); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("doubt %.4f, want %.4f", got, tc.want)
			}
		})
	}
}

func squareMap(n, from, to int) []float32 {
	p := make([]float32, n*n)
	for r := from; r < to; r++ {
		for c := from; c < to; c++ {
			p[r*n+c] = 1
		}
	}
	return p
}

// TestSilhouetteAxesMatchesTrainer holds the Go rule equal to the trainer's
// (models/train/cardiac/train_silhouette.py axes_from_mask) on the simulator's
// exact silhouettes.
func TestSilhouetteAxesMatchesTrainer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "silhouette_axes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Cases []struct {
			Mask                     string
			Top, Bottom, Right, Left [2]float64
		}
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range fx.Cases {
		f, err := os.Open(filepath.Join("testdata", c.Mask))
		if err != nil {
			t.Fatal(err)
		}
		im, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		g := im.(*image.Gray)
		n := g.Bounds().Dx()
		prob := make([]float32, n*n)
		for i, v := range g.Pix {
			prob[i] = float32(v) / 255
		}
		ax, ok := SilhouetteAxes(prob, n, Point{c.Top[0], c.Top[1]})
		if !ok {
			t.Fatalf("%s: no axes", c.Mask)
		}
		for _, pr := range []struct {
			name string
			got  Point
			want [2]float64
		}{{"bottom", ax.Bottom, c.Bottom}, {"right", ax.Right, c.Right}, {"left", ax.Left, c.Left}} {
			if math.Abs(pr.got.X-pr.want[0]) > 1e-4 || math.Abs(pr.got.Y-pr.want[1]) > 1e-4 {
				t.Errorf("%s %s: got %.5f,%.5f, want %.5f,%.5f", c.Mask, pr.name, pr.got.X, pr.got.Y, pr.want[0], pr.want[1])
			}
		}
	}
}

// TestColumnRouteTakesSilhouetteAxes: where a silhouette measured the
// heart, the column route reports the members' long axis with the
// silhouette's short axis (the hybrid heart), judges the heart by the
// members' long-axis scatter alone, and a withheld heart never gives a
// number.
func TestColumnRouteTakesSilhouetteAxes(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45, noise: 0.05}
	l := heartBeside(c, 10)
	axesOf := func(m Landmarks) *HeartAxes {
		return &HeartAxes{Bottom: m[HeartBottom], Right: m[HeartRight], Left: m[HeartLeft]}
	}
	wide := heartBeside(c, 12) // its short axis is 0.44 x 12 periods: VHS 0.56 x 10 + 0.44 x 12 = 10.88
	// members whose long axes agree and whose short axes do not
	shortScatter := l
	shortScatter[HeartRight], shortScatter[HeartLeft] = heartBeside(c, 11)[HeartRight], heartBeside(c, 11)[HeartLeft]
	agree := []Landmarks{l, l}
	cases := []struct {
		name    string
		members []Landmarks
		sil     *HeartAxes
		guard   Guard
		wantVHS float64 // 0: not checked
	}{
		{"none", agree, nil, GuardNone, 10},
		{"the silhouette's short axis", agree, axesOf(wide), GuardNone, 10.88},
		{"the silhouette's short axis, ends named the other way", agree,
			&HeartAxes{Bottom: wide[HeartBottom], Right: wide[HeartLeft], Left: wide[HeartRight]}, GuardNone, 10.88},
		{"members' short axes scatter, no silhouette", []Landmarks{l, shortScatter}, nil, GuardHeartPointsDisagree, 0},
		{"members' short axes scatter, the silhouette measures", []Landmarks{l, shortScatter}, axesOf(wide), GuardNone, 0},
		{"members' long axes scatter: withheld with a silhouette too", []Landmarks{heartBeside(c, 9.7), heartBeside(c, 10.7)},
			axesOf(wide), GuardHeartPointsDisagree, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newResult(c.w, c.h, 0.95, tc.members, sharpPeaks(2))
			r.Silhouette = tc.sil
			r.measureColumn(c.gray(3))
			if r.Guard != tc.guard {
				t.Fatalf("guard %q, want %q (code %d, members' SD %.3f)", r.Guard, tc.guard, r.Code, r.HeartVHSSD)
			}
			if withheld := tc.guard != GuardNone; withheld != (r.VHS == nil) {
				t.Errorf("guard %q with VHS %v", r.Guard, r.VHS)
			}
			if tc.wantVHS != 0 && math.Abs(r.Geometry.VHS-tc.wantVHS) > 0.2 {
				t.Errorf("VHS %.3f, want about %.2f", r.Geometry.VHS, tc.wantVHS)
			}
			if math.IsNaN(r.SilhouetteGap) != (tc.sil == nil) {
				t.Errorf("gap %.3f with silhouette %v", r.SilhouetteGap, tc.sil != nil)
			}
			mean := EnsembleMean(tc.members)
			if r.Landmarks[HeartTop].Dist(mean[HeartTop]) > 1e-9 || r.Landmarks[HeartBottom].Dist(mean[HeartBottom]) > 1e-9 {
				t.Errorf("long axis %v-%v, want the members' %v-%v", r.Landmarks[HeartTop], r.Landmarks[HeartBottom],
					mean[HeartTop], mean[HeartBottom])
			}
			if tc.sil != nil {
				got := []Point{r.Landmarks[HeartRight], r.Landmarks[HeartLeft]}
				if !(got[0].Dist(tc.sil.Right) < 1e-9 && got[1].Dist(tc.sil.Left) < 1e-9) &&
					!(got[0].Dist(tc.sil.Left) < 1e-9 && got[1].Dist(tc.sil.Right) < 1e-9) {
					t.Errorf("short axis %v, want the silhouette's %v-%v", got, tc.sil.Right, tc.sil.Left)
				}
				// the cranial end is heart_right whichever end the
				// silhouette named so: the members know the head's side
				if r.Landmarks[HeartRight].Dist(l[HeartRight]) > r.Landmarks[HeartRight].Dist(l[HeartLeft]) {
					t.Errorf("heart_right %v lies nearer the members' heart_left %v", r.Landmarks[HeartRight], l[HeartLeft])
				}
			}
			checkConsistent(t, r)
		})
	}
}

// TestLongAxisSD: the members' long axes over v, their standard
// deviation (the short axes play no part); NaN without members or v.
func TestLongAxisSD(t *testing.T) {
	c := column{w: 900, h: 700, origin: Point{40, 120}, dirDeg: 8, period: 45}
	l := heartBeside(c, 10)
	wider := l
	wider[HeartRight], wider[HeartLeft] = heartBeside(c, 13)[HeartRight], heartBeside(c, 13)[HeartLeft]
	longer := heartBeside(c, 11) // its long axis 0.56 x 11 periods
	cases := []struct {
		name    string
		members []Landmarks
		v       float64
		want    float64 // NaN: NaN
	}{
		{"agree", []Landmarks{l, l, l}, 45, 0},
		{"short axes differ only", []Landmarks{l, wider}, 45, 0},
		{"long axes 0.56 v apart", []Landmarks{l, longer}, 45, stdDev([]float64{0.56 * 10, 0.56 * 11})},
		{"no members", nil, 45, math.NaN()},
		{"no v", []Landmarks{l, longer}, 0, math.NaN()},
	}
	for _, tc := range cases {
		got := LongAxisSD(tc.members, tc.v)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(tc.want) && math.Abs(got-tc.want) > 1e-6) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
