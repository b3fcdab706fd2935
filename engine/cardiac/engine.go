package cardiac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"runtime"
	"slices"
	"sync"

	"vetlens/engine/imageproc"
	"vetlens/engine/infer"
	"vetlens/engine/manifest"
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

// loadWorkers is how many models LoadWith reads, hashes and opens at once.
const loadWorkers = 2

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

// ColumnVertebraFactor is the column route's v / period the model
// version names (its manifest's ParamColumnVertebraFactor), else the
// default ColumnVertebraFactor.
func (e *Engine) ColumnVertebraFactor() float64 { return e.colFactor }

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

// PredictOptions select optional work per prediction.
type PredictOptions struct {
	// Render asks for Result.Rendered (an annotated JPEG).
	Render bool
	// SkipRefinement measures with the first stage alone. The PoP pipeline
	// sets it for rectified screen photos, which the refinement models
	// were not trained for (docs/cardiac.md, "Refinement stage").
	SkipRefinement bool
	// Mirror measures the image mirrored left to right
	// (imageproc.MirrorX); positions then refer to the mirrored image.
	// VHS and VLAS do not change under mirroring, and the models were
	// trained to follow it, so a different answer says they are unsure
	// of the image (app/capture checks single screen photos this way).
	Mirror bool
	// NoLevel measures the image as it is, however tilted its spine
	// (for evaluating what levelling adds; level.go).
	NoLevel bool
}

// Result is one image's measurement. Positions are in pixels of the
// original image; Response converts them to the spec's normalized form.
type Result struct {
	Width, Height int

	// ClassifierConfidence is the validity model's p_radiograph, unrounded.
	ClassifierConfidence float64
	Rejected             bool // result code 6

	// Landmarks is the ensemble mean, clamped into the image. Zero when
	// rejected.
	Landmarks Landmarks
	// ModelLandmarks are each model's landmarks (unclamped), in manifest order.
	ModelLandmarks []Landmarks
	// Peaks is each landmark's peak averaged over the models.
	Peaks [NumLandmarks]float64
	// Geometry is measured on Landmarks.
	Geometry Geometry

	// Spread is the ensemble spread, rounded to DecimalsSpread; NaN when
	// it could not be computed.
	Spread     float64
	Confidence Confidence

	Code Code
	// Guard is why VHS and VLAS (code 5) or VLAS alone (code 4) were
	// withheld, e.g. GuardVertebraeNotAlongSpine; GuardNone for every
	// other code. Not part of the spec's response body.
	Guard Guard
	// GuardDetail says what the guard saw, where Withhold was given it
	// (e.g. a screen photo's quality problems); "" otherwise. Not part of
	// the spec's response body.
	GuardDetail string
	// VertebralPeriod is VertebralPeriodScore of the image along the
	// reported Vertebra A-B, nil where it was not measured: it is measured
	// only when every other check would return a VHS (guard 8). Not part
	// of the spec's response body.
	VertebralPeriod *float64
	// VertebralSpan is CountSpan along the reported Vertebra A-B, nil
	// where it was not counted: only when guard 8 passed on a result
	// that would return a VHS (guard 9). Not part of the spec's response
	// body.
	VertebralSpan *SpanCount
	// HeartVHSSD is the column route's HeartVHSSD: how far the members'
	// VHS disagree, in vertebrae; 0 on the span route, NaN where no
	// column was found. Not part of the spec's response body.
	HeartVHSSD float64
	// Silhouette is the heart's axes measured on the silhouette model's
	// map (original pixels), nil where the engine has no silhouette
	// model or the map held too little heart; where set, the column route
	// reports these heart points. Not part of the spec's response body.
	Silhouette *HeartAxes
	// SilhouetteGap is |VHS from the silhouette - VHS from the members'
	// heart points|, both over the column's v; NaN where either is
	// missing. Not part of the spec's response body.
	SilhouetteGap float64
	// Column is the thoracic column FindColumn measured v on (the column
	// route), nil where it was not found or not sought (the span route,
	// rejected images). Not part of the spec's response body.
	Column *Column
	// VHS and VLAS are rounded to DecimalsScore; nil where the code says
	// they could not be calculated.
	VHS, VLAS *float64

	LandmarksDetected bool // a VHS was measured (codes 1-4)
	AxesPerpendicular bool // Geometry.AxesPerpendicular
	PopDetected       bool // set by the caller's PoP pipeline

	// Rendered is the annotated JPEG when PredictOptions.Render was set
	// and the image was not rejected.
	Rendered []byte

	// LevelledDeg is the turn (degrees counter-clockwise on screen) under
	// which the landmarks were measured because the spine was tilted
	// (level.go); 0 when the image was measured as it is. Positions are
	// in the image's own pixels either way. Not part of the spec's
	// response body.
	LevelledDeg float64
}

