package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Curve is a run's held-out learning curve: the trainer's measure of
// the held-out clinic cases at points of its schedule (cardiac/learn.py
// --eval-cases; train.json's heldout_curve), kept in the run's report
// and in the version's train.json.
type Curve struct {
	// Cases is how many held-out cases it was measured on (at most the
	// trainer's CURVE_MAX_CASES of them).
	Cases int `json:"cases"`
	// Metric says what VHSMAE is: the raw ensemble mean landmarks' own
	// VHS (span route, no guards), so its first point is not the
	// engine's figure (Run.Before), which measures on the version's
	// route.
	Metric string       `json:"metric"`
	Points []CurvePoint `json:"points"`
}

// CurvePoint is the held-out VHS MAE after Step steps per member (the
// members' mean where a time budget ended them at different steps).
type CurvePoint struct {
	Step   float64 `json:"step"`
	VHSMAE float64 `json:"vhs_mae"`
}

// trainFile is the trainer's account of a run in the models directory
// it wrote.
const trainFile = "train.json"

// readCurve reads the held-out curve the trainer wrote into dir's
// train.json; nil without one (a trainer that was given no held-out
// cases, or an older one).
func readCurve(dir string) (*Curve, error) {
	b, err := os.ReadFile(filepath.Join(dir, trainFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t struct {
		Curve *Curve `json:"heldout_curve"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", trainFile, err)
	}
	return t.Curve, nil
}

// LastCurve is the newest run that has a held-out curve (ok false when
// none has).
func (s *Service) LastCurve(ctx context.Context) (run Run, ok bool, err error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return Run{}, false, err
	}
	for _, r := range runs {
		if r.Curve != nil && len(r.Curve.Points) > 0 {
			return r, true, nil
		}
	}
	return Run{}, false, nil
}
