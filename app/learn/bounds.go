package learn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"vetlens/engine/cardiac"
)

// The no-dangerous-number rule (docs/learning.md, "The spread bound").
const (
	// MaxReturnedVHSError is the largest |VHS error| (vertebrae) a
	// candidate may make on a held-out clinic case it returns a number
	// for: three times the 0.5 v by which readers differ, where a VHS
	// crosses from one clinical reading into another.
	MaxReturnedVHSError = 1.5
	// BoundCalibrationError is what the candidate's spread bound is
	// derived to keep every returned held-out VHS within (vertebrae):
	// a margin of 0.5 v under MaxReturnedVHSError, since the bound is
	// used on cases it was not derived on.
	BoundCalibrationError = 1.0
)

// DeriveSpreadBound is the rule a candidate's spread bound comes from,
// written before it was measured on any run: of the cases the product
// answers with the bound left out (Outcome.Returned), take those whose
// spread is below the smallest spread of any case off by more than
// maxErr; the bound is the largest spread among them. So every case
// within the bound is within maxErr, no other bound that keeps them so
// returns more cases, and the bound never reaches beyond a spread seen
// on a case (no extrapolation). ok is false when no case can be
// returned: none is answered, or the one with the smallest spread is
// already off by more than maxErr. Cases with a NaN spread are never
// within a bound and do not count.
func DeriveSpreadBound(cs []Outcome, maxErr float64) (bound float64, ok bool) {
	firstBad := math.Inf(1)
	for _, c := range cs {
		if c.Returned && !math.IsNaN(c.Spread) && !(c.Err <= maxErr) {
			firstBad = math.Min(firstBad, c.Spread)
		}
	}
	bound = math.Inf(-1)
	for _, c := range cs {
		if c.Returned && c.Spread < firstBad {
			bound = math.Max(bound, c.Spread)
		}
	}
	if math.IsInf(bound, -1) {
		return 0, false
	}
	// A bound of 0 would read as "the default" in a manifest; no
	// ensemble's members agree to the last bit, but keep it positive.
	return math.Max(bound, math.SmallestNonzeroFloat64), true
}

// HeldOutCheck is the no-dangerous-number rule's figures on the
// held-out clinic cases.
type HeldOutCheck struct {
	// Bound is the bound derived on all held-out cases (OK false: none
	// could be derived) and Param the manifest param it is written as.
	Bound float64 `json:"bound"`
	OK    bool    `json:"ok"`
	Param string  `json:"param,omitempty"`
	// Candidates counts the held-out cases the product answers with the
	// bound left out; Answered those within Bound.
	Candidates, Answered int
	// CrossAnswered counts the cases answered under the bound derived
	// from the other held-out cases (leave one out), and CrossMaxErr is
	// their largest |VHS error| (0 when none).
	CrossAnswered int     `json:"cross_answered"`
	CrossMaxErr   float64 `json:"cross_max_err"`
}

// CheckHeldOut derives the bound on all cases and judges each case with
// the bound derived from the others: an estimate, on cases the bound
// was not derived on, of the largest error the candidate returns. (On
// the cases it was derived on, the bound keeps every returned VHS within
// BoundCalibrationError by construction, so that figure could never
// refuse anything.)
func CheckHeldOut(cs []Outcome) HeldOutCheck {
	var h HeldOutCheck
	h.Bound, h.OK = DeriveSpreadBound(cs, BoundCalibrationError)
	others := make([]Outcome, 0, len(cs))
	for i, c := range cs {
		if !c.Returned {
			continue
		}
		h.Candidates++
		if h.OK && c.within(h.Bound) {
			h.Answered++
		}
		others = append(append(others[:0], cs[:i]...), cs[i+1:]...)
		if b, ok := DeriveSpreadBound(others, BoundCalibrationError); ok && c.within(b) {
			h.CrossAnswered++
			h.CrossMaxErr = math.Max(h.CrossMaxErr, c.Err)
		}
	}
	return h
}

// dangerRule is the promotion rule's no-dangerous-number condition.
func dangerRule(h HeldOutCheck, n int) Rule {
	r := Rule{Name: "no dangerous number", OK: h.OK && h.CrossMaxErr <= MaxReturnedVHSError}
	if !h.OK {
		r.Detail = fmt.Sprintf("no spread bound returns a held-out case within %.1f v (%d of %d answered with the bound left out)",
			BoundCalibrationError, h.Candidates, n)
		return r
	}
	r.Detail = fmt.Sprintf("spread bound %.4g (derived on the held-out cases: returns %d of %d, each within %.1f v); "+
		"each case judged with the bound derived from the others: %d returned, largest error %.2f v, must be at most %.1f v",
		h.Bound, h.Answered, n, BoundCalibrationError, h.CrossAnswered, h.CrossMaxErr, MaxReturnedVHSError)
	return r
}

// writeSpreadBound writes bound into the models directory dir as the
// cardiac family's param for the route its manifest names, so the
// engine that loads dir uses it; it returns the param's name.
func writeSpreadBound(dir string, bound float64) (string, error) {
	var param string
	err := editFamilyParams(dir, func(params map[string]any) {
		route := cardiac.RouteColumn
		if r, ok := params["route"].(string); ok && r != "" {
			route = cardiac.Route(r)
		}
		param = cardiac.SpreadBoundParam(route)
		params[param] = bound
	})
	return param, err
}

// editFamilyParams edits the cardiac family's params of the models
// directory dir: in manifest.json, which the engine reads, and in
// cardiac.family.json, which make_manifest composes it from, when
// present.
func editFamilyParams(dir string, edit func(params map[string]any)) error {
	set := func(fam map[string]any) error {
		params, _ := fam["params"].(map[string]any)
		if params == nil {
			params = map[string]any{}
		}
		edit(params)
		fam["params"] = params
		return nil
	}
	err := editJSON(filepath.Join(dir, "manifest.json"), func(doc map[string]any) error {
		fams, _ := doc["families"].(map[string]any)
		fam, _ := fams[cardiac.Family].(map[string]any)
		if fam == nil {
			return errors.New("no cardiac family")
		}
		return set(fam)
	})
	if err != nil {
		return err
	}
	err = editJSON(filepath.Join(dir, "cardiac.family.json"), set)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// editJSON rewrites the JSON object in path through edit (numbers kept
// as written).
func editJSON(path string, edit func(map[string]any) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if err := edit(doc); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	out, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return writeAtomic(path, out)
}
