package app

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"vetlens/app/repo"
)

// replayLedger bills every request twice, as a store retrying a commit
// whose answer was lost would, and records the keys it was given.
type replayLedger struct {
	repo.Ledger
	keys []string
}

func (l *replayLedger) Bill(ctx context.Context, req repo.BillRequest, d repo.Decide) (repo.Event, repo.BillState, bool, error) {
	l.keys = append(l.keys, req.IdempotencyKey)
	if _, _, _, err := l.Ledger.Bill(ctx, req, d); err != nil {
		return repo.Event{}, repo.BillState{}, false, err
	}
	return l.Ledger.Bill(ctx, req, d)
}

// TestMeterIdempotencyKey: each billable response gets its own UUIDv7
// key, so a replayed Bill appends nothing and answers the same rank.
func TestMeterIdempotencyKey(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	led := &replayLedger{Ledger: s.repos.Ledger}
	s.repos.Ledger = led
	c := newCaller(t, s, "a", "")
	for i, ch := range []Charge{
		{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "dog1"},
		{Service: "cardiac", CallType: CallSingle, Valid: true},
		{Service: "usg", CallType: CallUSG, Valid: true, UUID: "cat"},
	} {
		b := s.Accounts.Meter(ctx, c, ch)
		if !b.Billable || b.MonthlyUsage == nil || *b.MonthlyUsage != i+1 {
			t.Fatalf("call %d: %+v, want billed at rank %d", i, b, i+1)
		}
	}
	evs, err := led.Events(ctx)
	if err != nil || len(evs) != 3 {
		t.Fatalf("ledger %d events, %v; want 3 (replays append nothing)", len(evs), err)
	}
	seen := map[string]bool{}
	for i, k := range led.keys {
		id, err := uuid.Parse(k)
		if err != nil || id.Version() != 7 || seen[k] {
			t.Fatalf("key %d %q: %v, version %d, repeated %v", i, k, err, id.Version(), seen[k])
		}
		seen[k] = true
		if evs[i].ID != k {
			t.Errorf("event %d id %q, want its key %q", i, evs[i].ID, k)
		}
	}
}
