// Package membudget is a process-wide memory budget for decoded pixels.
// Every image decode reserves its estimated bytes (width x height x bytes
// per pixel) before allocating and releases them when the pixels are no
// longer needed, so that concurrent requests cannot together exhaust the
// machine. A reservation that does not fit waits a little for others to
// finish, then fails with ErrExhausted (the API answers 503 with
// Retry-After). When the budget drains after a burst, memory is handed
// back to the operating system so the resident size falls back near idle.
//
// A Budget is owned by the application object (app.Service) and passed
// down; there is no package-level budget.
package membudget

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrExhausted means a reservation did not fit in the budget within the
// wait.
var ErrExhausted = errors.New("pixel memory budget exhausted")

// Defaults of a budget sized from the machine (DefaultCapacity).
const (
	// DefaultFraction: the default capacity is total memory / 16
	// (1.5 GB on a 24 GB machine) ...
	DefaultFraction = 16
	// DefaultMin and DefaultMax clamp it.
	DefaultMin = 256 << 20
	DefaultMax = 4 << 30
	// DefaultWait is how long a reservation waits for room.
	DefaultWait = 2 * time.Second
	// DefaultTrimDelay is how long the budget must stay drained after a
	// burst before memory is returned to the OS.
	DefaultTrimDelay = 500 * time.Millisecond
	// TrimAfter bounds the burst (bytes reserved since the last trim)
	// after which a drained budget returns memory to the OS; the burst
	// is a quarter of the budget when that is less.
	TrimAfter = 64 << 20
)

// DefaultCapacity is the budget for this machine: total memory /
// DefaultFraction, within [DefaultMin, DefaultMax]; DefaultMin when the
// total cannot be read.
func DefaultCapacity() int64 {
	total := TotalMemory()
	if total <= 0 {
		return DefaultMin
	}
	return min(max(total/DefaultFraction, DefaultMin), DefaultMax)
}

// Config sets up a Budget.
type Config struct {
	// Capacity is the budget in bytes; 0 or less: DefaultCapacity().
	Capacity int64
	// Wait is how long Reserve waits for room before ErrExhausted; 0:
	// DefaultWait, negative: no wait.
	Wait time.Duration
	// TrimDelay is how long the budget must stay empty after a burst
	// before memory is returned to the OS; 0: DefaultTrimDelay, negative:
	// never.
	TrimDelay time.Duration
	// Trim returns freed memory to the OS; nil: ReturnToOS (the Go heap
	// and, with cgo on Linux, the C heap used by OpenCV).
	Trim func()
}

// Stats are a Budget's counters.
type Stats struct {
	// Capacity is the budget in bytes.
	Capacity int64
	// InUse is the bytes reserved now; Peak the most reserved at once.
	InUse, Peak int64
	// Reservations counts successful reservations, Refused those that
	// failed with ErrExhausted, Waited those that had to wait for room.
	Reservations, Refused, Waited int64
	// Trims counts the times memory was returned to the OS.
	Trims int64
}

// Budget is a counting semaphore over bytes. It is safe for concurrent
// use.
type Budget struct {
	cfg Config

	mu      sync.Mutex
	st      Stats
	freed   chan struct{} // closed and replaced on every release
	burst   int64         // bytes reserved since the last trim
	trimGen int64         // bumped on every reservation: a pending trim checks it
}

// New returns a budget.
func New(c Config) *Budget {
	if c.Capacity <= 0 {
		c.Capacity = DefaultCapacity()
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
	if c.TrimDelay == 0 {
		c.TrimDelay = DefaultTrimDelay
	}
	if c.Trim == nil {
		c.Trim = ReturnToOS
	}
	return &Budget{cfg: c, st: Stats{Capacity: c.Capacity}, freed: make(chan struct{})}
}

// Capacity is the budget in bytes.
func (b *Budget) Capacity() int64 { return b.cfg.Capacity }

// Stats returns the counters.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

// Reserve takes n bytes from the budget, waiting up to the configured
// wait for room. A request larger than the whole budget is clamped to it:
// it runs alone. It returns the function that gives the bytes back (call
// it once), ErrExhausted (wrapped) when there was no room in time, or the
// context's error.
func (b *Budget) Reserve(ctx context.Context, n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	n = min(n, b.cfg.Capacity)
	var timeout <-chan time.Time
	waited := false
	for {
		b.mu.Lock()
		if b.st.InUse+n <= b.cfg.Capacity {
			b.st.InUse += n
			b.st.Peak = max(b.st.Peak, b.st.InUse)
			b.st.Reservations++
			if waited {
				b.st.Waited++
			}
			b.burst += n
			b.trimGen++
			b.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { b.release(n) }) }, nil
		}
		freed := b.freed
		if b.cfg.Wait < 0 || (timeout == nil && waited) {
			b.st.Refused++
			b.mu.Unlock()
			return nil, fmt.Errorf("reserve %d MB of %d MB: %w", n>>20, b.cfg.Capacity>>20, ErrExhausted)
		}
		b.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(b.cfg.Wait)
			defer t.Stop()
			timeout = t.C
		}
		waited = true
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			timeout = nil // one more try, then refuse
		}
	}
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.InUse -= n
	close(b.freed)
	b.freed = make(chan struct{})
	// A drained budget after a burst (TrimAfter bytes reserved since the
	// last trim): give the memory back once it has stayed drained for
	// TrimDelay.
	if b.st.InUse == 0 && b.cfg.TrimDelay > 0 && b.burst >= b.trimAfter() {
		gen := b.trimGen
		time.AfterFunc(b.cfg.TrimDelay, func() { b.trim(gen) })
	}
}

// trimAfter is the burst, in bytes reserved since the last trim, after
// which a drained budget returns memory to the OS: a quarter of the
// budget, at most TrimAfter.
func (b *Budget) trimAfter() int64 { return min(b.cfg.Capacity/4, TrimAfter) }

// trim returns memory to the OS when nothing was reserved since gen.
func (b *Budget) trim(gen int64) {
	b.mu.Lock()
	if b.trimGen != gen || b.st.InUse != 0 {
		b.mu.Unlock()
		return
	}
	b.burst = 0
	b.st.Trims++
	b.mu.Unlock()
	b.cfg.Trim()
}

// ReturnToOS frees what the Go runtime holds (debug.FreeOSMemory) and,
// where supported, trims the C heap (malloc_trim), which holds OpenCV's
// decoded frames.
func ReturnToOS() {
	debug.FreeOSMemory()
	trimCHeap()
}
