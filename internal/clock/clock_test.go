package clock

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fired(t Timer) bool {
	select {
	case <-t.C():
		return true
	default:
		return false
	}
}

func TestFake(t *testing.T) {
	f := NewFake(t0)
	a, b := f.NewTimer(100*time.Millisecond), f.NewTimer(200*time.Millisecond)
	if f.Pending() != 2 {
		t.Fatalf("pending %d", f.Pending())
	}
	f.Advance(99 * time.Millisecond)
	if fired(a) || fired(b) {
		t.Fatal("fired early")
	}
	f.Advance(time.Millisecond)
	if !fired(a) || fired(b) || f.Pending() != 1 {
		t.Fatal("a is due at 100 ms, b is not")
	}
	if !b.Stop() || b.Stop() || f.Pending() != 0 {
		t.Fatal("Stop: true once, then false; nothing pending")
	}
	f.Advance(time.Second)
	if fired(b) {
		t.Fatal("a stopped timer fired")
	}
	if !fired(f.NewTimer(0)) || a.Stop() {
		t.Fatal("a zero timer fires at once; a fired timer does not stop")
	}
	if got := f.Now().Sub(t0); got != 1100*time.Millisecond {
		t.Fatalf("now %v", got)
	}
}

func TestFakeAutoAdvance(t *testing.T) {
	f := NewFake(t0).AutoAdvance()
	if !fired(f.NewTimer(50*time.Millisecond)) || !fired(f.NewTimer(25*time.Millisecond)) {
		t.Fatal("auto timers fire at once")
	}
	if got := Until(f, t0); got != -75*time.Millisecond {
		t.Fatalf("the clock moved %v, want 75 ms", -got)
	}
}

func TestBlockUntil(t *testing.T) {
	f := NewFake(t0)
	done := make(chan struct{})
	go func() {
		tm := f.NewTimer(time.Second)
		<-tm.C()
		close(done)
	}()
	f.BlockUntil(1)
	f.Advance(time.Second)
	<-done
}

func TestOr(t *testing.T) {
	if _, ok := Or(nil).(System); !ok {
		t.Fatal("nil is the system clock")
	}
	f := NewFake(t0)
	if Or(f) != Clock(f) {
		t.Fatal("a clock is kept")
	}
}
