package learn_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/app/learn"
	. "vetlens/app/learn/learntest"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/engine/manifest"
)

// TestFitColumnFactor: the rule the candidate's column factor comes
// from: the median of the true unit over the column's period, on at
// least MinColumnFitCases cases, inside what a manifest may name; the
// inherited factor is kept otherwise.
func TestFitColumnFactor(t *testing.T) {
	const base = cardiac.ColumnVertebraFactor
	n := func(k int, v float64) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = v
		}
		return out
	}
	// 30 cases around 1.02, three of them on a column read at twice its
	// period (half the ratio) and two at half (twice).
	mixed := append(append(n(25, 1.02), n(3, 0.51)...), n(2, 2.04)...)
	cases := []struct {
		name   string
		ratios []float64
		base   float64
		want   float64
		fitted bool
		reason string
	}{
		{"none", nil, base, base, false, "no training case"},
		{"one too few", n(learn.MinColumnFitCases-1, 1.05), base, base, false, "fewer than 20"},
		{"just enough", n(learn.MinColumnFitCases, 1.05), base, 1.05, true, ""},
		{"rounded to 4 decimals", n(40, 1.05*0.972), base, 1.0206, true, ""},
		{"misread columns do not move the median", mixed, base, 1.02, true, ""},
		{"median out of range", n(30, 1.4), base, base, false, "outside [0.75, 1.25]"},
		{"a fitted base is kept as it was", n(5, 0.9), 1.0206, 1.0206, false, "fewer than"},
	}
	for _, tc := range cases {
		f := learn.FitColumnFactor(tc.ratios, tc.base)
		if f.Factor != tc.want || f.Fitted != tc.fitted || f.Base != tc.base || f.Cases != len(tc.ratios) || !strings.Contains(f.Reason, tc.reason) {
			t.Errorf("%s: %+v; want factor %v fitted %v reason %q", tc.name, f, tc.want, tc.fitted, tc.reason)
		}
	}
}

// TestLearnFitsColumnFactor: a clinic whose true vertebral unit is
// consistently 5 % longer than the shipped factor makes of its columns'
// period gets a candidate with a factor near 1.05 x the shipped one, written into
// its manifest; the held-out judgement measures the candidate with it
// (VHS exact but for the cases' own 1 % jitter) and the promoted version
// opens with it. Where the columns are too weak to fit on, the factor is
// kept and the same candidate, 5 % off on every VHS, is refused.
func TestLearnFitsColumnFactor(t *testing.T) {
	const want = 1.05 * cardiac.ColumnVertebraFactor
	learnWith := func(t *testing.T, score float64) (*Rig, learn.Run) {
		r := NewRig(t, Trainer{}, Models{})
		cm := ColumnModels{Models: r.Models, Ratio: want, Jitter: 0.01, Score: score}
		tr := Trainer{MakePhantomsFunc: Phantoms(r.Truth)}
		svc, err := learn.New(learn.Config{Layout: r.Layout, Shipped: r.Shipped, Trainer: tr, Models: cm, Phantoms: 5, Registry: r.Registry})
		if err != nil {
			t.Fatal(err)
		}
		svc.Attach(r.Live, Loader)
		r.Svc = svc
		run, err := svc.Learn(t.Context(), learn.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.Column == nil {
			t.Fatal("no column fit in the report")
		}
		return r, run
	}
	t.Run("fitted and used", func(t *testing.T) {
		r, run := learnWith(t, 0)
		c := run.Column
		if !c.Fitted || math.Abs(c.Factor-want) > 0.003 || c.Base != cardiac.ColumnVertebraFactor || c.Param != cardiac.ParamColumnVertebraFactor ||
			c.Measured != run.Train || c.Cases != run.Train {
			t.Fatalf("column fit %+v (want about %.4f on %d training cases)", c, want, run.Train)
		}
		if !run.Promoted {
			t.Fatalf("refused: %s", run.Refusal())
		}
		// Judged with the fitted factor: the shipped one would read
		// every VHS 5 % high (about 1.2 v here).
		if !(run.After.VHSMAE < 0.25) || !(run.Before.VHSMAE > 1) {
			t.Errorf("held-out VHS MAE %.3f -> %.3f", run.Before.VHSMAE, run.After.VHSMAE)
		}
		a, err := r.Svc.Active(t.Context())
		if err != nil || a.Name != run.Candidate {
			t.Fatalf("active %+v %v", a, err)
		}
		m, err := manifest.Load(a.Dir)
		if err != nil {
			t.Fatal(err)
		}
		fam, _ := m.Family(cardiac.Family)
		if got, err := cardiac.FamilyColumnFactor(fam); err != nil || got != c.Factor {
			t.Errorf("the promoted version's manifest names %v (%v), want %v", got, err, c.Factor)
		}
		// The promoted version measures with it.
		cm := ColumnModels{Models: r.Models, Ratio: want}
		meas, err := cm.Open(a.Dir)
		if err != nil {
			t.Fatal(err)
		}
		defer meas.Close()
		cases, _ := learn.LoadPool(r.Layout.Pool())
		b, err := os.ReadFile(filepath.Join(r.Layout.Pool(), "Images", cases[0].Stem+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := imageproc.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := meas.Measure(t.Context(), img)
		if err != nil {
			t.Fatal(err)
		}
		if got := rd.VHS(); math.Abs(got/cases[0].VHS-want/c.Factor) > 1e-9 {
			t.Errorf("the promoted version reads VHS %.3f, truth %.3f: not over its factor %.4f", got, cases[0].VHS, c.Factor)
		}
		var row bool
		for _, x := range run.Table() {
			row = row || x.Metric == "  column factor (v / period)" && x.Before == fmt.Sprintf("%.4g", cardiac.ColumnVertebraFactor) && strings.Contains(x.After, "(fitted on ")
		}
		card, _ := os.ReadFile(filepath.Join(a.Dir, CardFile))
		if !row || !strings.Contains(string(card), fmt.Sprintf("Column factor (v over the column's period): %.3g", want)) {
			t.Errorf("table %+v; card:\n%s", run.Table(), card)
		}
	})
	t.Run("weak columns: kept, and the candidate refused", func(t *testing.T) {
		r, run := learnWith(t, cardiac.MinColumnScore-0.1)
		c := run.Column
		if c.Fitted || c.Factor != cardiac.ColumnVertebraFactor || c.Param != "" || c.Found != run.Train || c.Cases != 0 {
			t.Fatalf("column fit %+v", c)
		}
		if run.Promoted || !strings.Contains(run.Refusal(), "no dangerous number") || !(run.After.VHSMAE > 1) {
			t.Errorf("promoted %v (MAE after %.3f): %s", run.Promoted, run.After.VHSMAE, run.Refusal())
		}
		m, err := manifest.Load(filepath.Join(r.Layout.Candidates(), run.Candidate))
		if err != nil {
			t.Fatal(err)
		}
		fam, _ := m.Family(cardiac.Family)
		if strings.Contains(string(fam.Params), cardiac.ParamColumnVertebraFactor) {
			t.Errorf("a kept factor was written: %s", fam.Params)
		}
	})
}