// Offset makes a result measured on a sub-image describe the whole
// image: every position moves by d (the sub-image's corner in the whole
// image's pixels, counted from its bounds' corner) and Width, Height
// become the whole image's w, h. Distances, VHS and VLAS do not change.
// app/capture measures the displayed image of a viewer screenshot this
// way. Rendered is left as it was; render again on the whole image.
func (r *Result) Offset(d image.Point, w, h int) {
	move := func(l *Landmarks) {
		for k := range l {
			l[k].X += float64(d.X)
			l[k].Y += float64(d.Y)
		}
	}
	if !r.Rejected {
		move(&r.Landmarks)
		for i := range r.ModelLandmarks {
			move(&r.ModelLandmarks[i])
		}
	}
	r.Width, r.Height = w, h
}

// MarkPoPCorrectionFailed turns the result into code 7 (picture-of-picture
// detected, perspective correction failed): PopDetected is set and VHS and
// VLAS are withdrawn, so the result is not billable. The PoP pipeline calls
// it; the engine never decides code 7 by itself.
func (r *Result) MarkPoPCorrectionFailed() {
	r.Code = CodePoPFailed
	r.Guard = GuardNone
	r.PopDetected = true
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = false
}

// PredictBytes decodes JPEG or PNG bytes (imageproc.Decode: its sentinel
// errors come back wrapped) and predicts on the image.
func (e *Engine) PredictBytes(ctx context.Context, b []byte, o PredictOptions) (*Result, error) {
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	return e.Predict(ctx, img, o)
}

// Predict runs the validity classifier and, for a valid radiograph, the
// landmark ensemble, and decides the result code. An error means the
// prediction could not run (bad input size, cancelled context, ONNX Runtime
// failure); every measurement outcome, including rejection, is a Result.
func (e *Engine) Predict(ctx context.Context, img image.Image, o PredictOptions) (*Result, error) {
	if o.Mirror {
		img = imageproc.MirrorX(img)
	}
	b := img.Bounds()
	if err := imageproc.CheckSize(b.Dx(), b.Dy()); err != nil {
		return nil, err
	}
	p, err := e.runValidity(ctx, img)
	if err != nil {
		return nil, err
	}
	if !isRadiograph(p) {
		return newResult(b.Dx(), b.Dy(), p, nil, nil), nil
	}
	models, peaks, err := e.runLandmarks(ctx, img, e.landmarks)
	if err != nil {
		return nil, err
	}
	levelled := 0.0
	if !o.NoLevel {
		if models, peaks, levelled, err = e.level(ctx, img, models, peaks); err != nil {
			return nil, err
		}
	}
	if len(e.refine) > 0 && !o.SkipRefinement {
		if models, peaks, err = e.refineStage(ctx, img, models, peaks); err != nil {
			return nil, err
		}
	}
	r := newResultBound(b.Dx(), b.Dy(), p, models, peaks, e.spreadBound())
	r.LevelledDeg = levelled
	if e.opts.Route == RouteSpan {
		r.checkImage(img)
	} else {
		if e.silhouette != nil && !r.Rejected {
			if r.Silhouette, err = e.runSilhouette(ctx, img, EnsembleMean(models)[HeartTop]); err != nil {
				return nil, err
			}
		}
		r.measureColumnWith(img, e.spreadBound(), e.colFactor)
	}
	if o.Render {
		jpg, err := RenderJPEG(img, r)
		if err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		r.Rendered = jpg
	}
	return r, nil
}

// RawLandmarks runs the landmark ensemble alone on img, without the
// validity classifier, the refinement stage, the guards or clamping, and
// returns the ensemble mean in pixels of img: what the models place,
// for evaluating them against a clinician's points (app/learn).
func (e *Engine) RawLandmarks(ctx context.Context, img image.Image) (Landmarks, error) {
	b := img.Bounds()
	if err := imageproc.CheckSize(b.Dx(), b.Dy()); err != nil {
		return Landmarks{}, err
	}
	models, _, err := e.runLandmarks(ctx, img, e.landmarks)
	if err != nil {
		return Landmarks{}, err
	}
	return EnsembleMean(models), nil
}

// newResult derives a Result for a w x h image from the validity output p
// and, for a valid image, each landmark model's landmarks (pixels) and peaks.
func newResult(w, h int, p float64, models []Landmarks, peaks [][NumLandmarks]float64) *Result {
	return newResultBound(w, h, p, models, peaks, MaxSpreadForVHS)
}

