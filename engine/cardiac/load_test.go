package cardiac

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// fakeSession is a session that runs nothing; Close counts.
type fakeSession struct {
	name   string
	closed *atomic.Int32
}

func (f fakeSession) Name() string { return f.name }
func (f fakeSession) Run(context.Context, ...infer.Tensor) ([]infer.Tensor, error) {
	return nil, errors.New("fake session runs nothing")
}
func (f fakeSession) Close() error { f.closed.Add(1); return nil }

// writeModelDir writes each model's file (a few bytes naming it) into dir,
// fills in the SHA-256 of those models that name none, and writes the
// manifest of models and fams beside them.
func writeModelDir(t *testing.T, dir string, models []manifest.Model, fams map[string]manifest.Family) {
	t.Helper()
	for i := range models {
		m := &models[i]
		body := []byte("not a model " + m.File)
		if err := os.WriteFile(filepath.Join(dir, m.File), body, 0o644); err != nil {
			t.Fatal(err)
		}
		if m.SHA256 == "" {
			sum := sha256.Sum256(body)
			m.SHA256 = hex.EncodeToString(sum[:])
		}
	}
	b, err := json.Marshal(manifest.Manifest{Families: fams, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadManifestErrors: every manifest problem is caught before the
// runtime sees the file, with an error naming the model; a model the
// runtime refuses is named too; whatever was opened is closed again.
func TestLoadManifestErrors(t *testing.T) {
	entry := func(file, role string, size []int, outs ...string) manifest.Model {
		return manifest.Model{File: file, Role: role, InputSize: size, Inputs: []string{"image"}, Outputs: outs, Version: "t"}
	}
	valid := entry("v.onnx", RoleValidity, []int{3, 224, 224}, "p_radiograph")
	lm := func(i int) manifest.Model {
		return entry("l"+string(rune('0'+i))+".onnx", RoleLandmark, []int{1, 256, 256}, "landmarks", "peak")
	}
	five := []manifest.Model{valid, lm(1), lm(2), lm(3), lm(4), lm(5)}
	refine := func(i int) manifest.Model {
		return entry("r"+string(rune('0'+i))+".onnx", RoleRefine, []int{1, 224, 224}, "landmarks", "peak")
	}
	withRefine := func(n int) []manifest.Model {
		ms := append([]manifest.Model(nil), five...)
		for i := 1; i <= n; i++ {
			ms = append(ms, refine(i))
		}
		return ms
	}
	margin := func(params string) map[string]manifest.Family {
		return map[string]manifest.Family{Family: {ModelVersion: "t", Params: json.RawMessage(params)}}
	}
	with := func(i int, f func(*manifest.Model)) []manifest.Model {
		ms := append([]manifest.Model(nil), five...)
		f(&ms[i])
		return ms
	}
	cases := []struct {
		name     string
		models   []manifest.Model
		families map[string]manifest.Family
		want     string
		sentinel error
	}{
		{"no cardiac models", []manifest.Model{entry("u.onnx", "usg_ensemble", []int{3, 64, 64}, "x")}, nil, "no cardiac models", ErrNoModels},
		{"no validity model", five[1:], nil, "want 1 cardiac_validity", nil},
		{"one landmark model", five[:2], nil, "want 5 cardiac_landmark", nil},
		{"no family", five, map[string]manifest.Family{}, `no "cardiac" family`, nil},
		{"no model_version", five, map[string]manifest.Family{Family: {}}, "has no model_version", nil},
		{"validity gray input", with(0, func(m *manifest.Model) { m.InputSize = []int{1, 224, 224} }), nil, "input_size [1 224 224], want [3,S,S]", nil},
		{"landmark not square", with(2, func(m *manifest.Model) { m.InputSize = []int{1, 256, 192} }), nil, "l2.onnx: input_size", nil},
		{"landmark without peak", with(3, func(m *manifest.Model) { m.Outputs = []string{"landmarks"} }), nil, `lack "peak"`, nil},
		{"wrong input name", with(4, func(m *manifest.Model) { m.Inputs = []string{"input"} }), nil, "inputs [input], want [image]", nil},
		{"checksum mismatch", with(5, func(m *manifest.Model) { m.SHA256 = strings.Repeat("0", 64) }), nil, "l5.onnx: checksum", nil},
		{"missing file", with(1, func(m *manifest.Model) { m.File = "gone.onnx" }), nil, "gone.onnx", nil},
		{"one refinement model", withRefine(1), margin(`{"refine_margin":0.2}`), "found 1 cardiac_refine model", nil},
		{"refinement without margin", withRefine(2), nil, "need the cardiac family param refine_margin", nil},
		{"refinement margin negative", withRefine(2), margin(`{"refine_margin":-0.1}`), "refine_margin in [0,2]", nil},
		{"refinement margin not a number", withRefine(2), margin(`{"refine_margin":"wide"}`), "cardiac family params", nil},
		{"unknown route", five, margin(`{"route":"guess"}`), `route "guess"`, nil},
		{"column factor out of range", five, margin(`{"column_vertebra_factor":2}`), "column_vertebra_factor 2", nil},
		{"model the runtime refuses", with(1, func(m *manifest.Model) { m.File = "refused.onnx" }), nil, "refused.onnx: the runtime refuses it", nil},
		{"refinement checksum mismatch", append(withRefine(1), func() manifest.Model {
			m := refine(2)
			m.SHA256 = strings.Repeat("0", 64)
			return m
		}()), margin(`{"refine_margin":0.2}`), "r2.onnx: checksum", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fams := tc.families
			if fams == nil {
				fams = map[string]manifest.Family{Family: {ModelVersion: "t"}}
			}
			writeModelDir(t, dir, tc.models, fams)
			if err := os.Remove(filepath.Join(dir, "gone.onnx")); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			var opened, closed atomic.Int32
			open := func(path string, _, _ []string) (infer.Session, error) {
				if filepath.Base(path) == "refused.onnx" {
					return nil, errors.New("the runtime refuses it")
				}
				opened.Add(1)
				return fakeSession{filepath.Base(path), &closed}, nil
			}
			e, err := LoadWith(dir, open, DefaultOptions())
			if opened.Load() != closed.Load() {
				t.Errorf("%d sessions opened, %d closed", opened.Load(), closed.Load())
			}
			if err == nil {
				e.Close()
				t.Fatal("Load succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v is not %v", err, tc.sentinel)
			}
		})
	}
}

// TestFamilyRoute: the manifest's cardiac family names the route its
// models were validated with; none means the column route.
func TestFamilyRoute(t *testing.T) {
	cases := []struct {
		params string
		want   Route
		err    bool
	}{
		{"", RouteColumn, false},
		{`{}`, RouteColumn, false},
		{`{"route":"column"}`, RouteColumn, false},
		{`{"route":"span","refine_margin":0.2}`, RouteSpan, false},
		{`{"route":"spine"}`, "", true},
		{`{"route":7}`, "", true},
	}
	for _, tc := range cases {
		got, err := FamilyRoute(manifest.Family{ModelVersion: "t", Params: json.RawMessage(tc.params)})
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("params %s: route %q, error %v; want %q, error %v", tc.params, got, err, tc.want, tc.err)
		}
	}
}

// TestFamilySpreadBound: a model version may name its route's spread
// bound in the cardiac family's params; absent, the default applies; a
// bound that is not a positive number refuses the manifest.
func TestFamilySpreadBound(t *testing.T) {
	cases := []struct {
		params string
		route  Route
		want   float64
		err    bool
	}{
		{"", RouteColumn, MaxHeartVHSSD, false},
		{`{"route":"span"}`, RouteSpan, MaxSpreadForVHS, false},
		{`{"max_heart_vhs_sd":0.27}`, RouteColumn, 0.27, false},
		{`{"max_heart_vhs_sd":0.27}`, RouteSpan, MaxSpreadForVHS, false},
		{`{"max_spread_for_vhs":0.012}`, RouteSpan, 0.012, false},
		{`{"max_heart_vhs_sd":0}`, RouteColumn, 0, true},
		{`{"max_heart_vhs_sd":-1}`, RouteColumn, 0, true},
		{`{"max_heart_vhs_sd":"wide"}`, RouteColumn, 0, true},
	}
	for _, tc := range cases {
		got, err := familySpreadBound(manifest.Family{ModelVersion: "t", Params: json.RawMessage(tc.params)}, tc.route)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("params %s on %s: bound %v, error %v; want %v, error %v", tc.params, tc.route, got, err, tc.want, tc.err)
		}
	}
}

