package learn

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"

	"vetlens/engine/cardiac"
	"vetlens/engine/infer"
	"vetlens/engine/manifest"
	"vetlens/engine/modelref"
)

// EngineModels is Models on the real cardiac engine.
type EngineModels struct {
	// Options are the evaluation engine's options.
	Options cardiac.Options
	// Load loads the cardiac engine from a models directory: in the
	// product cardiacort.Load (ONNX Runtime, which must be initialised),
	// given by the command line, so app does not import the loader.
	Load func(dir string, o cardiac.Options) (*cardiac.Engine, error)
	// Runtime opens a model for the export-reference check
	// (VerifyReference): in the product ort.Opener with default options
	// (ONNX Runtime, which must be initialised), given by the command
	// line, so app links no model runtime.
	Runtime infer.Opener
}

// Open loads the cardiac models in dir.
// The engine measures without the version's spread bound (Measurer).
func (m EngineModels) Open(dir string) (Measurer, error) {
	if m.Load == nil {
		return nil, errors.New("learn: EngineModels has no Load")
	}
	o := m.Options
	o.NoSpreadBound = true
	e, err := m.Load(dir, o)
	if err != nil {
		return nil, err
	}
	return engineMeasurer{e}, nil
}

// VerifyReference replays the export reference of every landmark model
// in dir (modelref, on sessions that Runtime opens) and fails when one
// differs by more than modelref.Tolerance.
func (m EngineModels) VerifyReference(ctx context.Context, dir string) (float64, error) {
	if m.Runtime == nil {
		return 0, errors.New("learn: EngineModels has no Runtime")
	}
	man, err := manifest.Load(dir)
	if err != nil {
		return 0, err
	}
	ls := man.ByRole(cardiac.RoleLandmark)
	if len(ls) == 0 {
		return 0, fmt.Errorf("reference check: no landmark models in %s", dir)
	}
	var worst float64
	for _, e := range ls {
		diff, err := modelref.Replay(ctx, m.Runtime, man, e)
		if err != nil {
			return 0, fmt.Errorf("reference check: %w", err)
		}
		for o, d := range diff {
			if !(d <= modelref.Tolerance) {
				return d, fmt.Errorf("reference check: %s output %s differs from PyTorch by %.3g (tolerance %.0g)", e.File, o, d, modelref.Tolerance)
			}
			worst = math.Max(worst, d)
		}
	}
	return worst, nil
}

// engineMeasurer measures with a loaded engine: the product's Predict
// for its code and its route's VHS (the column route's, where a column
// was found), and the raw ensemble mean (Predict's own when the image
// was not rejected, else RawLandmarks).
type engineMeasurer struct{ e *cardiac.Engine }

func (m engineMeasurer) Measure(ctx context.Context, img image.Image) (Reading, error) {
	r, err := m.e.Predict(ctx, img, cardiac.PredictOptions{})
	if err != nil {
		return Reading{}, err
	}
	rd := Reading{Code: r.Code, RouteVHS: math.NaN(), Spread: r.Spread, ProductVHS: math.NaN()}
	if m.e.Route() == cardiac.RouteColumn {
		rd.Spread = r.HeartVHSSD
	}
	if r.Column != nil {
		rd.RouteVHS = r.Geometry.VHS
		rd.ColumnPeriod, rd.ColumnScore = r.Column.Period, r.Column.Score
	}
	if r.Code.HasVHS() {
		rd.ProductVHS = r.Geometry.VHS
	}
	if len(r.ModelLandmarks) > 0 {
		rd.Raw = cardiac.EnsembleMean(r.ModelLandmarks)
		return rd, nil
	}
	raw, err := m.e.RawLandmarks(ctx, img)
	if err != nil {
		return Reading{}, err
	}
	rd.Raw = raw
	return rd, nil
}

func (m engineMeasurer) ModelVersion() string { return m.e.ModelVersion() }
func (m engineMeasurer) SpreadBound() float64 { return m.e.SpreadBound() }
func (m engineMeasurer) Close() error         { return m.e.Close() }
