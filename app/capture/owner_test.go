package capture

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/platform/store"
)

// appClock is the test clock as app's Clock.
type appClock struct{ c *clock }

func (a appClock) Now() time.Time { return a.c.now() }

// newTestApp is an app.Service over a real Manager (cfg, fake predictor
// and analyzer, the returned clock) with a limit of 3 open sessions per
// key, and a caller for each of keys A and B of customer "clinic" and C
// of customer "other clinic".
func newTestApp(t *testing.T, cfg Config) (*app.Service, *Manager, *clock, *fakePredictor, map[string]app.Caller) {
	t.Helper()
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{t: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)}
	p := &fakePredictor{}
	m := NewManager(cfg, p, fakeAnalyzer{}, c.now)
	acfg := app.DefaultConfig()
	acfg.MaxOpenSessionsPerKey = 3
	svc, err := app.New(app.Deps{Repos: st.Repos(), Clock: appClock{c}, PoP: NewServiceWith(ServiceConfig{Manager: m, Predictor: p, Analyzer: fakeAnalyzer{}})}, acfg)
	if err != nil {
		t.Fatal(err)
	}
	callers := map[string]app.Caller{}
	for name, customer := range map[string]string{"A": "clinic", "B": "clinic", "C": "other clinic"} {
		key, _, err := svc.Accounts.CreateKey(context.Background(), customer, app.TierPaygo)
		if err != nil {
			t.Fatal(err)
		}
		if callers[name], err = svc.Accounts.Authenticate(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	return svc, m, c, p, callers
}

// TestOpenSessionsPerKey: a key may hold MaxOpenSessionsPerKey open PoP
// sessions; one more is KindTooMany with a Retry-After until the first
// expires. Finishing or expiring a session frees its slot, and other keys
// are not affected.
func TestOpenSessionsPerKey(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.MaxFrames = 1 // one frame that is not good fails the session
	type step struct {
		do      string // "start A", "start B", "finish A", "wait 301s"
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
			s, _, clk, _, callers := newTestApp(t, cfg)
			var open []string // A's sessions, oldest first
			for i, st := range tc.steps {
				var err error
				switch st.do {
				case "start A", "start B":
					var body *app.SessionStart
					body, err = s.Sessions.StartSession(ctx, callers[st.do[6:]])
					if err == nil && st.do == "start A" {
						open = append(open, body.SessionID)
					}
				case "finish A":
					var a *app.FrameAnswer
					a, err = s.Sessions.SessionFrame(ctx, callers["A"], open[0], textPNG("bad"), "")
					if err == nil && a.Outcome.Status != app.StatusFailed {
						t.Fatalf("step %d: %s, want failed", i, a.Outcome.Status)
					}
					open = open[1:]
				case "wait 301s":
					clk.add(301 * time.Second)
				}
				var e *app.Error
				if (err != nil) != st.wantErr || (err != nil && (!errors.As(err, &e) || e.Kind != app.KindTooMany || e.RetryAfter <= 0 || e.RetryAfter > 300*time.Second)) {
					t.Fatalf("step %d (%s): err %v, want error %v", i, st.do, err, st.wantErr)
				}
			}
		})
	}

	// Retry-After is the time until the key's first open session expires,
	// at least a second.
	s, _, clk, _, callers := newTestApp(t, cfg)
	for range 3 {
		if _, err := s.Sessions.StartSession(ctx, callers["A"]); err != nil {
			t.Fatal(err)
		}
		clk.add(10 * time.Second)
	}
	for _, tc := range []struct {
		wait, want time.Duration
	}{{0, 270 * time.Second}, {269*time.Second + 500*time.Millisecond, time.Second}} {
		clk.add(tc.wait)
		_, err := s.Sessions.StartSession(ctx, callers["A"])
		var e *app.Error
		if !errors.As(err, &e) || e.Kind != app.KindTooMany || e.RetryAfter != tc.want ||
			e.Msg != "too many open PoP sessions for this API key (limit 3); finish one or let it expire" {
			t.Errorf("after %v more: %v (%+v), want 429 retrying after %v", tc.wait, err, e, tc.want)
		}
	}
}