// TestFamilyColumnFactor: a model version may name its column factor in
// the cardiac family's params (app/learn fits a clinic's); absent, the
// simulator's ColumnVertebraFactor applies; one that is not a number in
// [MinColumnVertebraFactor, MaxColumnVertebraFactor] refuses the
// manifest.
func TestFamilyColumnFactor(t *testing.T) {
	cases := []struct {
		params string
		want   float64
		err    bool
	}{
		{"", ColumnVertebraFactor, false},
		{`{}`, ColumnVertebraFactor, false},
		{`{"route":"column","max_heart_vhs_sd":0.2}`, ColumnVertebraFactor, false},
		{`{"column_vertebra_factor":1.0206}`, 1.0206, false},
		{`{"route":"span","column_vertebra_factor":0.95}`, 0.95, false},
		{`{"column_vertebra_factor":0.75}`, 0.75, false},
		{`{"column_vertebra_factor":1.25}`, 1.25, false},
		{`{"column_vertebra_factor":0.7499}`, 0, true},
		{`{"column_vertebra_factor":1.2501}`, 0, true},
		{`{"column_vertebra_factor":0}`, 0, true},
		{`{"column_vertebra_factor":-0.97}`, 0, true},
		{`{"column_vertebra_factor":"0.97"}`, 0, true},
		{`{"column_vertebra_factor":null}`, 0, true},
		{`{"column_vertebra_factor":1e999}`, 0, true},
		{`[1]`, 0, true},
	}
	for _, tc := range cases {
		got, err := FamilyColumnFactor(manifest.Family{ModelVersion: "t", Params: json.RawMessage(tc.params)})
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("params %s: factor %v, error %v; want %v, error %v", tc.params, got, err, tc.want, tc.err)
		}
	}
}
