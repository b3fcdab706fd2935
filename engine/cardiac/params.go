package cardiac

import (
	"encoding/json"
	"fmt"
	"math"

	"vetlens/engine/manifest"
)

// FamilyRoute reads the cardiac family's param "route": RouteColumn
// where it is absent.
func FamilyRoute(fam manifest.Family) (Route, error) {
	var p struct {
		Route Route `json:"route"`
	}
	if len(fam.Params) > 0 {
		if err := json.Unmarshal(fam.Params, &p); err != nil {
			return "", fmt.Errorf("cardiac family params: %w", err)
		}
	}
	switch p.Route {
	case "":
		return RouteColumn, nil
	case RouteColumn, RouteSpan:
		return p.Route, nil
	}
	return "", fmt.Errorf("cardiac family param route %q: want %q or %q", p.Route, RouteColumn, RouteSpan)
}

// Family params that name a model version's own spread bound, one per
// route (docs/learning.md, "The spread bound"): the bound on HeartVHSSD
// (vertebrae) on the column route and on the landmark spread on the span
// route. Where the param is absent the default constant applies.
const (
	ParamMaxHeartVHSSD   = "max_heart_vhs_sd"
	ParamMaxSpreadForVHS = "max_spread_for_vhs"
)

// SpreadBoundParam is the family param naming route's spread bound.
func SpreadBoundParam(route Route) string {
	if route == RouteSpan {
		return ParamMaxSpreadForVHS
	}
	return ParamMaxHeartVHSSD
}

// familySpreadBound reads the bound on route's spread from the cardiac
// family's params: MaxHeartVHSSD or MaxSpreadForVHS where it is absent.
func familySpreadBound(fam manifest.Family, route Route) (float64, error) {
	def := MaxHeartVHSSD
	if route == RouteSpan {
		def = MaxSpreadForVHS
	}
	raw, ok, err := familyParam(fam, SpreadBoundParam(route))
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	var b float64
	if err := json.Unmarshal(raw, &b); err != nil || !(b > 0) || math.IsInf(b, 0) {
		return 0, fmt.Errorf("cardiac family param %s %s: want a positive number", SpreadBoundParam(route), raw)
	}
	return b, nil
}

// ParamColumnVertebraFactor is the family param naming a model
// version's own column factor: v = factor x the column's period on the
// column route (docs/learning.md, "The column's factor"). Where it is
// absent ColumnVertebraFactor applies.
const ParamColumnVertebraFactor = "column_vertebra_factor"

// The column factors a manifest may name. A period is one vertebral body
// with its disc, so the factor is near 1 (shipped 1.0; the simulator's
// labels 0.972, sim/phantom.py's 1.017); one this far from 1 would not
// correct a calibration but a column read at another multiple of its
// period, which is for the guards to withhold, not for a factor to hide.
const (
	MinColumnVertebraFactor = 0.75
	MaxColumnVertebraFactor = 1.25
)

// FamilyColumnFactor reads the column factor from the cardiac family's
// params: ColumnVertebraFactor where ParamColumnVertebraFactor is absent;
// an error where it is not a number in [MinColumnVertebraFactor,
// MaxColumnVertebraFactor] (LoadWith refuses the manifest).
func FamilyColumnFactor(fam manifest.Family) (float64, error) {
	raw, ok, err := familyParam(fam, ParamColumnVertebraFactor)
	if err != nil {
		return 0, err
	}
	if !ok {
		return ColumnVertebraFactor, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || !(f >= MinColumnVertebraFactor && f <= MaxColumnVertebraFactor) {
		return 0, fmt.Errorf("cardiac family param %s %s: want a number in [%g, %g]", ParamColumnVertebraFactor, raw, MinColumnVertebraFactor, MaxColumnVertebraFactor)
	}
	return f, nil
}

// familyParam is the cardiac family's param name as written; ok is
// false where the params do not name it.
func familyParam(fam manifest.Family, name string) (raw json.RawMessage, ok bool, err error) {
	var p map[string]json.RawMessage
	if len(fam.Params) > 0 {
		if err := json.Unmarshal(fam.Params, &p); err != nil {
			return nil, false, fmt.Errorf("cardiac family params: %w", err)
		}
	}
	raw, ok = p[name]
	return raw, ok, nil
}
