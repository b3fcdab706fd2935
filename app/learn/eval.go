package learn

import (
	"context"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"

	"vetlens/app/dogheart"
	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

// Case is one pool case with the clinician's truth.
type Case struct {
	Stem, Patient, Kind string
	// Truth holds the clinician's landmarks in pixels; the VLAS point
	// only when HasVLAS (DogHeart labels have none).
	Truth   cardiac.Landmarks
	HasVLAS bool
	// VHS is the clinician's VHS (the provenance's, else measured on
	// the clinician's points).
	VHS float64
}

// LoadPool reads the pool's labelled cases and their provenance.
func LoadPool(dir string) ([]Case, error) {
	stems, err := dogheart.Stems(dir)
	if err != nil {
		return nil, describe("read pool", err)
	}
	side, err := dogheart.ReadSidecar(dir)
	if err != nil {
		return nil, describe("read pool", err)
	}
	prov := map[string]dogheart.Provenance{}
	for _, p := range side.Cases {
		prov[p.Case] = p
	}
	var out []Case
	for _, s := range stems {
		six, err := dogheart.ReadLabel(dir, s)
		if err != nil {
			return nil, describe("read pool", err)
		}
		p := prov[s]
		c := Case{Stem: s, Patient: p.Patient, Kind: p.Kind}
		if c.Kind == "" {
			c.Kind = "dogheart"
		}
		c.Truth = dogheart.Landmarks(six)
		if p.VLASPoint != nil {
			c.Truth[cardiac.VLASPoint] = cardiac.Point{X: p.VLASPoint[0], Y: p.VLASPoint[1]}
			c.HasVLAS = true
		}
		c.VHS = cardiac.Measure(c.Truth).VHS
		if p.VHS != nil {
			c.VHS = *p.VHS
		}
		out = append(out, c)
	}
	return out, nil
}

// PoolSummary counts the pool's cases.
type PoolSummary struct {
	Cases    int
	Patients int
	// ByKind counts cases by provenance kind (edited, manual, dogheart).
	ByKind map[string]int
}

// Summarize counts cases by kind and distinct patients.
func Summarize(cases []Case) PoolSummary {
	s := PoolSummary{Cases: len(cases), ByKind: map[string]int{}}
	pats := map[string]bool{}
	for _, c := range cases {
		s.ByKind[c.Kind]++
		k := c.Patient
		if k == "" {
			k = "case:" + c.Stem
		}
		pats[k] = true
	}
	s.Patients = len(pats)
	return s
}

// LandmarkError is one landmark's mean error over the evaluated cases.
type LandmarkError struct {
	Name string `json:"name"`
	// Px is the mean distance in pixels; PctDiag the mean distance in
	// percent of the image diagonal.
	Px      float64 `json:"px"`
	PctDiag float64 `json:"pct_diag"`
	// N is the number of cases with this landmark's truth.
	N int `json:"n"`
}

// Eval is one model set's figures on one evaluation set.
type Eval struct {
	Version   string          `json:"version"`
	Cases     int             `json:"cases"`
	Landmarks []LandmarkError `json:"landmarks"`
	// VHSMAE is the mean |VHS on the raw landmarks - the clinician's|.
	VHSMAE float64 `json:"vhs_mae"`
	// Within05 is the share of cases with |VHS error| <= 0.5 v.
	Within05 float64 `json:"within_0_5"`
	// NoLandmarks and Rejected are the shares of cases the product
	// answers with code 5 (neither VHS nor VLAS) and code 6 (not a
	// radiograph).
	NoLandmarks float64 `json:"code5_share"`
	Rejected    float64 `json:"code6_share"`
	// VHSAbsErr is each case's |VHS error|, in case order (for the
	// paired bootstrap).
	VHSAbsErr []float64 `json:"vhs_abs_err"`
	// SpreadBound is the bound on the route's spread the figures below
	// and NoLandmarks apply: the version's own for the models in use,
	// the one derived on the held-out cases for a candidate (bounds.go).
	SpreadBound float64 `json:"spread_bound,omitempty"`
	// Answered is the share of cases the product returns a VHS for
	// under SpreadBound; AnsweredMAE and AnsweredMaxErr the mean and
	// the largest |VHS error| of those VHS (0 when none).
	Answered       float64 `json:"answered_share"`
	AnsweredMAE    float64 `json:"answered_vhs_mae"`
	AnsweredMaxErr float64 `json:"answered_vhs_max_err"`

	outcomes    []Outcome // per case, for applyBound and the bound's rule
	noLandmarks float64   // code 5 share without the spread bound
}

// Outcome is what the product does with one case when the spread bound
// is left out: whether it returns a VHS, the route's spread, and the
// |error| of the VHS it returns (the whole truth for a non-finite one).
type Outcome struct {
	Returned bool
	Spread   float64
	Err      float64
}

// within reports whether the product returns a VHS on the case under
// bound.
func (o Outcome) within(bound float64) bool { return o.Returned && o.Spread <= bound }

// applyBound sets SpreadBound, NoLandmarks (code 5 as the product would
// answer under bound) and the Answered figures.
func (ev *Eval) applyBound(bound float64) {
	ev.SpreadBound = bound
	if math.IsInf(bound, 0) || math.IsNaN(bound) {
		ev.SpreadBound = 0 // not representable in JSON; none applied
	}
	var code5, n int
	var sum, worst float64
	for _, o := range ev.outcomes {
		switch {
		case o.within(bound):
			n++
			sum += o.Err
			worst = math.Max(worst, o.Err)
		case o.Returned:
			code5++ // withheld by the spread bound alone
		}
	}
	f := float64(max(1, len(ev.outcomes)))
	ev.NoLandmarks = ev.noLandmarks + float64(code5)/f
	ev.Answered, ev.AnsweredMAE, ev.AnsweredMaxErr = float64(n)/f, 0, worst
	if n > 0 {
		ev.AnsweredMAE = sum / float64(n)
	}
}

// evalCase is one image with its truth.
type evalCase struct {
	path  string
	truth cardiac.Landmarks
	has   [cardiac.NumLandmarks]bool
	vhs   float64
}

// poolEvalCases turns pool cases into evaluation cases.
func poolEvalCases(pool string, cases []Case) []evalCase {
	out := make([]evalCase, len(cases))
	for i, c := range cases {
		e := evalCase{path: filepath.Join(pool, "Images", c.Stem+".png"), truth: c.Truth, vhs: c.VHS}
		for k := range e.has {
			e.has[k] = k != cardiac.VLASPoint || c.HasVLAS
		}
		out[i] = e
	}
	return out
}

// phantomEvalCases reads the phantom regression set's truth.json (the
// radiographs; negatives are left out).
func phantomEvalCases(dir string) ([]evalCase, error) {
	t, err := heldout.ReadTruth(dir)
	if err != nil {
		return nil, describe("phantom set", err)
	}
	var out []evalCase
	for _, it := range t.Items {
		if !it.Radiograph {
			continue
		}
		e := evalCase{path: filepath.Join(dir, it.File), vhs: it.VHS}
		for k, name := range cardiac.ClassNames {
			e.truth[k], e.has[k] = it.Point(name)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("phantom set %s has no radiographs", dir)
	}
	return out, nil
}

// measureCase decodes c's image and measures it with m; it returns the
// image's bounds too.
func measureCase(ctx context.Context, m Measurer, c evalCase) (Reading, image.Rectangle, error) {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return Reading{}, image.Rectangle{}, err
	}
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return Reading{}, image.Rectangle{}, fmt.Errorf("%s: %w", filepath.Base(c.path), err)
	}
	r, err := m.Measure(ctx, img)
	if err != nil {
		return Reading{}, image.Rectangle{}, fmt.Errorf("%s: %w", filepath.Base(c.path), err)
	}
	return r, img.Bounds(), nil
}

