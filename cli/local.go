package cli

import (
	"errors"
	"fmt"
	"time"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/ort"
	"vetlens/engine/usg"
	"vetlens/internal/config"
)

// localNeeds says what a one-shot command loads.
type localNeeds struct {
	cardiac bool // the cardiac engine and, on it, the PoP pipeline
	usg     bool // the USG engine
	pop     bool // the PoP geometry alone (corners, preprocess: no models)
}

// openLocal builds the app.Service of a one-shot command (app.NewLocal:
// the API's use cases, nothing stored or billed) with what n asks for
// loaded from models. Unlike serve, a part that does not load is an
// error: the command cannot run without it. closeAll releases the
// engines.
func openLocal(models, ortLib string, n localNeeds) (svc *app.Service, closeAll func(), err error) {
	var closers []func() error
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	var d app.Deps
	if n.cardiac || n.usg {
		if err := ort.Init(ortLib, config.ORTLibraryCandidates()...); err != nil {
			return nil, nil, err
		}
	}
	if n.usg {
		e, err := usg.Load(models)
		if err != nil {
			return nil, nil, fmt.Errorf("load USG model from %s: %w", models, err)
		}
		closers = append(closers, e.Close)
		d.USG = e
	}
	if n.cardiac {
		e, err := cardiac.Load(models, cardiac.DefaultOptions())
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("load cardiac models from %s: %w", models, err)
		}
		closers = append(closers, e.Close)
		d.Cardiac = e
		d.PoP = capture.NewService(capture.NewManager(capture.DefaultConfig(), e, capture.PoP{}, time.Now), e, capture.PoP{})
	} else if n.pop {
		// Corners and rectification are geometry: no predictor, and no
		// session is ever started on this pipeline.
		d.PoP = capture.NewService(nil, nil, capture.PoP{})
	}
	svc, err = app.NewLocal(d, app.DefaultConfig())
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return svc, closeAll, nil
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
		return errorLine{Error: ae.Error(), Status: ae.Kind.Status(), File: file}
	}
	return errorLine{Error: err.Error(), File: file}
}
