package cardiac

import (
	"errors"
	"math"
	"runtime"
	"slices"

	"vetlens/engine/infer"
)

// Manifest roles and family (docs/model-contract.md).
const (
	RoleValidity = "cardiac_validity"
	RoleLandmark = "cardiac_landmark"
	// RoleSilhouette is the optional heart silhouette model: image ->
	// the heart's probability per letterbox pixel (cardiac/train_silhouette.py).
	RoleSilhouette = "cardiac_silhouette"
	Family         = "cardiac"
)

// Tensor names fixed by the model contract.
const (
	inputImage     = "image"
	outputValidity = "p_radiograph"
	outputLandmark = "landmarks"
	outputPeak     = "peak"
	outputHeart    = "heart"
)

// ErrNoModels means the manifest lists no cardiac models (they have not
// been shipped yet).
var ErrNoModels = errors.New("model manifest has no cardiac models")

// Options tune how the engine runs its models.
type Options struct {
	// IntraOpThreads is each session's intra-op thread count; 0 lets ONNX
	// Runtime decide (one per core). The engine itself does not read it:
	// cardiacort.Load opens the sessions with it.
	IntraOpThreads int
	// Concurrency is how many landmark models run at once; 0 runs all of
	// them at once, 1 runs them one after the other.
	Concurrency int
	// FirstStageOnly leaves the refinement models unloaded, so predictions
	// come from the first stage alone (for evaluating what the second
	// stage adds; docs/cardiac.md, "Refinement stage").
	FirstStageOnly bool
	// Route is how v is measured: RouteColumn from the column the image
	// shows, RouteSpan from the models' Vertebra A-B (the route before
	// v3.3, kept for side-by-side evaluation). "" takes the cardiac
	// family's param "route" from the manifest, and RouteColumn where the
	// manifest names none, so a model version keeps the route it was
	// validated with (app/learn's rollback restores both).
	Route Route
	// NoSpreadBound measures without the route's spread bound (guard 7
	// on the span route, heart_points_disagree on the column route): the
	// codes then say what every other guard decided, so that a caller
	// can derive a bound from them (app/learn derives a candidate's on
	// the clinic's held-out cases). Never for answering a client.
	NoSpreadBound bool
}

// Route is how the engine measures the vertebral unit v
// (docs/cardiac.md, "The column route").
type Route string

// The routes.
const (
	// RouteColumn measures v from the thoracic column's own period
	// (FindColumn) and places Vertebra A and B on the column; the models
	// give the heart points. The default.
	RouteColumn Route = "column"
	// RouteSpan takes v = |A-B| / 6 from the models' Vertebra A and B,
	// checked by guards 8 and 9.
	RouteSpan Route = "span"
)

// DefaultOptions are the engine's default settings: one intra-op thread per
// model and as many landmark models at once as there are cores
// (docs/cardiac.md, "Speed and memory"; BenchmarkPredict1024Modes and
// BenchmarkPredict1024ModesParallel compare the alternatives).
func DefaultOptions() Options { return Options{IntraOpThreads: 1, Concurrency: runtime.NumCPU()} }

type model struct {
	name    string
	s       infer.Session
	size    int // S of the [C,S,S] input
	lmIndex int // index of "landmarks" among the outputs
	pkIndex int // index of "peak" among the outputs
}

// Engine holds the validity classifier, the landmark ensemble and the
// optional refinement ensemble. Predict is safe for concurrent use.
type Engine struct {
	validity  model
	landmarks []model
	refine    []model // stage 2 on a crop (refine.go); empty: stage 1 only
	// silhouette measures the heart's axes on the column route where the
	// manifest lists one (silhouette.go); nil: the members' heart points.
	silhouette *model
	margin     float64 // refinement crop margin from the family's params
	bound      float64 // the route's spread bound (SpreadBound)
	colFactor  float64 // the column route's v / period (ColumnVertebraFactor)
	version    string
	opts       Options
}

// Close releases all sessions.
func (e *Engine) Close() error {
	errs := []error{e.validity.s.Close()}
	for _, l := range slices.Concat(e.landmarks, e.refine) {
		errs = append(errs, l.s.Close())
	}
	if e.silhouette != nil {
		errs = append(errs, e.silhouette.s.Close())
	}
	return errors.Join(errs...)
}

// Route is the route the engine measures v by (Options.Route, or the
// manifest's).
func (e *Engine) Route() Route { return e.opts.Route }

// ColumnVertebraFactor is the column route's v / period the model
// version names (its manifest's ParamColumnVertebraFactor), else the
// default ColumnVertebraFactor.
func (e *Engine) ColumnVertebraFactor() float64 { return e.colFactor }

// SpreadBound is the bound on the route's spread the model version
// names (its manifest's ParamMaxHeartVHSSD or ParamMaxSpreadForVHS),
// else the route's default; Options.NoSpreadBound does not change it.
func (e *Engine) SpreadBound() float64 { return e.bound }

// spreadBound is the bound Decide applies: +Inf with NoSpreadBound.
func (e *Engine) spreadBound() float64 {
	if e.opts.NoSpreadBound {
		return math.Inf(1)
	}
	return e.bound
}

// ModelVersion is the manifest's cardiac family model_version.
func (e *Engine) ModelVersion() string { return e.version }

// LandmarkModels is the number of landmark models in the ensemble.
func (e *Engine) LandmarkModels() int { return len(e.landmarks) }

// RefineModels is the number of refinement models (0: no second stage).
func (e *Engine) RefineModels() int { return len(e.refine) }
