package capture

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/pop"
)

// A session's states and failure errors are app's (app.StatusReady,
// app.StatusContinue, app.StatusComplete, app.StatusFailed; app.ErrMaxFrames,
// ErrTimeout; Manager.Frame's sentinels app.ErrSessionNotFound and
// app.ErrSessionClosed): one set for the API, the desktop and `vetlens
// capture`.

// Config is a session's configuration; the first three fields are the
// spec's session_config (Session gives app's SessionConfig, whose wire body
// is cardiacv3.SessionConfig).
type Config struct {
	// MaxFrames: the session fails (max_frames_exceeded) when this many
	// frames were processed without completing.
	MaxFrames int
	// MaxConsecutiveFailures: after this many frames in a row that are not
	// good, the good frames collected so far are discarded (the camera has
	// left the screen or the scene changed, so old frames no longer vouch
	// for new ones). The session itself goes on.
	MaxConsecutiveFailures int
	// TTLSeconds: a session older than this fails (session_timeout).
	TTLSeconds int

	// GoodFramesNeeded is how many good frames whose VHS agree complete a
	// session.
	GoodFramesNeeded int
	// VHSAgreement is the largest VHS range (max - min, vertebrae) among
	// the agreeing good frames.
	VHSAgreement float64
	// Retention is how long an expired session is kept (answering
	// session_timeout) before it is swept from memory.
	Retention time.Duration
	// MinCornerConfidence: with the learned screen finder, a frame whose
	// corners' confidence (pop.Corners.Confidence) is below this is not
	// good, though it was corrected: uncertain corners distort the
	// rectified radiograph and so its VHS (docs/pop.md, "Capture
	// sessions"). The classical finder's confidence means something else
	// and is not held to it.
	MinCornerConfidence float64
}

// DefaultConfig is the spec's configuration (20 frames, 300 seconds) with
// VetLens's choices: 3 agreeing good frames within 0.3 vertebrae, 6
// consecutive failures, 60 seconds of retention after expiry, and learned
// corners of confidence 0.85 or more.
func DefaultConfig() Config {
	return Config{MaxFrames: 20, MaxConsecutiveFailures: 6, TTLSeconds: 300, GoodFramesNeeded: 3, VHSAgreement: DefaultVHSAgreement, Retention: time.Minute,
		MinCornerConfidence: MinCornerConfidence}
}

// DefaultVHSAgreement is the default Config.VHSAgreement (vertebrae), and
// how far a single screen photo's VHS may move when it is measured
// mirrored (PredictImage).
const DefaultVHSAgreement = 0.3

// MinCornerConfidence is the default Config.MinCornerConfidence, and the
// bound PredictImage holds a single screen photo's learned corners to:
// chosen on the validation composites (docs/pop.md, "Capture sessions").
const MinCornerConfidence = 0.85

// FrameProblem says why the rectification of a corrected screen photo
// cannot be trusted for a measurement: its frame quality has problems
// (pop.Quality.OK), or, with the learned finder, its corners' confidence
// is below minCornerConfidence (the classical finder's confidence means
// something else and is not held to it). It returns "" when the frame
// can be measured. Capture sessions skip such frames; a single photo
// (PredictImage) gets no number from one.
func FrameProblem(an *pop.Analysis, minCornerConfidence float64) string {
	switch {
	case !an.Quality.OK():
		return fmt.Sprintf("frame quality: %v", an.Quality.Problems)
	case an.Learned != nil && an.Corners.Confidence < minCornerConfidence:
		return fmt.Sprintf("screen corners not certain enough (confidence %.2f < %.2f)", an.Corners.Confidence, minCornerConfidence)
	}
	return ""
}

// FrameResult is one frame's result.
type FrameResult struct {
	// Result is the cardiac result on the rectified frame; for a frame
	// whose screen could not be corrected it is code 7 with no
	// measurement; nil when no screen was seen at all.
	Result *cardiac.Result
	// Analysis is what the PoP pipeline found.
	Analysis *pop.Analysis
	// Good: corrected (with learned corners at MinCornerConfidence or
	// more), frame quality passed and the ensemble is confident (result
	// code 1 or 2).
	Good bool
	// Problem says why the frame is not good ("" when good).
	Problem string
}

// Code is the frame's result code: the cardiac code, 7 when a screen was
// detected but not corrected, and 5 when no screen was seen.
func (f FrameResult) Code() cardiac.Code {
	if f.Result == nil {
		return cardiac.CodeNoLandmarks
	}
	return f.Result.Code
}

type goodFrame struct {
	index int
	vhs   float64
	res   *cardiac.Result
	jpeg  []byte
	sharp float64
}

