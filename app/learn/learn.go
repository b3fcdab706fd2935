// Package learn holds the use cases of on-site learning (issue 16,
// docs/learning.md): fine-tuning the cardiac landmark ensemble on the
// clinic's pool of corrected cases, evaluating the candidate against the
// models in use on held-out cases with the real engine, promoting it only
// on evidence, and keeping immutable model versions with one active
// version (rollback to any of them, the shipped one included) that every
// server sharing the store follows.
//
// The trainer (a Python subprocess), the registry that records the
// active version (a file, or a PostgreSQL table) and the engine are
// ports; their adapters live in platform/ and in the composition root.
package learn

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"path/filepath"
	"time"

	"vetlens/engine/cardiac"
)

// Layout names the folders of the learning data under DATA/learn.
type Layout struct {
	// Dir is DATA/learn.
	Dir string
}

// Pool is the case pool (DogHeart layout, `vetlens dataset import`).
func (l Layout) Pool() string { return filepath.Join(l.Dir, "pool") }

// Salt is the file holding the salt of the patient hashes of exported
// and pooled cases (never exported).
func (l Layout) Salt() string { return filepath.Join(l.Dir, "salt") }

// Versions holds the promoted versions, one immutable folder each.
func (l Layout) Versions() string { return filepath.Join(l.Dir, "versions") }

// Candidates holds the last run's candidate when it was not promoted.
func (l Layout) Candidates() string { return filepath.Join(l.Dir, "candidates") }

// Staging is where a run trains; whatever is there when a run starts
// was left by a cancelled or crashed run and is removed.
func (l Layout) Staging() string { return filepath.Join(l.Dir, "staging") }

// Runs holds one JSON report per run.
func (l Layout) Runs() string { return filepath.Join(l.Dir, "runs") }

// Phantoms is the held-out phantom regression set (truth.json beside
// the images), created once.
func (l Layout) Phantoms() string { return filepath.Join(l.Dir, "phantoms") }

// Synthetic is the trainer's cached synthetic mix.
func (l Layout) Synthetic() string { return filepath.Join(l.Dir, "synthetic.npz") }

// ActiveFile is where the file registry records the active version.
func (l Layout) ActiveFile() string { return filepath.Join(l.Dir, "active.json") }

// lockFile serialises runs and version changes across processes.
func (l Layout) lockFile() string { return filepath.Join(l.Dir, "lock") }

// TrainSpec is one fine-tuning job (the trainer contract,
// docs/learning.md "The trainer").
type TrainSpec struct {
	// Pool is the case pool; CasesFile a JSON list of the stems to train
	// on (no other case may be used).
	Pool, CasesFile string
	// EvalCasesFile lists the held-out stems the trainer measures its
	// learning curve on (never trained on; "": no curve).
	EvalCasesFile string
	// Base is the directory of the models to start from; Out the
	// directory to create (it must not exist); Version the new
	// model_version.
	Base, Out, Version string
	// Steps or Minutes bound the training (0: the trainer's default).
	Steps   int
	Minutes float64
	// Synthetic is the cached synthetic mix (created when absent) and
	// SyntheticN its size (0: the trainer's default).
	Synthetic  string
	SyntheticN int
	Seed       int64
	Threads    int
	// ShuffleLabels permutes labels among the training cases (for the
	// refusal test; never for real use).
	ShuffleLabels bool
}

// Progress is one report of a running job.
type Progress struct {
	// Stage is "prepare", "synthetic", "train", "export", "evaluate" or
	// "decide".
	Stage string
	// Member is the ensemble member being trained (1-based; 0: none).
	Member, Step, Steps int
	// Fraction is the whole run's progress, 0..1.
	Fraction float64
	Loss     float64
	ETA      time.Duration
	// Message says what happens, for a progress line.
	Message string
}

// Trainer runs the Python trainer (platform/trainer).
type Trainer interface {
	// Check reports whether the trainer can run; a *TrainerError with
	// code CodeMissingTorch says how to install what is missing.
	Check(ctx context.Context) (torchVersion string, err error)
	// Train runs one job, calling progress for each report. Cancelling
	// ctx stops it (SIGTERM) and leaves no Out behind.
	Train(ctx context.Context, spec TrainSpec, progress func(Progress)) error
	// MakePhantoms writes the held-out phantom regression set of n
	// radiographs into dir (which must not exist).
	MakePhantoms(ctx context.Context, dir string, n int) error
}

