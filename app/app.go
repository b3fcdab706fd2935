// Package app holds VetLens's use cases: API keys, metering and billing,
// cardiac prediction (single, batch, stream, PoP sessions) and USG
// prediction with logging. The business rules live here once; the HTTP
// API (platform/httpapi), the desktop GUI and the one-shot commands call
// the feature types a *Service holds (Service.Accounts, Cardiac,
// Sessions, Patients, USG, Learning, Status; features.go).
package app

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"vetlens/app/apperr"
	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
	"vetlens/internal/config"
)

// Clock tells the time; tests inject a fake one.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// CardiacEngine is what the use cases need from engine/cardiac
// (*cardiac.Engine satisfies it).
type CardiacEngine interface {
	Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error)
	ModelVersion() string
	LandmarkModels() int
}

// USGEngine is what the use cases need from engine/usg (*usg.Engine
// satisfies it).
type USGEngine interface {
	Predict(ctx context.Context, req *usg.Request) (*usg.Response, error)
	Version() usg.VersionInfo
	Health() usg.Health
}

// Config holds the configurable business parameters.
type Config struct {
	// Rates are the per-call prices by tier; DefaultConfig gives the spec's.
	Rates map[Tier]Rate
	// USGRate is the flat price of one successful USG prediction,
	// whatever the tier.
	USGRate Cents
	// RecheckWindow is the grace for a repeated uuid (24 h).
	RecheckWindow time.Duration
	// MaxFreeRechecks caps the free recheck_24h answers a (customer, uuid)
	// pair gets within one window: the next valid call is billed as a new
	// one, which starts a new window. 0 (the default) is no cap, as the
	// spec has it. `vetlens serve --max-free-rechecks`.
	MaxFreeRechecks int
	// CardiacConcurrency is how many cardiac images are measured at once
	// across all requests (default 1: the engine uses every core per image).
	CardiacConcurrency int
	// PixelBudget is the process-wide memory budget for decoded pixels,
	// in bytes, shared by every image the service decodes (predict,
	// batch, stream, PoP frames, corners, rectify, preprocess, desktop).
	// 0: sized from the machine (membudget.DefaultCapacity: total memory
	// / 16 within 256 MiB-4 GiB).
	PixelBudget int64
	// PixelWait is how long an image waits for room in the budget before
	// KindBusy (503 with Retry-After). 0: membudget.DefaultWait (2 s).
	PixelWait time.Duration
	// MaxOpenSessionsPerKey is how many PoP sessions one API key may have
	// open (neither finished nor past their TTL); one more start is
	// KindTooMany (429). 0: DefaultMaxOpenSessionsPerKey.
	MaxOpenSessionsPerKey int
}

// DefaultMaxOpenSessionsPerKey is the default cap on open PoP sessions
// per API key: a clinic runs one capture at a time per workstation.
const DefaultMaxOpenSessionsPerKey = config.DefaultMaxPoPSessions

// DefaultUSGRate is the flat USG price when none is configured: $0.50
// (the spec does not show the amount).
const DefaultUSGRate Cents = config.DefaultUSGRateCents

// DefaultConfig is the spec's rate table, $1.50/$2.50 as the enterprise
// rates of customers without custom ones, DefaultUSGRate and 24 h.
func DefaultConfig() Config {
	return Config{
		Rates: map[Tier]Rate{
			TierPaygo:        {Single: 300, Session: 400},
			TierStarter:      {Single: 250, Session: 350},
			TierProfessional: {Single: 200, Session: 300},
			TierEnterprise:   {Single: 150, Session: 250},
		},
		USGRate:            DefaultUSGRate,
		RecheckWindow:      24 * time.Hour,
		CardiacConcurrency: config.DefaultCardiacConcurrency,
	}
}

// Service is the application: one per process, shared by the HTTP API,
// the GUI and the one-shot commands. It holds no use case of its own: each
// feature is a type with its ports declared (features.go), built once by
// New and reached through these fields.
type Service struct {
	// Accounts are the API keys, customers' rates and billing.
	Accounts *Accounts
	// Cardiac is the single-image cardiac predictions: the API's single
	// and batch calls, the desktop's measurement (DICOM included) and the
	// one-shot command's.
	Cardiac *Cardiac
	// Sessions are the PoP capture sessions (API, desktop and one-shot)
	// and the PoP pipeline's corner and rectify calls.
	Sessions *Sessions
	// Patients are the patient records, their cardiac and USG history,
	// saving and correcting desktop measurements, and reports to PACS.
	Patients *Patients
	// USG is the USG predictions and the desktop's bloodwork screening.
	USG *USG
	// Learning fills the on-site learning pool from the clinic's
	// corrections.
	Learning *Learning
	// Status is health, free disk space, loaded models and the pixel
	// memory budget.
	Status *Status

	repos repo.Repos
}

