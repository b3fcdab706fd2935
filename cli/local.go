package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"vetlens/api/errstatus"
	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/app/learn"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/ort"
	"vetlens/engine/usg/usgort"
	"vetlens/internal/config"
)

// localNeeds says what a one-shot command loads.
type localNeeds struct {
	cardiac bool // the cardiac engine and, on it, the PoP pipeline
	usg     bool // the USG engine
	pop     bool // the PoP geometry alone (corners, preprocess: no models)
	// cardiacDir is where the cardiac models load from ("": the models
	// directory): the active learned version for serve and gui.
	cardiacDir string
}

// openLocal builds the app.Service of a one-shot command (app.NewLocal:
// the API's use cases, nothing stored or billed) with what n asks for
// loaded from models. Unlike serve, a part that does not load is an
// error: the command cannot run without it. closeAll releases the
// engines.
func openLocal(ctx context.Context, models, ortLib string, n localNeeds) (svc *app.Service, closeAll func(), err error) {
	d, closeAll, err := loadEngines(ctx, models, ortLib, n, func(part string, err error) error {
		if part == partORT {
			return err // names the library already
		}
		return fmt.Errorf("load %s from %s: %w", part, models, err)
	})
	if err != nil {
		return nil, nil, err
	}
	svc, err = app.NewLocal(d, app.DefaultConfig())
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return svc, closeAll, nil
}

// The parts loadEngines loads, as its onMissing callback names them.
const (
	partORT     = "ONNX Runtime"
	partUSG     = "USG model"
	partCardiac = "cardiac models"
	// partPoP is never fatal: without its models the classical screen
	// finder runs (onMissing's error is ignored).
	partPoP = "PoP models (the classical screen finder runs)"
)

// loadEngines loads ONNX Runtime and the engines n asks for from models,
// and on the cardiac engine the PoP pipeline (its session sweeper runs
// until ctx ends): the one wiring of the engines that serve, gui and the
// one-shot commands share. A part that does not load is handed to
// onMissing: serve and gui log it and go on (its endpoints answer 503),
// a one-shot command stops with the error onMissing returns. closeAll
// releases what loaded.
func loadEngines(ctx context.Context, models, ortLib string, n localNeeds, onMissing func(part string, err error) error) (d app.Deps, closeAll func(), err error) {
	var closers []func() error
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(part string, err error) error {
		if err := onMissing(part, err); err != nil {
			closeAll()
			return err
		}
		return nil
	}
	if n.cardiac || n.usg {
		if err := ort.Init(ortLib, config.ORTLibraryCandidates()...); err != nil {
			if err := fail(partORT, err); err != nil {
				return app.Deps{}, nil, err
			}
			n.cardiac, n.usg = false, false
		}
	}
	if n.usg {
		if e, err := usgort.Load(models); err != nil {
			if err := fail(partUSG, err); err != nil {
				return app.Deps{}, nil, err
			}
		} else {
			closers = append(closers, e.Close)
			d.USG = e
		}
	}
	if n.cardiac {
		dir := n.cardiacDir
		if dir == "" {
			dir = models
		}
		if eng, err := cardiacort.Load(dir, cardiac.DefaultOptions()); err != nil {
			if err := fail(partCardiac, err); err != nil {
				return app.Deps{}, nil, err
			}
		} else {
			// The live engine: swapped when the active model version
			// changes (app/learn), the same for the API, the desktop and
			// the PoP pipeline.
			e := learn.NewLive(eng, dir)
			closers = append(closers, e.Close)
			d.Cardiac = e
			// The PoP pipeline (the learned screen finder, or the
			// classical geometry when its models do not load) needs the
			// cardiac engine to measure rectified frames.
			an := loadPoP(models, func(err error) { _ = onMissing(partPoP, err) })
			closers = append(closers, an.Models.Close)
			mgr := capture.NewManager(capture.DefaultConfig(), e, an, time.Now)
			go mgr.RunSweeper(ctx, 30*time.Second)
			pipeline := capture.NewService(mgr, e, an)
			// The pipeline is also the screen-aware single prediction
			// and desktop measurement (app's explicit PoP ports).
			d.PoP, d.PoPMeasurer = pipeline, pipeline
			return d, closeAll, nil
		}
	}
	if n.pop {
		// Corners and rectification: no predictor, and no session is
		// ever started on this pipeline. The learned screen finder when
		// ONNX Runtime and its models load (as the API uses), else the
		// classical geometry.
		an := capture.PoP{}
		if err := ort.Init(ortLib, config.ORTLibraryCandidates()...); err == nil {
			an = loadPoP(models, func(error) {})
			closers = append(closers, an.Models.Close)
		}
		// No PoPMeasurer: there is no cardiac engine to
		// measure with.
		d.PoP = capture.NewService(nil, nil, an)
	}
	return d, closeAll, nil
}

// errorLine is the JSON line printed for an input that could not be
// measured: the API's error text, the status the API answers with (absent
// when the file could not even be read, which has no API equivalent) and
// the file.
type errorLine struct {
	Error  string `json:"error"`
	Status int    `json:"status,omitempty"`
	File   string `json:"file"`
}

// errorLineOf is the error line for a use-case error of file.
func errorLineOf(file string, err error) errorLine {
	var ae *app.Error
	if errors.As(err, &ae) {
		return errorLine{Error: ae.Error(), Status: errstatus.Of(ae.Kind), File: file}
	}
	return errorLine{Error: err.Error(), File: file}
}
