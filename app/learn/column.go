package learn

import (
	"context"
	"fmt"
	"math"

	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
	"vetlens/engine/manifest"
)

// The column's factor (docs/learning.md, "The column's factor"): on the
// column route v = factor x the period of the column the image shows.
// The shipped factor (cardiac.ColumnVertebraFactor, 1.0) is the spec's
// count of vertebrae; a clinic's X-ray system and patients may show their
// vertebrae in another proportion to the period the column finder
// reads, and the clinic's corrections carry the true Vertebra A and B.
const (
	// MinColumnFitCases is how many training cases with a plain column
	// the factor is fitted on at the least; with fewer the candidate
	// keeps the factor it inherited. The median's standard error is
	// about 1.25 sd / sqrt(n): with the simulator's case-to-case sd of
	// the ratio (about 0.02) 20 cases pin it within about 0.6 %, well
	// under the 5 % a VHS of 10 moves by half a vertebra.
	MinColumnFitCases = 20
	// columnFactorDecimals rounds the fitted factor as it is written.
	columnFactorDecimals = 4
)

// ColumnFit is how the candidate's column factor came about.
type ColumnFit struct {
	// Base is the factor the candidate inherited (its base's manifest:
	// the shipped 1.0 unless the base was fitted itself); Factor the
	// one its manifest names after the fit (Base where none was fitted).
	Base   float64 `json:"base"`
	Factor float64 `json:"factor"`
	// Fitted says whether Factor was fitted (and written into the
	// candidate's manifest as Param); Reason says why not.
	Fitted bool   `json:"fitted"`
	Param  string `json:"param,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Measured counts the training cases measured, Found those on which
	// the route found a column, Cases those it was fitted on (a column
	// scoring at least cardiac.MinColumnScore).
	Measured int `json:"measured"`
	Found    int `json:"found"`
	Cases    int `json:"cases"`
	// P25 and P75 are the quartiles of the per-case ratios (0 with none).
	P25 float64 `json:"p25,omitempty"`
	P75 float64 `json:"p75,omitempty"`
}

// FitColumnFactor is the rule a candidate's column factor comes from,
// written before it was measured on any run: ratios holds, for each
// training case on which the candidate's route found a column scoring at
// least cardiac.MinColumnScore, the clinician's vertebral unit (|A-B| /
// 6 of the true Vertebra A and B) over the column's period. With at least
// MinColumnFitCases of them the factor is their median (heldout.Quantile,
// as bench/columncal chose the shipped factor; robust to the odd column
// read at another multiple of its period), rounded to 4
// decimals; it is kept at base when there are fewer, or when the median
// lies outside [cardiac.MinColumnVertebraFactor,
// cardiac.MaxColumnVertebraFactor] (what a manifest may name).
func FitColumnFactor(ratios []float64, base float64) ColumnFit {
	f := ColumnFit{Base: base, Factor: base, Cases: len(ratios)}
	if len(ratios) == 0 {
		f.Reason = "no training case with a plain column"
		return f
	}
	f.P25, f.P75 = heldout.Quantile(ratios, 0.25), heldout.Quantile(ratios, 0.75)
	if len(ratios) < MinColumnFitCases {
		f.Reason = fmt.Sprintf("%d training cases with a plain column, fewer than %d", len(ratios), MinColumnFitCases)
		return f
	}
	m := heldout.Quantile(ratios, 0.5)
	if !(m >= cardiac.MinColumnVertebraFactor && m <= cardiac.MaxColumnVertebraFactor) {
		f.Reason = fmt.Sprintf("median %.4f outside [%g, %g]", m, cardiac.MinColumnVertebraFactor, cardiac.MaxColumnVertebraFactor)
		return f
	}
	p := math.Pow(10, columnFactorDecimals)
	f.Factor, f.Fitted = math.Round(m*p)/p, true
	return f
}

// MaxColumnFitCases bounds how many training cases the factor is
// measured on (each is a prediction with the candidate): at most this
// many, evenly spaced over the training split. The median of 60 pins the
// factor within about 0.3 % on the simulator's spread.
const MaxColumnFitCases = 60

// fitColumnFactor fits the candidate's column factor (in the models
// directory dir, measured with m) on the training cases and writes a
// fitted factor that differs from the inherited one into dir's manifest
// (ColumnFit.Param is then set, and m must be opened again to measure
// with it).
func (s *Service) fitColumnFactor(ctx context.Context, m Measurer, dir string, train []Case, progress func(Progress)) (*ColumnFit, error) {
	cases := poolEvalCases(s.cfg.Layout.Pool(), spaced(train, MaxColumnFitCases))
	f, err := fitColumn(ctx, m, dir, cases, func(done, total int) {
		if done == 1 || done == total || done%10 == 0 {
			progress(Progress{Stage: "evaluate", Step: done, Steps: total, Fraction: fracTrainEnd,
				Message: fmt.Sprintf("fitting the column factor on training case %d/%d", done, total)})
		}
	})
	if err != nil {
		return nil, describe("fit the column factor", err)
	}
	if f.Fitted && f.Factor != f.Base {
		if err := writeColumnFactor(dir, f.Factor); err != nil {
			return nil, describe("write the candidate's column factor", err)
		}
		f.Param = cardiac.ParamColumnVertebraFactor
	}
	return &f, nil
}

// spaced is at most n of cs, evenly spaced, in order.
func spaced(cs []Case, n int) []Case {
	if len(cs) <= n {
		return cs
	}
	out := make([]Case, n)
	for i := range out {
		out[i] = cs[i*len(cs)/n]
	}
	return out
}

// Summary is the fit in words.
func (c ColumnFit) Summary() string {
	if !c.Fitted {
		return fmt.Sprintf("%.4g kept (%s; %d of %d training cases measured had a column)", c.Factor, c.Reason, c.Found, c.Measured)
	}
	return fmt.Sprintf("%.4g fitted (was %.4g): median of the true |A-B|/6 over the column's period on %d training cases with a plain column (of %d measured; quartiles %.4f-%.4f)",
		c.Factor, c.Base, c.Cases, c.Measured, c.P25, c.P75)
}

// row is the fit as a before/after table row.
func (c ColumnFit) row() Row {
	after := fmt.Sprintf("%.4g (kept)", c.Factor)
	if c.Fitted {
		after = fmt.Sprintf("%.4g (fitted on %d)", c.Factor, c.Cases)
	}
	return Row{"  column factor (v / period)", fmt.Sprintf("%.4g", c.Base), after}
}

// fitColumn measures the training cases with the candidate m (its
// route, as the product would measure them) and fits the column factor
// of the candidate in dir (the factor its manifest inherited as the
// base) by FitColumnFactor. On the span route nothing is measured and
// the factor is kept. step is called after each case.
func fitColumn(ctx context.Context, m Measurer, dir string, cases []evalCase, step func(done, total int)) (ColumnFit, error) {
	fam, err := cardiacFamily(dir)
	if err != nil {
		return ColumnFit{}, err
	}
	base, err := cardiac.FamilyColumnFactor(fam)
	if err != nil {
		return ColumnFit{}, err
	}
	route, err := cardiac.FamilyRoute(fam)
	if err != nil {
		return ColumnFit{}, err
	}
	if route != cardiac.RouteColumn {
		return ColumnFit{Base: base, Factor: base, Reason: "the version measures on the " + string(route) + " route"}, nil
	}
	var ratios []float64
	found := 0
	for i, c := range cases {
		r, _, err := measureCase(ctx, m, c)
		if err != nil {
			return ColumnFit{}, err
		}
		if r.ColumnPeriod > 0 {
			found++
			v := c.truth[cardiac.VertebraA].Dist(c.truth[cardiac.VertebraB]) / 6
			if ratio := v / r.ColumnPeriod; r.ColumnScore >= cardiac.MinColumnScore && ratio > 0 && !math.IsInf(ratio, 0) {
				ratios = append(ratios, ratio)
			}
		}
		if step != nil {
			step(i+1, len(cases))
		}
	}
	f := FitColumnFactor(ratios, base)
	f.Measured, f.Found = len(cases), found
	return f, nil
}

// cardiacFamily reads the cardiac family of the manifest in dir.
func cardiacFamily(dir string) (manifest.Family, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return manifest.Family{}, err
	}
	return m.Family(cardiac.Family)
}

// writeColumnFactor writes factor into the models directory dir as the
// cardiac family's ParamColumnVertebraFactor, so the engine that loads
// dir measures with it.
func writeColumnFactor(dir string, factor float64) error {
	return editFamilyParams(dir, func(params map[string]any) { params[cardiac.ParamColumnVertebraFactor] = factor })
}