// Deps are the Service's collaborators.
type Deps struct {
	// Repos are the storage ports (platform/store's Store.Repos for
	// bbolt).
	Repos   repo.Repos
	Clock   Clock // nil: SystemClock
	Cardiac CardiacEngine
	USG     USGEngine
	PoP     PoP // nil: PoP pipeline not loaded (endpoints answer 503)
	// PoPMeasurer measures one image for the single predictions
	// (PredictSingle, PredictLocal) and the desktop (MeasureDesktop),
	// correcting a photograph of a screen first and returning the image
	// the positions refer to; nil: the image is decoded and measured as
	// it is.
	PoPMeasurer PoPMeasurer
	// Disk reads the store's free space (diskfree.Dir{data dir} for
	// bbolt); nil: no free-space guard (a remote store).
	Disk DiskSpace
}

// New checks d and cfg and builds the Service: each feature over the
// ports it declares (compose). The composition root (cli) calls it once
// per process.
func New(d Deps, cfg Config) (*Service, error) {
	if !d.Repos.Complete() {
		return nil, errors.New("app: a repository is missing")
	}
	if d.Clock == nil {
		d.Clock = SystemClock{}
	}
	if cfg.Rates == nil {
		cfg.Rates = DefaultConfig().Rates
	}
	if cfg.RecheckWindow == 0 {
		cfg.RecheckWindow = 24 * time.Hour
	}
	for _, t := range Tiers() {
		r, ok := cfg.Rates[t]
		if !ok {
			return nil, fmt.Errorf("app: no rate for tier %s", t)
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("app: rate for tier %s: %w", t, err)
		}
	}
	if err := (Rate{Single: cfg.USGRate}).check(); err != nil {
		return nil, fmt.Errorf("app: USG rate: %w", err)
	}
	if cfg.CardiacConcurrency <= 0 {
		cfg.CardiacConcurrency = 1
	}
	if cfg.MaxOpenSessionsPerKey <= 0 {
		cfg.MaxOpenSessionsPerKey = DefaultMaxOpenSessionsPerKey
	}
	return compose(d, cfg), nil
}

// Repos are the Service's repositories (for administration and tests).
func (s *Service) Repos() repo.Repos { return s.repos }

// Kind classifies a use-case error for the transports (apperr.Kind: a
// leaf type, so that the wire layer maps kinds to HTTP statuses in one
// table, errstatus.Of in api/errstatus, and app knows no status numbers).
type Kind = apperr.Kind

// Error kinds (apperr's), under their app names.
const (
	KindInternal      = apperr.KindInternal      // an unexpected failure
	KindInvalid       = apperr.KindInvalid       // missing or invalid fields
	KindTooLarge      = apperr.KindTooLarge      // an image over the size limit
	KindUnauthorized  = apperr.KindUnauthorized  // a missing or invalid API key
	KindUnavailable   = apperr.KindUnavailable   // a pipeline is not loaded
	KindNotFound      = apperr.KindNotFound      // an unknown or expired session
	KindUnprocessable = apperr.KindUnprocessable // corner detection failed
	KindConflict      = apperr.KindConflict      // a frame for a finished session
	KindBusy          = apperr.KindBusy          // no room in the pixel memory budget (with RetryAfter)
	KindTooMany       = apperr.KindTooMany       // too many open PoP sessions for the key (with RetryAfter)
	KindNoSpace       = apperr.KindNoSpace       // the store's disk is below config.DiskRefuseBytes (with RetryAfter)
)

// Error is a use-case error with its Kind (apperr.Error: the wire layer
// builds them too, for the bodies it refuses).
type Error = apperr.Error

func errf(k Kind, format string, a ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, a...)}
}

// KindOf returns the Kind of err (KindInternal when it is not an *Error).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
