package fairgate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// queued is how many waiters the gate holds (for ordering the test's goroutines).
func (g *Gate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, q := range g.queues {
		n += len(q)
	}
	return n
}

func waitQueued(t *testing.T, g *Gate, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiters: %d, want %d", g.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestKeysTakeTurns(t *testing.T) {
	tests := []struct {
		name    string
		arrive  string // one key per waiter, in arrival order
		granted string // the order slots are granted in
	}{
		{"one key waits behind another's queue only once", "AAAAB", "ABAAA"},
		{"three keys interleave", "AAABBC", "ABCABA"},
		{"a single key keeps its order", "AAA", "AAA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := New(1)
			hold, err := g.Acquire(context.Background(), "holder")
			if err != nil {
				t.Fatal(err)
			}
			order := make(chan string, len(tc.arrive))
			next := make(chan struct{})
			for i, k := range tc.arrive {
				key := string(k)
				go func() {
					rel, err := g.Acquire(context.Background(), key)
					if err != nil {
						t.Error(err)
						return
					}
					order <- key
					<-next
					rel()
				}()
				waitQueued(t, g, i+1)
			}
			hold()
			var got strings.Builder
			for range tc.arrive {
				got.WriteString(<-order)
				next <- struct{}{}
			}
			if got.String() != tc.granted {
				t.Errorf("granted %s, want %s", got.String(), tc.granted)
			}
		})
	}
}

func TestSlotsAndCancel(t *testing.T) {
	g := New(2)
	r1, err1 := g.Acquire(context.Background(), "a")
	r2, err2 := g.Acquire(context.Background(), "a")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, "b"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third acquire with both slots held: %v, want deadline exceeded", err)
	}
	if g.queued() != 0 {
		t.Fatalf("a cancelled waiter stays queued")
	}
	r1()
	r1() // a second call gives nothing back twice
	r3, err := g.Acquire(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := g.Acquire(ctx2, "c"); err == nil {
		t.Fatal("a released slot was counted twice: three holders on two slots")
	}
	r2()
	r3()
	for i := 0; i < 2; i++ {
		if _, err := g.Acquire(context.Background(), "d"); err != nil {
			t.Fatal(err)
		}
	}
}