type session struct {
	mu       sync.Mutex
	seen     map[[32]byte]bool // SHA-256 of every frame's bytes
	pictures map[[32]byte]bool // pop.FrameHash of every decoded frame
	id       string
	owner    app.SessionOwner
	created  time.Time
	status   string
	frames   int // frames accepted for processing
	done     int // frames whose processing finished
	failRun  int
	good     []goodFrame
	finished time.Time
}

// Manager holds the live sessions: the one registry of PoP capture
// sessions, with each session's owner (app.SessionOwner), its state and
// the per-key limit of open sessions. It is safe for concurrent use: many
// sessions at once, and several frames of one session at once (each
// frame's analysis runs in parallel; the session's state is updated under
// its lock).
type Manager struct {
	cfg  Config
	pred Predictor
	an   Analyzer
	now  func() time.Time

	mu       sync.Mutex
	sessions map[string]*session
}

// NewManager returns a manager. now is the clock (time.Now in
// production; tests inject their own).
func NewManager(cfg Config, p Predictor, a Analyzer, now func() time.Time) *Manager {
	if now == nil {
		now = time.Now
	}
	return &Manager{cfg: cfg, pred: p, an: a, now: now, sessions: map[string]*session{}}
}

// Config returns the manager's configuration.
func (m *Manager) Config() Config { return m.cfg }

// Session is the configuration as app reports it (the spec's
// session_config and GoodFramesNeeded).
func (c Config) Session() app.SessionConfig {
	return app.SessionConfig{MaxFrames: c.MaxFrames, MaxConsecutiveFailures: c.MaxConsecutiveFailures,
		SessionTTLSeconds: c.TTLSeconds, GoodFramesNeeded: c.GoodFramesNeeded}
}

// newID returns a random (version 4) UUID: 122 random bits from
// crypto/rand, in the canonical 36-character form.
func newID() (string, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return id.String(), nil
}

// Start opens a session (status ready) owned by owner and sweeps the
// expired ones. When owner.Key already holds maxOpen open sessions
// (neither complete nor failed, and not past the TTL) it opens none and
// returns an *app.SessionLimitError whose RetryAfter is the time until
// the first of them expires (at least a second); maxOpen <= 0 is no
// limit. The count and the insertion are one step under the manager's
// lock.
func (m *Manager) Start(owner app.SessionOwner, maxOpen int) (app.Session, error) {
	id, err := newID()
	if err != nil {
		return app.Session{}, err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	if maxOpen > 0 {
		if n, next := m.openLocked(owner.Key, now); n >= maxOpen {
			return app.Session{}, &app.SessionLimitError{RetryAfter: max(next.Sub(now), time.Second)}
		}
	}
	m.sessions[id] = &session{id: id, owner: owner, created: now, status: app.StatusReady}
	return app.Session{ID: id, Config: m.cfg.Session()}, nil
}

// openLocked counts key's open sessions (m.mu held) and returns when the
// first of them expires.
func (m *Manager) openLocked(key string, now time.Time) (n int, next time.Time) {
	for _, s := range m.sessions {
		if s.owner.Key != key {
			continue
		}
		s.mu.Lock()
		closed := s.status == app.StatusComplete || s.status == app.StatusFailed
		s.mu.Unlock()
		if expires := s.created.Add(m.ttl()); !closed && now.Before(expires) {
			n++
			if next.IsZero() || expires.Before(next) {
				next = expires
			}
		}
	}
	return n, next
}

// Owns reports whether id is a session held for customer.
func (m *Manager) Owns(id, customer string) bool {
	_, err := m.get(id, customer)
	return err == nil
}

// Len is the number of sessions held in memory.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

func (m *Manager) ttl() time.Duration { return time.Duration(m.cfg.TTLSeconds) * time.Second }

// Sweep removes sessions that expired more than Retention ago and finished
// sessions (complete or failed) older than Retention.
func (m *Manager) Sweep() {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
}

func (m *Manager) sweepLocked(now time.Time) {
	for id, s := range m.sessions {
		s.mu.Lock()
		expired := now.Sub(s.created) > m.ttl()+m.cfg.Retention
		stale := !s.finished.IsZero() && now.Sub(s.finished) > m.cfg.Retention
		s.mu.Unlock()
		if expired || stale {
			delete(m.sessions, id)
		}
	}
}

// RunSweeper sweeps every interval until ctx ends: this bounds the memory
// of sessions whose clients went away (Start sweeps too).
func (m *Manager) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	m.runSweeper(ctx, t.C)
}

// runSweeper sweeps at each tick until ctx ends.
func (m *Manager) runSweeper(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			m.Sweep()
		}
	}
}

// get returns customer's session id; another customer's is not found.
func (m *Manager) get(id, customer string) (*session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || s.owner.Customer != customer {
		return nil, app.ErrSessionNotFound
	}
	return s, nil
}