// newResultBound is newResult with guard 7's bound given (+Inf: none).
func newResultBound(w, h int, p float64, models []Landmarks, peaks [][NumLandmarks]float64, bound float64) *Result {
	r := &Result{Width: w, Height: h, ClassifierConfidence: p, ModelLandmarks: models}
	if !isRadiograph(p) || len(models) == 0 {
		r.Code, _ = Decide(Evidence{PRadiograph: p}) // 6, or 0 for NaN or no models
		r.Rejected = r.Code == CodeRejected
		r.Spread = math.NaN()
		return r
	}
	scale := float64(max(w, h))
	finite := true
	for mi, l := range r.ModelLandmarks {
		for k, pt := range l {
			if !isFinite(pt.X) || !isFinite(pt.Y) || !isFinite(peaks[mi][k]) {
				finite = false
			}
		}
	}
	for k := range r.Peaks {
		for _, pk := range peaks {
			r.Peaks[k] += pk[k]
		}
		r.Peaks[k] /= float64(len(peaks))
	}
	r.Landmarks = clampTo(EnsembleMean(r.ModelLandmarks), w, h)
	r.Geometry = Measure(r.Landmarks)
	r.Spread = Round(Spread(r.ModelLandmarks, w, h), DecimalsSpread)
	finite = finite && isFinite(r.Spread)
	r.Confidence = ConfidenceFor(r.Spread)

	var core float64
	for k, pk := range r.Peaks {
		if k != VLASPoint {
			core += pk
		}
	}
	r.Code, r.Guard = Decide(Evidence{
		PRadiograph:    p,
		Finite:         finite,
		CorePeak:       core / (NumLandmarks - 1),
		VLASPeak:       r.Peaks[VLASPoint],
		VLASDispersion: Dispersion(r.ModelLandmarks, VLASPoint, scale),
		Vertebra:       r.Geometry.Vertebra / scale,
		VHS:            r.Geometry.VHS,
		VLAS:           r.Geometry.VLAS,
		Spread:         r.Spread,
		Guards:         checkPlausibilityBound(r.Landmarks, r.Spread, bound),
		SpreadBound:    bound,
	})
	r.AxesPerpendicular = finite && r.Geometry.AxesPerpendicular()
	r.setNumbers()
	return r
}

// setNumbers sets VHS, VLAS and LandmarksDetected from the code and the
// geometry: each number rounded where the code carries it, nil where not.
func (r *Result) setNumbers() {
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = r.Code.HasVHS()
	if r.Code.HasVHS() {
		v := Round(r.Geometry.VHS, DecimalsScore)
		r.VHS = &v
	}
	if r.Code.HasVLAS() {
		v := Round(r.Geometry.VLAS, DecimalsScore)
		r.VLAS = &v
	}
}

// checkImage applies the checks that look at the image itself to a
// result that would return a VHS: guard 8 (vertebral_period_mismatch),
// when VertebralPeriodScore along the reported A-B is not above
// MinVertebralPeriodScore, then guard 9 (vertebral_span_not_six), when
// CountSpan counts A-B more than SpanCountTolerance vertebrae from six.
// A failed guard makes the result code 5 and withdraws VHS and VLAS. It
// runs after Decide, so it costs nothing where no number would be
// returned anyway.
func (r *Result) checkImage(img image.Image) {
	if !r.Code.HasVHS() {
		return
	}
	// One pass over the column's bands serves both guards.
	a, b := r.Landmarks[VertebraA], r.Landmarks[VertebraB]
	s, period, ok := columnEvidence(img, a, b)
	r.VertebralPeriod = &s
	if g := guardVertebralPeriod(s); g != GuardNone {
		r.Withhold(g, "")
		return
	}
	c := spanCount(period, ok, a.Dist(b))
	r.VertebralSpan = &c
	if c.OffSix() {
		r.Withhold(GuardVertebralSpanNotSix, fmt.Sprintf("A-B covers about %.1f vertebrae of %.0f px", c.Vertebrae, c.PeriodPixels))
	}
}

// Withhold turns a result that would return a VHS (codes 1-4) into code 5
// for guard g, with detail saying what the guard saw ("" when the guard's
// description says it all; GuardDetail): VHS and VLAS are withdrawn, the
// landmarks stay for review. Other codes are left as they are.
func (r *Result) Withhold(g Guard, detail string) {
	if !r.Code.HasVHS() {
		return
	}
	r.Code, r.Guard, r.GuardDetail = CodeNoLandmarks, g, detail
	r.VHS, r.VLAS = nil, nil
	r.LandmarksDetected = false
}

