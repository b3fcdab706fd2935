// Package clock tells the time and waits for it, so that code which paces
// or times out can be tested on a fake clock: a test then asserts what the
// code does at which moment, not how fast the machine ran it. It imports
// nothing of the module. A Clock satisfies app.Clock (Now).
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on C once d has
	// passed (at once when d <= 0).
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer (time.Timer's C and Stop).
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; false when it already fired
	// or was stopped.
	Stop() bool
}

// System is the wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (System) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (s sysTimer) C() <-chan time.Time { return s.t.C }
func (s sysTimer) Stop() bool          { return s.t.Stop() }

// Or returns c, or System when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return System{}
	}
	return c
}

// Until is the duration from c's now until t.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }

// Fake is a clock for tests. Its time moves only when Advance (or, with
// AutoAdvance, a timer) moves it; a timer fires when the time reaches
// its deadline.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	auto   bool
	timers []*fakeTimer
	// changed is closed and replaced whenever a timer is added, so
	// BlockUntil can wait without polling.
	changed chan struct{}
}

// NewFake returns a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t, changed: make(chan struct{})} }

// AutoAdvance makes every new timer move the clock to its deadline at once
// and fire: code that sleeps runs without waiting, and the fake time it
// reaches is the sum of the waits it asked for. It returns f.
func (f *Fake) AutoAdvance() *Fake {
	f.mu.Lock()
	f.auto = true
	f.mu.Unlock()
	return f
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the fake time reaches now + d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), c: make(chan time.Time, 1)}
	switch {
	case d <= 0:
		t.fire(f.now)
	case f.auto:
		f.now = t.at
		t.fire(f.now)
	default:
		f.timers = append(f.timers, t)
		close(f.changed)
		f.changed = make(chan struct{})
	}
	return t
}

// Advance moves the time forward by d and fires the timers due by then.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.timers[:0]
	for _, t := range f.timers {
		if !t.at.After(f.now) {
			t.fire(f.now)
		} else {
			kept = append(kept, t)
		}
	}
	f.timers = kept
}

// Pending is the number of timers waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntil waits until at least n timers are waiting to fire: the code
// under test has reached its wait.
func (f *Fake) BlockUntil(n int) {
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return
		}
		c := f.changed
		f.mu.Unlock()
		<-c
	}
}

type fakeTimer struct {
	f     *Fake
	at    time.Time
	c     chan time.Time
	fired bool
}

// fire sends on c; f.mu is held.
func (t *fakeTimer) fire(now time.Time) {
	t.fired = true
	t.c <- now
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.fired {
		return false
	}
	for i, x := range t.f.timers {
		if x == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			break
		}
	}
	t.fired = true // stopped: never fires
	return true
}
