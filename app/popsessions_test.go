package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// countingPoP hands out numbered sessions (TTL 300 s); a frame completes
// its session.
type countingPoP struct {
	spyPipeline
	mu sync.Mutex
	n  int
}

func (p *countingPoP) StartSession(ctx context.Context) (Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return Session{ID: fmt.Sprintf("s%d", p.n), Config: SessionConfig{MaxFrames: 20, SessionTTLSeconds: 300}}, nil
}

func (p *countingPoP) Frame(ctx context.Context, id string, frame []byte) (FrameOutcome, error) {
	return FrameOutcome{Status: StatusFailed, Error: ErrMaxFrames}, nil
}

// TestOpenSessionsPerKey: a key may hold MaxOpenSessionsPerKey open PoP
// sessions; one more is KindTooMany with a Retry-After until the first
// expires. Finishing or expiring a session frees its slot, other keys are
// not affected, and the records are swept after their retention.
func TestOpenSessionsPerKey(t *testing.T) {
	ctx := context.Background()
	type step struct {
		do      string // "start A", "start B", "finish A", "wait 301s", "sweep"
		wantErr bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the cap", []step{{"start A", false}, {"start A", false}, {"start A", false}, {"start A", true}}},
		{"per key", []step{{"start A", false}, {"start A", false}, {"start A", false}, {"start B", false}, {"start A", true}}},
		{"a finished session frees its slot", []step{{"start A", false}, {"start A", false}, {"start A", false}, {"finish A", false}, {"start A", false}, {"start A", true}}},
		{"an expired session frees its slot", []step{{"start A", false}, {"start A", false}, {"start A", false}, {"wait 301s", false}, {"start A", false}, {"start A", false}, {"start A", false}, {"start A", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newTestService(t, t0)
			s.cfg.MaxOpenSessionsPerKey = 3
			s.pop = &countingPoP{spyPipeline: spyPipeline{svc: s}}
			callers := map[string]Caller{"A": newCaller(t, s, "clinic", TierPaygo)}
			keyB, _, _ := s.CreateKey(ctx, "clinic", "") // the same customer's second key
			callers["B"], _ = s.Authenticate(ctx, keyB)
			var open []string // A's sessions, oldest first
			for i, st := range tc.steps {
				var err error
				switch st.do {
				case "start A", "start B":
					var body *SessionStart
					body, err = s.StartSession(ctx, callers[st.do[6:]])
					if err == nil && st.do == "start A" {
						open = append(open, body.SessionID)
					}
				case "finish A":
					_, err = s.SessionFrame(ctx, callers["A"], open[0], codeImage(t, 1), "")
					open = open[1:]
				case "wait 301s":
					clk.Add(301 * time.Second)
				}
				var e *Error
				if (err != nil) != st.wantErr || (err != nil && (!errors.As(err, &e) || e.Kind != KindTooMany || e.RetryAfter <= 0 || e.RetryAfter > 300*time.Second)) {
					t.Fatalf("step %d (%s): err %v, want error %v", i, st.do, err, st.wantErr)
				}
			}
		})
	}

	// The background sweeper drops records past their retention.
	s, clk := newTestService(t, t0)
	s.pop = &countingPoP{spyPipeline: spyPipeline{svc: s}}
	c := newCaller(t, s, "clinic", TierPaygo)
	for range 3 {
		if _, err := s.StartSession(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(ownerRetention + time.Minute)
	sweepCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.RunSessionSweeper(sweepCtx, 5*time.Millisecond); close(done) }()
	for deadline := time.Now().Add(5 * time.Second); s.owners.len() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d session records left after the retention", s.owners.len())
		}
	}
	cancel()
	<-done
}
