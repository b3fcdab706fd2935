package usg

// Coalitions is the number of feature subsets, 2^NumFeatures.
const Coalitions = 1 << NumFeatures

// shapleyWeight[k] = k! (d-k-1)! / d! for d = NumFeatures.
var shapleyWeight = func() [NumFeatures]float64 {
	fact := func(n int) float64 {
		f := 1.0
		for i := 2; i <= n; i++ {
			f *= float64(i)
		}
		return f
	}
	var w [NumFeatures]float64
	for k := range w {
		w[k] = fact(k) * fact(NumFeatures-k-1) / fact(NumFeatures)
	}
	return w
}()

// Shapley returns the exact Shapley values of the game v, where v[s] is the
// value of the coalition whose members are the set bits of s (bit i =
// feature i). By efficiency, v[0] + sum(phi) = v[Coalitions-1].
func Shapley(v *[Coalitions]float64) [NumFeatures]float64 {
	var phi [NumFeatures]float64
	for i := 0; i < NumFeatures; i++ {
		bit := 1 << i
		for s := 0; s < Coalitions; s++ {
			if s&bit != 0 {
				continue
			}
			phi[i] += shapleyWeight[popcount(s)] * (v[s|bit] - v[s])
		}
	}
	return phi
}

func popcount(s int) int {
	n := 0
	for ; s != 0; s &= s - 1 {
		n++
	}
	return n
}

// coalitionRows writes the model inputs for the interventional value
// function into dst: for every coalition s except the empty and the full one,
// one row per background row b, with feature i taken from x when bit i of s
// is set and from b otherwise. Rows are ordered by s, then by background row.
// dst must hold (Coalitions-2) * len(bg) * NumFeatures floats.
func coalitionRows(dst []float32, x [NumFeatures]float32, bg [][NumFeatures]float32) {
	o := 0
	for s := 1; s < Coalitions-1; s++ {
		for _, b := range bg {
			for i := 0; i < NumFeatures; i++ {
				if s&(1<<i) != 0 {
					dst[o+i] = x[i]
				} else {
					dst[o+i] = b[i]
				}
			}
			o += NumFeatures
		}
	}
}