// TestForeignSessionIsUnknown: a frame for another customer's session
// answers exactly as an unknown session does, before anything runs on it;
// another key of the owner's customer may send frames.
func TestForeignSessionIsUnknown(t *testing.T) {
	ctx := context.Background()
	s, m, _, p, callers := newTestApp(t, DefaultConfig())
	st, err := s.Sessions.StartSession(ctx, callers["A"])
	if err != nil {
		t.Fatal(err)
	}
	frame := textPNG("good:10:0.001")
	_, unknown := s.Sessions.SessionFrame(ctx, callers["C"], "no-such-session", frame, "")
	_, foreign := s.Sessions.SessionFrame(ctx, callers["C"], st.SessionID, frame, "")
	var e, f *app.Error
	if !errors.As(unknown, &e) || !errors.As(foreign, &f) || e.Kind != app.KindNotFound || f.Kind != e.Kind ||
		f.Msg != "unknown or expired session_id" || foreign.Error() != unknown.Error() || p.calls.Load() != 0 {
		t.Fatalf("foreign %v, unknown %v, predictor called %d times", foreign, unknown, p.calls.Load())
	}
	if _, err := m.Frame(ctx, "other clinic", st.SessionID, frame); !errors.Is(err, app.ErrSessionNotFound) || p.calls.Load() != 0 {
		t.Fatalf("Manager.Frame of a foreign session: %v", err)
	}
	if m.Owns(st.SessionID, "other clinic") || !m.Owns(st.SessionID, "clinic") {
		t.Error("Owns")
	}
	body, err := s.Sessions.SessionFrame(ctx, callers["B"], st.SessionID, frame, "")
	if err != nil || body.Outcome.Status != app.StatusContinue || p.calls.Load() != 1 {
		t.Fatalf("the owner's other key: %+v %v", body, err)
	}
}

// TestStartIsAtomic: concurrent starts of one key never open more than
// the limit.
func TestStartIsAtomic(t *testing.T) {
	m, _, _ := newTestManager()
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened, refused := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Start(app.SessionOwner{Customer: "clinic", Key: "k1"}, 3)
			var lim *app.SessionLimitError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				opened++
			case errors.As(err, &lim):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if opened != 3 || refused != 17 || m.Len() != 3 {
		t.Fatalf("%d opened, %d refused, %d held", opened, refused, m.Len())
	}
}

// TestSweeperBoundsMemory: the background sweeper drops sessions past
// their TTL and retention, so a key that stops starting sessions leaves
// nothing behind.
func TestSweeperBoundsMemory(t *testing.T) {
	m, clk, _ := newTestManager()
	for range 3 {
		if _, err := m.Start(app.SessionOwner{Customer: "clinic", Key: "k1"}, 3); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() { m.runSweeper(ctx, tick); close(done) }()
	tick <- time.Time{}
	tick <- time.Time{} // taken once the first sweep is over
	if m.Len() != 3 {
		t.Fatalf("%d sessions held before their retention, want 3", m.Len())
	}
	clk.add(m.ttl() + m.Config().Retention + time.Second)
	tick <- time.Time{}
	tick <- time.Time{}
	if m.Len() != 0 {
		t.Fatalf("%d sessions held after the retention", m.Len())
	}
	cancel()
	<-done
}

// TestCornersOnlyServiceHoldsNoSessions: the corners-only service
// (`vetlens corners` and `preprocess` build it without a manager) refuses
// sessions with the PoP-unavailable error instead of crashing.
func TestCornersOnlyServiceHoldsNoSessions(t *testing.T) {
	s := NewService(nil, nil, PoP{})
	ctx := context.Background()
	if _, err := s.StartSession(ctx, app.SessionOwner{Customer: "c", Key: "k"}, 3); !errors.Is(err, app.ErrPoPUnavailable) {
		t.Fatalf("StartSession: %v, want ErrPoPUnavailable", err)
	}
	if _, err := s.Frame(ctx, "c", "id", nil); !errors.Is(err, app.ErrSessionNotFound) {
		t.Fatalf("Frame: %v, want ErrSessionNotFound", err)
	}
	if s.OwnsSession("id", "c") {
		t.Fatal("OwnsSession: true for a service without sessions")
	}
}
