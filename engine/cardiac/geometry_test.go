package cardiac

import (
	"math"
	"testing"

	"vetlens/engine/imageproc"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Hand-computed cases, all in pixels of non-square images.
func TestMeasure(t *testing.T) {
	cases := []struct {
		name          string
		l             Landmarks
		vhs, vlas, v  float64
		angle         float64
		perpendicular bool
	}{
		{
			// 2000x1000: A-B 600 px so v = 100; long 500 (vertical), short
			// 500 (horizontal), heart_top-VLAS 200.
			name: "wide, axis-aligned",
			l: Landmarks{
				HeartTop: {1000, 400}, HeartBottom: {1000, 900}, HeartRight: {800, 650}, HeartLeft: {1300, 650},
				VLASPoint: {1000, 600}, VertebraA: {100, 100}, VertebraB: {700, 100},
			},
			vhs: 10, vlas: 2, v: 100, angle: 90, perpendicular: true,
		},
		{
			// 600x1200, 3-4-5 triangles: A-B (180,240) = 300 so v = 50; long
			// (300,400) = 500; short (160,-120) = 200, perpendicular to the
			// long axis; heart_top-VLAS (30,-40) = 50.
			name: "tall, oblique",
			l: Landmarks{
				HeartTop: {300, 500}, HeartBottom: {600, 900}, HeartRight: {200, 800}, HeartLeft: {360, 680},
				VLASPoint: {330, 460}, VertebraA: {50, 100}, VertebraB: {230, 340},
			},
			vhs: 14, vlas: 1, v: 50, angle: 90, perpendicular: true,
		},
		{
			// Short axis parallel to the long axis: angle 0.
			name: "parallel axes",
			l: Landmarks{
				HeartTop: {0, 0}, HeartBottom: {0, 300}, HeartRight: {10, 0}, HeartLeft: {10, 300},
				VLASPoint: {0, 120}, VertebraA: {0, 0}, VertebraB: {360, 0},
			},
			vhs: 10, vlas: 2, v: 60, angle: 0, perpendicular: false,
		},
	}
	for _, tc := range cases {
		g := Measure(tc.l)
		if !near(g.VHS, tc.vhs, 1e-9) || !near(g.VLAS, tc.vlas, 1e-9) || !near(g.Vertebra, tc.v, 1e-9) {
			t.Errorf("%s: VHS %v VLAS %v v %v, want %v %v %v", tc.name, g.VHS, g.VLAS, g.Vertebra, tc.vhs, tc.vlas, tc.v)
		}
		if !near(g.AxisAngle, tc.angle, 1e-6) || g.AxesPerpendicular() != tc.perpendicular {
			t.Errorf("%s: angle %v perpendicular %v, want %v %v", tc.name, g.AxisAngle, g.AxesPerpendicular(), tc.angle, tc.perpendicular)
		}
	}
}

func TestMeasureDegenerate(t *testing.T) {
	var l Landmarks // all points at the origin
	g := Measure(l)
	if !math.IsNaN(g.VHS) || !math.IsNaN(g.AxisAngle) || g.AxesPerpendicular() {
		t.Errorf("degenerate landmarks: %+v, perpendicular %v", g, g.AxesPerpendicular())
	}
}

func TestAxesPerpendicularTolerance(t *testing.T) {
	for _, tc := range []struct {
		offDeg float64
		want   bool
	}{{0, true}, {9.9, true}, {-9.9, true}, {10.1, false}, {-10.1, false}, {45, false}} {
		a := (90 + tc.offDeg) * math.Pi / 180
		l := Landmarks{HeartTop: {500, 100}, HeartBottom: {500, 600}, VertebraA: {0, 0}, VertebraB: {600, 0}}
		l[HeartRight] = Point{500 - 200*math.Sin(a), 350 - 200*math.Cos(a)}
		l[HeartLeft] = Point{500 + 200*math.Sin(a), 350 + 200*math.Cos(a)}
		if got := Measure(l).AxesPerpendicular(); got != tc.want {
			t.Errorf("axes %v deg off perpendicular: got %v, want %v (angle %v)", tc.offDeg, got, tc.want, Measure(l).AxisAngle)
		}
	}
}

// TestToPixelsNonSquare runs hand-placed pixel landmarks through the model
// output form (letterbox units / S) and back, and checks the score comes
// out of pixels, not normalized units.
func TestToPixelsNonSquare(t *testing.T) {
	want := Landmarks{
		HeartTop: {1000, 400}, HeartBottom: {1000, 900}, HeartRight: {800, 650}, HeartLeft: {1300, 650},
		VLASPoint: {1000, 600}, VertebraA: {100, 100}, VertebraB: {700, 100},
	}
	for _, s := range []int{256, 224, 57} {
		lb := imageproc.NewLetterbox(2000, 1000, s)
		out := make([]float32, 2*NumLandmarks)
		for k, p := range want {
			u, v := lb.FromOriginal(p.X, p.Y)
			out[2*k], out[2*k+1] = float32(u/float64(s)), float32(v/float64(s))
		}
		got := toPixels(out, lb)
		for k := range want {
			if !near(got[k].X, want[k].X, 0.01) || !near(got[k].Y, want[k].Y, 0.01) {
				t.Errorf("S=%d landmark %s: %v, want %v", s, ClassNames[k], got[k], want[k])
			}
		}
		if g := Measure(got); !near(g.VHS, 10, 1e-3) || !near(g.VLAS, 2, 1e-3) {
			t.Errorf("S=%d: VHS %v VLAS %v, want 10 and 2", s, g.VHS, g.VLAS)
		}
		// The same points in normalized units would give VHS 15: the
		// check above fails if the engine measured there.
		var n Landmarks
		for k, p := range want {
			n[k] = Point{p.X / 2000, p.Y / 1000}
		}
		if g := Measure(n); near(g.VHS, 10, 0.5) {
			t.Fatalf("test is not sensitive to aspect ratio: normalized VHS %v", g.VHS)
		}
	}
}

func shifted(base Landmarks, k int, dx, dy float64) Landmarks {
	base[k].X += dx
	base[k].Y += dy
	return base
}

func TestSpreadAndDispersion(t *testing.T) {
	base := Landmarks{{100, 100}, {200, 300}, {150, 250}, {250, 260}, {210, 120}, {50, 40}, {400, 60}}
	cases := []struct {
		name   string
		models []Landmarks
		w, h   int
		spread float64
	}{
		{"identical", []Landmarks{base, base, base, base, base}, 1000, 500, 0},
		// Two models +-35 px apart on one landmark: RMS 35 px on that
		// landmark, 0 on the others; 35/7/1000 = 0.005.
		{"one landmark, two models", []Landmarks{shifted(base, 0, 35, 0), shifted(base, 0, -35, 0)}, 1000, 500, 0.005},
		// Scale is max(W,H), so the tall image gives the same value.
		{"one landmark, tall image", []Landmarks{shifted(base, 0, 0, 35), shifted(base, 0, 0, -35)}, 500, 1000, 0.005},
		// Four models at distance 8 px in four directions plus one at the
		// mean: RMS sqrt(4*64/5) on every landmark.
		{"all landmarks, five models", func() []Landmarks {
			var ms []Landmarks
			for _, d := range [][2]float64{{8, 0}, {-8, 0}, {0, 8}, {0, -8}, {0, 0}} {
				m := base
				for k := range m {
					m[k].X += d[0]
					m[k].Y += d[1]
				}
				ms = append(ms, m)
			}
			return ms
		}(), 1024, 768, math.Sqrt(4*64.0/5) / 1024},
	}
	for _, tc := range cases {
		if got := Spread(tc.models, tc.w, tc.h); !near(got, tc.spread, 1e-12) {
			t.Errorf("%s: spread %v, want %v", tc.name, got, tc.spread)
		}
	}
	ms := []Landmarks{shifted(base, VLASPoint, 30, 40), shifted(base, VLASPoint, -30, -40)}
	if got := Dispersion(ms, VLASPoint, 1000); !near(got, 0.05, 1e-12) {
		t.Errorf("VLAS dispersion %v, want 0.05", got)
	}
	if got := Dispersion(ms, HeartTop, 1000); got != 0 {
		t.Errorf("heart_top dispersion %v, want 0", got)
	}
	if got := Spread(nil, 100, 100); !math.IsNaN(got) {
		t.Errorf("spread of no models %v, want NaN", got)
	}
}

func TestEnsembleMeanAndClamp(t *testing.T) {
	a := Landmarks{{0, 0}, {10, 10}}
	b := Landmarks{{10, 20}, {30, 10}}
	m := EnsembleMean([]Landmarks{a, b})
	if m[0] != (Point{5, 10}) || m[1] != (Point{20, 10}) {
		t.Errorf("mean %v", m[:2])
	}
	c := clampTo(Landmarks{{-5, 50}, {120, -1}}, 100, 40)
	if c[0] != (Point{0, 40}) || c[1] != (Point{100, 0}) {
		t.Errorf("clamp %v", c[:2])
	}
}

func TestRound(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want float64
	}{{8.456, 2, 8.46}, {8.454, 2, 8.45}, {0.123456, 4, 0.1235}, {0.0049996, 5, 0.005}, {-1.005, 1, -1.0}} {
		if got := Round(tc.v, tc.d); got != tc.want {
			t.Errorf("Round(%v,%d) = %v, want %v", tc.v, tc.d, got, tc.want)
		}
	}
}
