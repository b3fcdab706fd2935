// Package fairgate shares a fixed number of slots among keys in turn, so
// that one key with many waiting requests cannot hold every slot while
// another key waits behind its whole queue.
//
// Waiters of one key are served first in, first out; across keys the gate
// serves the keys with waiters round-robin, one grant per key per turn.
package fairgate

import (
	"context"
	"sync"
)

// Gate hands out up to n slots at once. The zero value is not usable; use New.
type Gate struct {
	mu     sync.Mutex
	free   int
	queues map[string][]*waiter
	ring   []string // keys with waiters, in the order they are served
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

// New returns a gate with n slots (at least 1).
func New(n int) *Gate {
	if n < 1 {
		n = 1
	}
	return &Gate{free: n, queues: map[string][]*waiter{}}
}

// Acquire waits for a slot for key, or until ctx is done. On success the
// returned release must be called exactly once to give the slot back.
func (g *Gate) Acquire(ctx context.Context, key string) (release func(), err error) {
	g.mu.Lock()
	if g.free > 0 && len(g.ring) == 0 {
		g.free--
		g.mu.Unlock()
		return g.releaseOnce(), nil
	}
	w := &waiter{ready: make(chan struct{})}
	if len(g.queues[key]) == 0 {
		g.ring = append(g.ring, key)
	}
	g.queues[key] = append(g.queues[key], w)
	g.mu.Unlock()

	select {
	case <-w.ready:
		return g.releaseOnce(), nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted {
			// Granted while giving up: pass the slot on.
			g.grantLocked()
			return nil, ctx.Err()
		}
		g.removeLocked(key, w)
		return nil, ctx.Err()
	}
}

func (g *Gate) releaseOnce() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.grantLocked()
		})
	}
}

// grantLocked gives a freed slot to the next key in turn, or keeps it free.
func (g *Gate) grantLocked() {
	if len(g.ring) == 0 {
		g.free++
		return
	}
	key := g.ring[0]
	q := g.queues[key]
	w := q[0]
	g.ring = g.ring[1:]
	if len(q) > 1 {
		g.queues[key] = q[1:]
		g.ring = append(g.ring, key) // back of the line for its next waiter
	} else {
		delete(g.queues, key)
	}
	w.granted = true
	close(w.ready)
}

func (g *Gate) removeLocked(key string, w *waiter) {
	q := g.queues[key]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		g.queues[key] = q
		return
	}
	delete(g.queues, key)
	for i, k := range g.ring {
		if k == key {
			g.ring = append(g.ring[:i:i], g.ring[i+1:]...)
			break
		}
	}
}
