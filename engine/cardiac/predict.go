package cardiac

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"

	"vetlens/engine/imageproc"
	"vetlens/engine/infer"
)

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

// PredictBytes decodes JPEG or PNG bytes (imageproc.Decode: its sentinel
// errors come back wrapped) and predicts on the image.
func (e *Engine) PredictBytes(ctx context.Context, b []byte, o PredictOptions) (*Result, error) {
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	return e.Predict(ctx, img, o)
}

// Predict runs the validity classifier and, beside it, the landmark
// ensemble, whose points count only for a valid radiograph, and decides
// the result code. An error means the prediction could not run (bad input
// size, cancelled context, ONNX Runtime failure); every measurement
// outcome, including rejection, is a Result.
func (e *Engine) Predict(ctx context.Context, img image.Image, o PredictOptions) (*Result, error) {
	if o.Mirror {
		img = imageproc.MirrorX(img)
	}
	b := img.Bounds()
	if err := imageproc.CheckSize(b.Dx(), b.Dy()); err != nil {
		return nil, err
	}
	p, models, peaks, err := e.validityAndLandmarks(ctx, img)
	if err != nil {
		return nil, err
	}
	if !isRadiograph(p) {
		return newResult(b.Dx(), b.Dy(), p, nil, nil), nil
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

// validityAndLandmarks runs the validity classifier and, beside it, the
// landmark ensemble, so that the cores the classifier leaves idle already
// measure; a rejected image (isRadiograph false) cancels the members and
// comes back without landmarks. Every member has returned before it
// does, so nothing runs on after a rejection. The members' error counts
// only for an image the classifier accepts.
func (e *Engine) validityAndLandmarks(ctx context.Context, img image.Image) (float64, []Landmarks, [][NumLandmarks]float64, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type landmarks struct {
		models []Landmarks
		peaks  [][NumLandmarks]float64
		err    error
	}
	done := make(chan landmarks, 1)
	go func() {
		m, pk, err := e.runLandmarks(lctx, img, e.landmarks)
		done <- landmarks{m, pk, err}
	}()
	p, err := e.runValidity(ctx, img)
	if err != nil || !isRadiograph(p) {
		cancel()
		<-done
		return p, nil, nil, err
	}
	l := <-done
	if l.err != nil {
		return 0, nil, nil, l.err
	}
	return p, l.models, l.peaks, nil
}

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
	return &HeartAxes{Bottom: back(ax.Bottom), Right: back(ax.Right), Left: back(ax.Left), Doubt: SilhouetteDoubt(prob)}, nil
}