// caseVHSError is one case's |VHS error| as the evaluation counts it:
// at most the whole score (the true VHS). A reading the product could not
// measure (a degenerate placement, or one 20-40 v off on a column read at
// the wrong scale) is wholly wrong, and how far beyond the score it lands
// says nothing about the models; uncapped, one such phantom decided the
// regression rule on its own (experiments/2026-11-28-learning-journal.md,
// "One wild reading").
func caseVHSError(measured, truth float64) float64 {
	e := math.Abs(measured - truth)
	if math.IsNaN(e) || e > truth {
		return truth
	}
	return e
}

// evaluate measures every case with m, applying m's own spread bound
// (applyBound sets another). step is called after each case.
func evaluate(ctx context.Context, m Measurer, cases []evalCase, step func()) (Eval, error) {
	ev := Eval{Version: m.ModelVersion(), Cases: len(cases), VHSAbsErr: make([]float64, len(cases))}
	var px, pct [cardiac.NumLandmarks]float64
	var n [cardiac.NumLandmarks]int
	var within, code5, code6 int
	for i, c := range cases {
		r, bd, err := measureCase(ctx, m, c)
		if err != nil {
			return Eval{}, describe("evaluate", err)
		}
		diag := math.Hypot(float64(bd.Dx()), float64(bd.Dy()))
		for k := range r.Raw {
			if !c.has[k] {
				continue
			}
			d := r.Raw[k].Dist(c.truth[k])
			px[k] += d
			pct[k] += 100 * d / diag
			n[k]++
		}
		e := caseVHSError(r.VHS(), c.vhs)
		ev.VHSAbsErr[i] = e
		ev.VHSMAE += e
		if e <= 0.5 {
			within++
		}
		switch r.Code {
		case cardiac.CodeNoLandmarks:
			code5++
		case cardiac.CodeRejected:
			code6++
		}
		o := Outcome{Spread: r.Spread, Err: math.NaN()}
		if v, ok := r.Returned(); ok {
			o.Returned, o.Err = true, math.Abs(v-c.vhs)
			if math.IsNaN(o.Err) || math.IsInf(o.Err, 0) {
				o.Err = c.vhs // as for VHSAbsErr: the whole score wrong
			}
		}
		ev.outcomes = append(ev.outcomes, o)
		if step != nil {
			step()
		}
	}
	if len(cases) > 0 {
		f := float64(len(cases))
		ev.VHSMAE /= f
		ev.Within05 = float64(within) / f
		ev.noLandmarks = float64(code5) / f
		ev.Rejected = float64(code6) / f
	}
	ev.applyBound(m.SpreadBound())
	for k, name := range cardiac.ClassNames {
		le := LandmarkError{Name: name, N: n[k]}
		if n[k] > 0 {
			le.Px, le.PctDiag = px[k]/float64(n[k]), pct[k]/float64(n[k])
		}
		ev.Landmarks = append(ev.Landmarks, le)
	}
	return ev, nil
}
