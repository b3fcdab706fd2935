package app

import (
	"context"
	"testing"
	"time"
)

// TestRecheckCountAndCap replays issue 46's recheck pattern: eight
// valid measurements under one uuid within 24 h (eight different
// radiographs, as far as billing can tell). With the spec's behaviour
// (MaxFreeRechecks 0, the default) the first is billed and seven are free
// recheck_24h; with a cap of 3, every fourth is billed and starts a new
// window. Either way each free recheck is counted for the key, and
// ListKeys (what `vetlens keys list` shows) reports the month's count per
// key; another key of the same customer counts its own.
func TestRecheckCountAndCap(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		cap    int
		billed []bool // per call, in order
	}{
		{"no cap (default)", 0, []bool{true, false, false, false, false, false, false, false}},
		{"cap 3", 3, []bool{true, false, false, false, true, false, false, false}},
		{"cap 1", 1, []bool{true, false, true, false, true, false, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newTestService(t, t0)
			rewire(t, s, func(_ *Deps, c *Config) { c.MaxFreeRechecks = tc.cap })
			a := newCaller(t, s, "clinic", "")
			other, _, err := s.Accounts.CreateKey(ctx, "clinic", "")
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Accounts.Authenticate(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			free := 0
			for i, want := range tc.billed {
				clk.Add(time.Minute)
				got := s.Accounts.Meter(ctx, a, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "rex"})
				wantReason := ReasonRecheck
				if want {
					wantReason = ReasonValid
				} else {
					free++
				}
				if got.Billable != want || got.Reason != wantReason {
					t.Fatalf("call %d: %+v, want billable %v (%s)", i+1, got, want, wantReason)
				}
			}
			// The other key's recheck of the same patient counts for it.
			if got := s.Accounts.Meter(ctx, b, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "rex"}); got.Billable && tc.cap == 0 {
				t.Fatalf("other key: %+v, want a recheck", got)
			}
			// A call that is not valid is no recheck, and a USG call never is.
			s.Accounts.Meter(ctx, a, Charge{Service: "cardiac", CallType: CallSingle, Valid: false, UUID: "rex"})
			s.Accounts.Meter(ctx, a, Charge{Service: "usg", CallType: CallUSG, Valid: true, UUID: "rex"})
			ks, err := s.Accounts.ListKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			for _, k := range ks {
				counts[k.Prefix] = k.Rechecks
			}
			wantB := 1
			if tc.cap > 0 { // the pair's free rechecks are used up: b's call was billed
				wantB = 0
			}
			if counts[a.KeyPrefix] != free || counts[b.KeyPrefix] != wantB {
				t.Errorf("rechecks listed %v: want %d for %s, %d for %s", counts, free, a.KeyPrefix, wantB, b.KeyPrefix)
			}
			// A new month starts at zero.
			clk.Set(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
			ks, _ = s.Accounts.ListKeys(ctx)
			for _, k := range ks {
				if k.Rechecks != 0 {
					t.Errorf("next month: %+v", k)
				}
			}
		})
	}
}
