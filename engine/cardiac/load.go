package cardiac

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// loadWorkers is how many models LoadWith reads, hashes and opens at once.
const loadWorkers = 2

// LoadWith reads dir/manifest.json, checks each cardiac model's role,
// input size and tensor names, verifies its SHA-256 and opens it with
// open, two models at a time. It returns an error wrapping ErrNoModels
// when the manifest lists no cardiac models. cardiacort.Load is LoadWith
// on ONNX Runtime sessions, the product's engine; package cardiac itself
// links no runtime.
func LoadWith(dir string, open infer.Opener, o Options) (*Engine, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return nil, err
	}
	vs, ls, rs := m.ByRole(RoleValidity), m.ByRole(RoleLandmark), m.ByRole(RoleRefine)
	ss := m.ByRole(RoleSilhouette)
	if len(ss) > 1 {
		return nil, fmt.Errorf("model manifest %s: want at most 1 %s model, found %d", dir, RoleSilhouette, len(ss))
	}
	if o.FirstStageOnly {
		rs = nil
	}
	if len(vs) == 0 && len(ls) == 0 {
		return nil, fmt.Errorf("%w (in %s)", ErrNoModels, dir)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("model manifest %s: want 1 %s model, found %d", dir, RoleValidity, len(vs))
	}
	if len(ls) < 2 {
		return nil, fmt.Errorf("model manifest %s: want 5 %s models (at least 2 for a spread), found %d", dir, RoleLandmark, len(ls))
	}
	fam, err := m.Family(Family)
	if err != nil {
		return nil, err
	}
	if fam.ModelVersion == "" {
		return nil, fmt.Errorf("model manifest %s: family %q has no model_version", dir, Family)
	}
	if len(rs) == 1 {
		return nil, fmt.Errorf("model manifest %s: found 1 %s model, want none or at least 2 (for a spread)", dir, RoleRefine)
	}
	margin, err := refineMargin(fam, len(rs) > 0)
	if err != nil {
		return nil, fmt.Errorf("model manifest %s: %w", dir, err)
	}
	if o.Route == "" {
		if o.Route, err = FamilyRoute(fam); err != nil {
			return nil, fmt.Errorf("model manifest %s: %w", dir, err)
		}
	}
	bound, err := familySpreadBound(fam, o.Route)
	if err != nil {
		return nil, fmt.Errorf("model manifest %s: %w", dir, err)
	}
	colFactor, err := FamilyColumnFactor(fam)
	if err != nil {
		return nil, fmt.Errorf("model manifest %s: %w", dir, err)
	}
	e := &Engine{version: fam.ModelVersion, opts: o, margin: margin, bound: bound, colFactor: colFactor,
		landmarks: make([]model, len(ls)), refine: make([]model, len(rs))}
	all := slices.Concat([]manifest.Model{vs[0]}, ls, rs, ss)
	loaded := make([]model, len(all))
	errs := make([]error, len(all))
	// Two at a time: loading all six at once raised peak RSS from about
	// 640 to 900 MB with ResNet-18-sized models, for little speed on two
	// cores.
	sem := make(chan struct{}, loadWorkers)
	var wg sync.WaitGroup
	for i, entry := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			loaded[i], errs[i] = loadModel(m, entry, open)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, l := range loaded {
			if l.s != nil {
				l.s.Close()
			}
		}
		return nil, err
	}
	e.validity = loaded[0]
	copy(e.landmarks, loaded[1:1+len(ls)])
	copy(e.refine, loaded[1+len(ls):1+len(ls)+len(rs)])
	if len(ss) == 1 {
		e.silhouette = &loaded[len(loaded)-1]
	}
	return e, nil
}

func loadModel(m *manifest.Manifest, e manifest.Model, open infer.Opener) (model, error) {
	wantC := 1
	wantOut := []string{outputLandmark, outputPeak}
	switch e.Role {
	case RoleValidity:
		wantC = 3
		wantOut = []string{outputValidity}
	case RoleSilhouette:
		wantOut = []string{outputHeart}
	}
	if len(e.InputSize) != 3 || e.InputSize[0] != wantC || e.InputSize[1] != e.InputSize[2] || e.InputSize[1] <= 0 {
		return model{}, fmt.Errorf("load %s model %s: input_size %v, want [%d,S,S]", e.Role, e.File, e.InputSize, wantC)
	}
	if len(e.Inputs) != 1 || e.Inputs[0] != inputImage {
		return model{}, fmt.Errorf("load %s model %s: inputs %v, want [%s]", e.Role, e.File, e.Inputs, inputImage)
	}
	idx := map[string]int{}
	for i, n := range e.Outputs {
		idx[n] = i
	}
	for _, n := range wantOut {
		if _, ok := idx[n]; !ok {
			return model{}, fmt.Errorf("load %s model %s: outputs %v lack %q", e.Role, e.File, e.Outputs, n)
		}
	}
	if err := m.Verify(e); err != nil {
		return model{}, fmt.Errorf("load %s model: %w", e.Role, err)
	}
	s, err := open(m.Path(e), e.Inputs, e.Outputs)
	if err != nil {
		return model{}, fmt.Errorf("load %s model %s: %w", e.Role, e.File, err)
	}
	return model{name: e.File, s: s, size: e.InputSize[1], lmIndex: idx[outputLandmark], pkIndex: idx[outputPeak]}, nil
}