// CodeMissingTorch is the trainer's error code when torch, scipy or
// onnx is not installed.
const CodeMissingTorch = "missing_torch"

// TrainerError is an error the trainer reported.
type TrainerError struct {
	Code, Message string
}

func (e *TrainerError) Error() string { return e.Code + ": " + e.Message }

// IsMissingTorch reports whether err says the trainer's Python packages
// are missing.
func IsMissingTorch(err error) bool {
	var te *TrainerError
	return errors.As(err, &te) && te.Code == CodeMissingTorch
}

// Registry records which version is active where every server sharing
// the store sees it (a file in DATA/learn for bbolt, a table for
// PostgreSQL) and, for a shared store, carries the versions' files.
type Registry interface {
	// Active is the active version; "" means the shipped models.
	Active(ctx context.Context) (string, error)
	// SetActive records version ("" for the shipped models) atomically.
	SetActive(ctx context.Context, version string) error
	// Publish makes version's files (dir) available to the other
	// servers; a local registry does nothing.
	Publish(ctx context.Context, version, dir string) error
	// Fetch writes version's files into dir (which does not exist) when
	// the registry holds them: ErrUnknownVersion otherwise.
	Fetch(ctx context.Context, version, dir string) error
	// Published lists the versions the registry holds files for.
	Published(ctx context.Context) ([]string, error)
}

// ErrUnknownVersion means no version of that name exists.
var ErrUnknownVersion = errors.New("unknown model version")

// Reading is what a model set placed on one image.
type Reading struct {
	// Raw is the ensemble mean of the landmark models, without the
	// validity classifier, guards or clamping.
	Raw cardiac.Landmarks
	// Code is the product's result code on the image.
	Code cardiac.Code
	// RouteVHS is the VHS the product's route measured on the image
	// before its guards (the column route: the heart axes over the
	// column's v); NaN where the route measured none (no column found,
	// the image rejected), 0 where the measurer does not say.
	RouteVHS float64
	// Spread is what the route's spread bound judges on the image: the
	// members' VHS disagreement over the column's v (HeartVHSSD,
	// vertebrae) on the column route, the landmark spread on the span
	// route; NaN where it was not measured.
	Spread float64
	// ProductVHS is the VHS the product returns on the image (the
	// guarded landmarks' on the version's route, unrounded) where Code
	// carries one; 0 where the measurer does not say (then VHS()).
	ProductVHS float64
	// ColumnPeriod is the period (pixels) of the column the column route
	// found on the image and ColumnScore its repeat's score; 0 where it
	// found none or the measurer does not say (column.go fits the
	// version's column factor on them).
	ColumnPeriod, ColumnScore float64
}

// Returned is the VHS the product returns on the image, and whether it
// returns one (Code 1-4). Measurers open versions without their spread
// bound (cardiac.Options.NoSpreadBound), so Code says what every other
// guard decided; whether Spread is within a bound is for the caller
// (bounds.go).
func (r Reading) Returned() (float64, bool) {
	if !r.Code.HasVHS() {
		return math.NaN(), false
	}
	if v := r.ProductVHS; v != 0 {
		return v, true
	}
	return r.VHS(), true
}

// VHS is the reading's VHS: the route's where it measured one, else the
// raw landmarks' own (|A-B| / 6 as the unit).
func (r Reading) VHS() float64 {
	if v := r.RouteVHS; !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 {
		return v
	}
	return cardiac.Measure(r.Raw).VHS
}

// Measurer measures images with one model set.
type Measurer interface {
	// Measure measures img as the product does but without the
	// version's spread bound (Reading.Returned).
	Measure(ctx context.Context, img image.Image) (Reading, error)
	ModelVersion() string
	// SpreadBound is the bound on Reading.Spread the version's manifest
	// names (or the engine's default for its route).
	SpreadBound() float64
	Close() error
}

// Models opens model directories for evaluation and checks them.
type Models interface {
	// Open loads the cardiac models in dir.
	Open(dir string) (Measurer, error)
	// VerifyReference checks that ONNX Runtime reproduces the trainer's
	// reference outputs of the landmark models in dir; it returns the
	// largest difference found.
	VerifyReference(ctx context.Context, dir string) (float64, error)
}

// describe wraps err with what failed.
func describe(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
