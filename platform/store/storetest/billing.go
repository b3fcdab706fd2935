// The billing ledger's part of the contract: Bill, rechecks and the
// monthly counts and charges.

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"vetlens/app/repo"
)

func billAll(ev repo.Event) repo.Decide {
	return func(repo.BillState) (repo.Event, bool, error) { return ev, true, nil }
}

// testRecheckCounts: a decision not to bill marked Recheck counts one
// free recheck for the (customer, uuid) pair, which the next decision
// sees (BillState.Rechecks) until the pair is billed again, and one for
// the key in the month (RecheckCount); nothing reaches the ledger. A
// plain decision not to bill counts nothing.
func testRecheckCounts(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	bill := func(customer, uuid, key, month string, recheck, billed bool) repo.BillState {
		t.Helper()
		var seen repo.BillState
		_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: customer, Month: month, RecheckUUID: uuid, IdempotencyKey: repo.NewID()},
			func(st repo.BillState) (repo.Event, bool, error) {
				seen = st
				ev := repo.Event{Time: t0, KeyPrefix: key, Service: "cardiac", CallType: "single", UUID: uuid, Tier: "paygo", RateCents: 300}
				if !billed {
					return repo.Event{Time: t0, KeyPrefix: key, UUID: uuid, Recheck: recheck}, false, nil
				}
				return ev, true, nil
			})
		must(t, err)
		return seen
	}
	bill("a", "rex", "k1", "2026-03", false, true)
	for i := range 3 {
		if st := bill("a", "rex", "k1", "2026-03", true, false); st.Rechecks != i {
			t.Fatalf("recheck %d: decide saw %d rechecks", i+1, st.Rechecks)
		}
	}
	bill("a", "rex", "k1", "2026-03", false, false) // not a recheck: not counted
	bill("a", "rex", "k2", "2026-04", true, false)  // another key, another month
	if st := bill("a", "rex", "k1", "2026-03", false, true); st.Rechecks != 4 {
		t.Fatalf("before billing again: %d rechecks, want 4", st.Rechecks)
	}
	if st := bill("a", "rex", "k1", "2026-03", true, false); st.Rechecks != 0 {
		t.Fatalf("after billing again: %d rechecks, want 0", st.Rechecks)
	}
	for _, other := range [][2]string{{"a", "max"}, {"b", "rex"}} {
		if st := bill(other[0], other[1], "k3", "2026-03", false, false); st.Rechecks != 0 {
			t.Errorf("%v: %d rechecks, want none (per pair)", other, st.Rechecks)
		}
	}
	for _, tc := range []struct {
		key, month string
		want       int
	}{{"k1", "2026-03", 4}, {"k2", "2026-04", 1}, {"k2", "2026-03", 0}, {"k3", "2026-03", 0}, {"", "2026-03", 0}} {
		if n, err := r.Ledger.RecheckCount(ctx, tc.key, tc.month); err != nil || n != tc.want {
			t.Errorf("RecheckCount(%q, %s) = %d, %v; want %d", tc.key, tc.month, n, err, tc.want)
		}
	}
	evs, err := r.Ledger.Events(ctx)
	must(t, err)
	if len(evs) != 2 {
		t.Fatalf("ledger holds %d events, want the 2 billed", len(evs))
	}
}