// isRadiograph reports whether the validity output lets the landmark models
// run: p >= ValidityThreshold (false for NaN). Between it and
// ValidityConfident they run, but Decide withholds the numbers (code 5).
func isRadiograph(p float64) bool { return p >= ValidityThreshold }

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (e *Engine) runValidity(ctx context.Context, img image.Image) (float64, error) {
	x, _, err := imageproc.LetterboxRGB(img, e.validity.size)
	if err != nil {
		return 0, fmt.Errorf("validity input: %w", err)
	}
	s := int64(e.validity.size)
	out, err := e.validity.s.Run(ctx, infer.Tensor{Shape: []int64{1, 3, s, s}, Data: x})
	if err != nil {
		return 0, fmt.Errorf("validity model %s: %w", e.validity.name, err)
	}
	d := out[0].Data
	if len(d) != 1 {
		return 0, fmt.Errorf("validity model %s: %s has %d values, want 1", e.validity.name, outputValidity, len(d))
	}
	return float64(d[0]), nil
}

// runLandmarks runs each of the given landmark models on img
// (Options.Concurrency at a time) and returns each model's landmarks in
// pixels of img (0..W, 0..H from its bounds' corner) and peaks.
func (e *Engine) runLandmarks(ctx context.Context, img image.Image, ms []model) ([]Landmarks, [][NumLandmarks]float64, error) {
	// One letterbox per distinct input size.
	type input struct {
		x  []float32
		lb imageproc.Letterbox
	}
	inputs := map[int]input{}
	for _, m := range ms {
		if _, ok := inputs[m.size]; ok {
			continue
		}
		x, lb, err := imageproc.LetterboxGray(img, m.size)
		if err != nil {
			return nil, nil, fmt.Errorf("landmark input: %w", err)
		}
		inputs[m.size] = input{x, lb}
	}

	n := len(ms)
	lms := make([]Landmarks, n)
	peaks := make([][NumLandmarks]float64, n)
	errs := make([]error, n)
	conc := e.opts.Concurrency
	if conc <= 0 || conc > n {
		conc = n
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			in := inputs[m.size]
			lms[i], peaks[i], errs[i] = m.runLandmark(ctx, in.x, in.lb)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return lms, peaks, nil
}

func (m model) runLandmark(ctx context.Context, x []float32, lb imageproc.Letterbox) (Landmarks, [NumLandmarks]float64, error) {
	var pk [NumLandmarks]float64
	s := int64(m.size)
	out, err := m.s.Run(ctx, infer.Tensor{Shape: []int64{1, 1, s, s}, Data: x})
	if err != nil {
		return Landmarks{}, pk, fmt.Errorf("landmark model %s: %w", m.name, err)
	}
	lm, p := out[m.lmIndex].Data, out[m.pkIndex].Data
	if len(lm) != NumLandmarks*2 || len(p) != NumLandmarks {
		return Landmarks{}, pk, fmt.Errorf("landmark model %s: got %d landmark and %d peak values, want %d and %d",
			m.name, len(lm), len(p), NumLandmarks*2, NumLandmarks)
	}
	for k := range pk {
		pk[k] = float64(p[k])
	}
	return toPixels(lm, lb), pk, nil
}

// toPixels maps a landmark model's output (x, y pairs in letterbox units
// divided by S) to pixels of the original image.
func toPixels(lm []float32, lb imageproc.Letterbox) Landmarks {
	var l Landmarks
	s := float64(lb.S)
	for k := range l {
		x, y := lb.ToOriginal(float64(lm[2*k])*s, float64(lm[2*k+1])*s)
		l[k] = Point{x, y}
	}
	return l
}

// runSilhouette runs the silhouette model on img's letterbox and measures
// the heart's axes from the carina top (pixels of img); nil where the map
// holds too little heart (SilhouetteAxes).
func (e *Engine) runSilhouette(ctx context.Context, img image.Image, top Point) (*HeartAxes, error) {
	m := e.silhouette
	x, lb, err := imageproc.LetterboxGray(img, m.size)
	if err != nil {
		return nil, fmt.Errorf("silhouette input: %w", err)
	}
	s := int64(m.size)
	out, err := m.s.Run(ctx, infer.Tensor{Shape: []int64{1, 1, s, s}, Data: x})
	if err != nil {
		return nil, fmt.Errorf("silhouette model %s: %w", m.name, err)
	}
	prob := out[0].Data
	if len(prob) != m.size*m.size {
		return nil, fmt.Errorf("silhouette model %s: got %d values, want %d", m.name, len(prob), m.size*m.size)
	}
	u, v := lb.FromOriginal(top.X, top.Y)
	ax, ok := SilhouetteAxes(prob, m.size, Point{u, v})
	if !ok {
		return nil, nil
	}
	back := func(p Point) Point {
		x, y := lb.ToOriginal(p.X, p.Y)
		return Point{x, y}
	}
	return &HeartAxes{Bottom: back(ax.Bottom), Right: back(ax.Right), Left: back(ax.Left)}, nil
}
