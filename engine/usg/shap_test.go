package usg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// game builds the interventional value function of f at x against a
// weighted background, the definition the engine uses.
func game(f func([NumFeatures]float64) float64, x [NumFeatures]float64, bg [][NumFeatures]float64, w []float64) [Coalitions]float64 {
	var v [Coalitions]float64
	for s := 0; s < Coalitions; s++ {
		for k, b := range bg {
			var z [NumFeatures]float64
			for i := range z {
				if s&(1<<i) != 0 {
					z[i] = x[i]
				} else {
					z[i] = b[i]
				}
			}
			v[s] += w[k] * f(z)
		}
	}
	return v
}

func TestShapleyKnownGames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bg := make([][NumFeatures]float64, 7)
	w := make([]float64, len(bg))
	for k := range bg {
		for i := range bg[k] {
			bg[k][i] = rng.NormFloat64()
		}
		w[k] = 1 / float64(len(bg))
	}
	var mean [NumFeatures]float64
	for k, b := range bg {
		for i := range b {
			mean[i] += w[k] * b[i]
		}
	}
	x := [NumFeatures]float64{1.5, -0.5, 2, 0.25, -1}
	a := [NumFeatures]float64{0.3, -1.2, 0.7, 2.0, -0.1}

	// Linear model: phi_i = a_i (x_i - E[b_i]).
	lin := func(z [NumFeatures]float64) float64 {
		s := 0.4
		for i := range z {
			s += a[i] * z[i]
		}
		return s
	}
	v := game(lin, x, bg, w)
	phi := Shapley(&v)
	for i := range phi {
		if want := a[i] * (x[i] - mean[i]); math.Abs(phi[i]-want) > 1e-12 {
			t.Errorf("linear phi[%d] = %v, want %v", i, phi[i], want)
		}
	}

	// Pure interaction z0*z1 with a single background row b: features 0 and 1
	// share the interaction equally; the others are dummies.
	b := [][NumFeatures]float64{{0.5, 2, 9, 9, 9}}
	prod := func(z [NumFeatures]float64) float64 { return z[0] * z[1] }
	v = game(prod, x, b, []float64{1})
	phi = Shapley(&v)
	// v({}) = 1, v({0}) = 3, v({1}) = -0.25, v({0,1}) = -0.75
	want := [NumFeatures]float64{0.5*(3-1) + 0.5*(-0.75+0.25), 0.5*(-0.25-1) + 0.5*(-0.75-3), 0, 0, 0}
	for i := range phi {
		if math.Abs(phi[i]-want[i]) > 1e-12 {
			t.Errorf("product phi[%d] = %v, want %v", i, phi[i], want[i])
		}
	}

	// Efficiency on an arbitrary nonlinear game.
	nl := func(z [NumFeatures]float64) float64 {
		return math.Tanh(z[0]*z[2]) + math.Max(z[1], z[3]) + z[4]*z[4]*z[0]
	}
	v = game(nl, x, bg, w)
	phi = Shapley(&v)
	sum := v[0]
	for _, p := range phi {
		sum += p
	}
	if math.Abs(sum-v[Coalitions-1]) > 1e-12 {
		t.Errorf("efficiency: %v != %v", sum, v[Coalitions-1])
	}
}

func TestCoalitionRows(t *testing.T) {
	x := [NumFeatures]float32{1, 2, 3, 4, 5}
	bg := [][NumFeatures]float32{{10, 20, 30, 40, 50}, {11, 21, 31, 41, 51}}
	dst := make([]float32, (Coalitions-2)*len(bg)*NumFeatures)
	coalitionRows(dst, x, bg)
	// coalition s = 0b00101 (features 0 and 2 from x), second background row
	row := dst[((5-1)*len(bg)+1)*NumFeatures:][:NumFeatures]
	want := []float32{1, 21, 3, 41, 51}
	for i := range want {
		if row[i] != want[i] {
			t.Fatalf("row %v, want %v", row, want)
		}
	}
}