func testBillCountsAndRecheck(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	var lastSeq uint64
	for i := 1; i <= 3; i++ {
		var seen repo.BillState
		ev, st, billed, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "p1"},
			func(st repo.BillState) (repo.Event, bool, error) {
				seen = st
				return repo.Event{Time: t0.Add(time.Duration(i) * time.Minute), Service: "cardiac", CallType: "single", UUID: "p1", Tier: "paygo", RateCents: 300}, true, nil
			})
		if err != nil || !billed || ev.MonthlyUsage != i || st.MonthlyUsage != i || ev.Customer != "a" || ev.Seq <= lastSeq {
			t.Fatalf("bill %d: %+v %+v %v %v", i, ev, st, billed, err)
		}
		if seen.MonthlyUsage != i-1 {
			t.Fatalf("bill %d: decide saw usage %d, want %d", i, seen.MonthlyUsage, i-1)
		}
		if want := t0.Add(time.Duration(i-1) * time.Minute); i > 1 && !seen.LastBilled.Equal(want) {
			t.Fatalf("bill %d: decide saw last billed %v, want %v", i, seen.LastBilled, want)
		}
		lastSeq = ev.Seq
	}
	// A decision not to bill appends nothing and reports the state.
	_, st, billed, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "p1"},
		func(repo.BillState) (repo.Event, bool, error) { return repo.Event{}, false, nil })
	if err != nil || billed || st.MonthlyUsage != 3 || !st.LastBilled.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("state after no-bill: %+v %v %v", st, billed, err)
	}
	// The recheck time is per (customer, uuid): another uuid, another
	// customer, or no uuid read none.
	for _, req := range []repo.BillRequest{
		{Customer: "a", Month: "2026-03", RecheckUUID: "p2"},
		{Customer: "b", Month: "2026-03", RecheckUUID: "p1"},
		{Customer: "a", Month: "2026-03"},
	} {
		_, st, _, err := r.Ledger.Bill(ctx, req, func(repo.BillState) (repo.Event, bool, error) { return repo.Event{}, false, nil })
		if err != nil || !st.LastBilled.IsZero() {
			t.Errorf("%+v: last billed %v, %v; want none", req, st.LastBilled, err)
		}
	}
	for _, tc := range []struct {
		customer, month string
		want            int
	}{{"a", "2026-03", 3}, {"a", "2026-04", 0}, {"b", "2026-03", 0}, {"", "2026-03", 0}} {
		n, err := r.Ledger.MonthlyUsage(ctx, tc.customer, tc.month)
		if err != nil || n != tc.want {
			t.Errorf("MonthlyUsage(%q,%q) = %d, %v; want %d", tc.customer, tc.month, n, err, tc.want)
		}
	}
	evs, err := r.Ledger.Events(ctx)
	must(t, err)
	if len(evs) != 3 {
		t.Fatalf("events: %+v", evs)
	}
	for i, e := range evs {
		if e.MonthlyUsage != i+1 || !e.Time.Equal(t0.Add(time.Duration(i+1)*time.Minute)) || e.RateCents != 300 ||
			e.Service != "cardiac" || e.CallType != "single" || e.UUID != "p1" || e.Tier != "paygo" || i > 0 && e.Seq <= evs[i-1].Seq {
			t.Errorf("event %d = %+v", i, e)
		}
	}
}

func testBillIdempotency(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	req := repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "p1", IdempotencyKey: repo.NewID()}
	first, st, billed, err := r.Ledger.Bill(ctx, req, billAll(repo.Event{Time: t0, Tier: "paygo", RateCents: 300}))
	if err != nil || !billed || first.ID != req.IdempotencyKey || st.MonthlyUsage != 1 {
		t.Fatalf("first bill: %+v %+v %v %v", first, st, billed, err)
	}
	calls := 0
	again, st, billed, err := r.Ledger.Bill(ctx, req, func(repo.BillState) (repo.Event, bool, error) {
		calls++
		return repo.Event{Time: t0.Add(time.Hour), RateCents: 999}, true, nil
	})
	if err != nil || !billed || calls != 0 || again.Seq != first.Seq || again.RateCents != 300 || st.MonthlyUsage != 1 {
		t.Fatalf("repeated key: %+v %+v billed=%v decide calls=%d %v; want the first event back", again, st, billed, calls, err)
	}
	// A new key bills again.
	other, st, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", IdempotencyKey: repo.NewID()},
		billAll(repo.Event{Time: t0, RateCents: 300}))
	if err != nil || other.ID == first.ID || st.MonthlyUsage != 2 {
		t.Fatalf("new key: %+v %+v %v", other, st, err)
	}
	// No key: the store makes a distinct one.
	a, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"}, billAll(repo.Event{Time: t0}))
	must(t, err)
	b, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"}, billAll(repo.Event{Time: t0}))
	must(t, err)
	if a.ID == "" || a.ID == b.ID {
		t.Fatalf("store-made ids %q, %q: want two distinct ids", a.ID, b.ID)
	}
	if n, err := r.Ledger.MonthlyUsage(ctx, "a", "2026-03"); err != nil || n != 4 {
		t.Fatalf("usage %d, %v; want 4", n, err)
	}
}

