package learn

import (
	"context"
	"image"
	"sync"

	"vetlens/engine/cardiac"
)

// Engine is a loaded cardiac engine as the live service uses it
// (*cardiac.Engine satisfies it).
type Engine interface {
	Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error)
	ModelVersion() string
	LandmarkModels() int
	Close() error
}

// Live is the cardiac engine the service measures with, swappable while
// it serves: a swap takes effect for the next prediction, and the
// engine it replaces is closed once its last prediction has returned.
// It satisfies app.CardiacEngine and capture.Predictor.
type Live struct {
	mu  sync.Mutex
	cur *slot
}

type slot struct {
	e       Engine
	dir     string
	refs    int
	retired bool
}

// NewLive serves e, loaded from dir.
func NewLive(e Engine, dir string) *Live { return &Live{cur: &slot{e: e, dir: dir}} }

func (l *Live) acquire() *slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.refs++
	return l.cur
}

func (l *Live) release(s *slot) {
	l.mu.Lock()
	s.refs--
	done := s.retired && s.refs == 0
	l.mu.Unlock()
	if done {
		s.e.Close()
	}
}

// Predict measures with the current engine.
func (l *Live) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	s := l.acquire()
	defer l.release(s)
	return s.e.Predict(ctx, img, o)
}

// ModelVersion is the current engine's model version.
func (l *Live) ModelVersion() string {
	s := l.acquire()
	defer l.release(s)
	return s.e.ModelVersion()
}

// LandmarkModels is the current engine's ensemble size.
func (l *Live) LandmarkModels() int {
	s := l.acquire()
	defer l.release(s)
	return s.e.LandmarkModels()
}

// Dir is the directory the current engine was loaded from.
func (l *Live) Dir() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur.dir
}

// Swap serves e (loaded from dir) from now on; the previous engine is
// closed when its in-flight predictions have returned.
func (l *Live) Swap(e Engine, dir string) {
	l.mu.Lock()
	old := l.cur
	l.cur = &slot{e: e, dir: dir}
	old.retired = true
	done := old.refs == 0
	l.mu.Unlock()
	if done {
		old.e.Close()
	}
}

// Close closes the current engine.
func (l *Live) Close() error {
	l.mu.Lock()
	s := l.cur
	s.retired = true
	done := s.refs == 0
	l.mu.Unlock()
	if done {
		return s.e.Close()
	}
	return nil
}
