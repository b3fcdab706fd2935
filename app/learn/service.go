package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of the evaluation (docs/learning.md).
const (
	// DefaultPhantoms is the size of the held-out phantom regression set.
	DefaultPhantoms = 60
	// PhantomTolerance is how much worse (VHS MAE, vertebrae) a candidate
	// may be on the phantom set than the models in use.
	PhantomTolerance = 0.25
	// MaxPromotedVHSMAE is the largest held-out clinic VHS MAE (vertebrae)
	// a candidate may have and still be promoted: three times the 0.5 v
	// readers differ by. Beating poor models is not enough; a version that
	// learned only the clinic's average heart (labels shuffled between
	// cases still teach that) stays far above it.
	MaxPromotedVHSMAE = 1.5
)

// Config wires a Service.
type Config struct {
	Layout Layout
	// Shipped is the shipped models directory.
	Shipped  string
	Trainer  Trainer
	Registry Registry
	Models   Models
	// Phantoms is the phantom set's size when it is created (0:
	// DefaultPhantoms).
	Phantoms int
	// Now tells the time (nil: time.Now).
	Now func() time.Time
}

// Service runs the learning use cases on one data directory.
type Service struct {
	cfg Config
	run sync.Mutex // one run per process (the lock file covers processes)

	mu   sync.Mutex
	live *Live
	load func(dir string) (Engine, error)
}

// New builds the Service.
func New(cfg Config) (*Service, error) {
	if cfg.Layout.Dir == "" || cfg.Shipped == "" || cfg.Registry == nil || cfg.Models == nil {
		return nil, errors.New("learn: layout, shipped models, registry and models are required")
	}
	if cfg.Phantoms <= 0 {
		cfg.Phantoms = DefaultPhantoms
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg}, nil
}

// Attach lets the Service swap live's engine when the active version
// changes (Use, a promotion, Sync), loading engines with load.
func (s *Service) Attach(live *Live, load func(dir string) (Engine, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live, s.load = live, load
}

// Sync brings the attached live engine to the active version (nothing
// when none is attached or it is already there). When the new version
// does not load, the engine in use stays and the error says why.
func (s *Service) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		return nil
	}
	dir, err := s.ActiveDir(ctx)
	if err != nil {
		return err
	}
	if dir == s.live.Dir() {
		return nil
	}
	e, err := s.load(dir)
	if err != nil {
		return fmt.Errorf("load the active version from %s (the engine in use stays): %w", dir, err)
	}
	s.live.Swap(e, dir)
	return nil
}

// Follow calls Sync every interval until ctx ends, so that a version
// made active by another process or server is served here within one
// interval; errors go to onErr.
func (s *Service) Follow(ctx context.Context, interval time.Duration, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Sync(ctx); err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
		}
	}
}

// Layout is the service's folders (the pool, for app.Service.Learning.SyncPool).
func (s *Service) Layout() Layout { return s.cfg.Layout }

// Pool counts the pool's cases by kind.
func (s *Service) Pool(ctx context.Context) (PoolSummary, error) {
	cases, err := LoadPool(s.cfg.Layout.Pool())
	if err != nil {
		return PoolSummary{}, err
	}
	return Summarize(cases), nil
}

// Runs lists the run reports, newest first. A run recorded as running
// while no process holds the learning lock was interrupted (a crash).
func (s *Service) Runs(ctx context.Context) ([]Run, error) {
	ents, err := os.ReadDir(s.cfg.Layout.Runs())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, describe("list runs", err)
	}
	var out []Run
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		r, err := s.readRun(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if slices.ContainsFunc(out, func(r Run) bool { return r.Status == StatusRunning }) {
		if l, err := tryLock(s.cfg.Layout.lockFile()); err == nil {
			l.Unlock()
			for i := range out {
				if out[i].Status == StatusRunning {
					out[i].Status = StatusInterrupted
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Run) int { return b.Started.Compare(a.Started) })
	return out, nil
}

func (s *Service) runPath(id string) string { return filepath.Join(s.cfg.Layout.Runs(), id+".json") }

func (s *Service) readRun(id string) (Run, error) {
	b, err := os.ReadFile(s.runPath(id))
	if err != nil {
		return Run{}, describe("read run", err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

func (s *Service) saveRun(r *Run) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return describe("save run", err)
	}
	return describe("save run", writeAtomic(s.runPath(r.ID), b))
}

// Promote promotes the candidate of run id, when the run's rule held
// and its candidate is still kept (the next run removes unpromoted
// candidates).
func (s *Service) Promote(ctx context.Context, id string) (Version, error) {
	l, err := tryLock(s.cfg.Layout.lockFile())
	if err != nil {
		return Version{}, err
	}
	defer l.Unlock()
	r, err := s.readRun(id)
	if err != nil {
		return Version{}, err
	}
	if r.Promoted {
		return Version{}, fmt.Errorf("run %s: %s is already promoted", id, r.Candidate)
	}
	if !r.Promotable {
		return Version{}, fmt.Errorf("run %s: the promotion rule did not hold (%s)", id, r.Refusal())
	}
	v, err := s.promote(ctx, &r)
	if err != nil {
		return Version{}, err
	}
	return v, s.saveRun(&r)
}