func testBillDecideError(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	boom := errors.New("boom")
	log := &repo.USGLogEntry{Time: t0, Customer: "a", Inputs: json.RawMessage(`{}`), Outputs: json.RawMessage(`{}`)}
	_, _, billed, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", USGLog: log},
		func(repo.BillState) (repo.Event, bool, error) { return repo.Event{Time: t0}, true, boom })
	if !errors.Is(err, boom) || billed {
		t.Fatalf("decide error: billed=%v %v; want the error", billed, err)
	}
	evs, err := r.Ledger.Events(ctx)
	must(t, err)
	logs, err := r.USGLog.List(ctx)
	must(t, err)
	if len(evs) != 0 || len(logs) != 0 {
		t.Fatalf("after a failed decision: %d events, %d log entries; want none", len(evs), len(logs))
	}
}

func testBillConcurrent(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	const n = 60
	var wg sync.WaitGroup
	seen := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "c", Month: "2026-01", IdempotencyKey: repo.NewID()},
				billAll(repo.Event{Time: t0}))
			if err != nil {
				t.Error(err)
			}
			seen <- ev.MonthlyUsage
		}()
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for u := range seen {
		if got[u] {
			t.Fatalf("monthly_usage %d handed out twice", u)
		}
		got[u] = true
	}
	if len(got) != n || !got[1] || !got[n] {
		t.Fatalf("usage values %v", got)
	}
}

func testBillWithUSGLog(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	log := &repo.USGLogEntry{Time: t0, Customer: "a", KeyPrefix: "k1", UUID: "cat", Inputs: json.RawMessage(`{"bun":40}`), Outputs: json.RawMessage(`{"p":0.5}`), ModelVersion: "1.6"}
	ev, _, billed, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", USGLog: log},
		billAll(repo.Event{Time: t0, Service: "usg", CallType: "usg", UUID: "cat", RateCents: 50}))
	if err != nil || !billed || ev.RateCents != 50 || log.Seq == 0 {
		t.Fatalf("bill with log: %+v %v %v, log seq %d", ev, billed, err, log.Seq)
	}
	logs, err := r.USGLog.List(ctx)
	if err != nil || len(logs) != 1 || logs[0].Seq != log.Seq || logs[0].UUID != "cat" || string(logs[0].Outputs) != `{"p":0.5}` || logs[0].ID == "" {
		t.Fatalf("log = %+v, %v", logs, err)
	}
	// USG calls record no recheck time (RecheckUUID empty).
	_, st, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "cat"},
		func(repo.BillState) (repo.Event, bool, error) { return repo.Event{}, false, nil })
	if err != nil || !st.LastBilled.IsZero() || st.MonthlyUsage != 1 {
		t.Fatalf("state %+v, %v; want usage 1 and no recheck time", st, err)
	}
}

// testMonthlyChargesExact: the month's charges are an exact sum of cents
// (ten 10-cent and three 29-cent events: 0.1 and 0.29 have no exact
// float64), and other months and customers do not count.
func testMonthlyChargesExact(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	for i, c := range []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 29, 29, 29} {
		_, _, billed, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"}, billAll(repo.Event{Time: t0, Tier: "paygo", RateCents: c}))
		if err != nil || !billed {
			t.Fatalf("bill %d: %v", i, err)
		}
	}
	for _, req := range []repo.BillRequest{{Customer: "a", Month: "2026-04"}, {Customer: "b", Month: "2026-03"}} {
		_, _, _, err := r.Ledger.Bill(ctx, req, billAll(repo.Event{Time: t0, RateCents: 1000}))
		must(t, err)
	}
	n, total, err := r.Ledger.MonthlyCharges(ctx, "a", "2026-03")
	if err != nil || n != 13 || total != 187 {
		t.Fatalf("MonthlyCharges = %d, %d, %v; want 13 events, 187 cents", n, total, err)
	}
	if n, total, err := r.Ledger.MonthlyCharges(ctx, "nobody", "2026-03"); err != nil || n != 0 || total != 0 {
		t.Fatalf("MonthlyCharges(nobody) = %d, %d, %v", n, total, err)
	}
}

// BenchmarkBill measures billing one customer from 16 goroutines at once
// (every call appends an event): the path each billable response takes.
func BenchmarkBill(b *testing.B, r repo.Repos) {
	ctx := context.Background()
	b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "bench", Month: "2026-03", RecheckUUID: "dog", IdempotencyKey: repo.NewID()},
				billAll(repo.Event{Time: t0, Service: "cardiac", CallType: "single", Tier: "paygo", RateCents: 300})); err != nil {
				b.Fatal(err)
			}
		}
	})
}
