// Package storetest is the storage contract: one suite of tests that
// every adapter of app/repo's ports must pass (bbolt in platform/store,
// PostgreSQL in platform/store/postgres). Each adapter's own test calls
// Run with a function that opens an empty store.
//
// Times in the suite have whole microseconds: PostgreSQL keeps no finer
// timestamps, and the contract is what both adapters keep.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

// Open opens a new, empty store for one test and arranges its closing
// (t.Cleanup).
type Open func(t *testing.T) repo.Repos

// Run runs the contract against stores made by open, each test on its
// own empty store.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, repo.Repos)
	}{
		{"Keys", testKeys},
		{"Customers", testCustomers},
		{"BillCountsAndRecheck", testBillCountsAndRecheck},
		{"RecheckCounts", testRecheckCounts},
		{"BillIdempotencyKey", testBillIdempotency},
		{"BillDecideErrorAppendsNothing", testBillDecideError},
		{"BillConcurrent", testBillConcurrent},
		{"BillWithUSGLog", testBillWithUSGLog},
		{"MonthlyChargesExact", testMonthlyChargesExact},
		{"HistoryIsolation", testHistoryIsolation},
		{"HistoryRoundTrip", testHistoryRoundTrip},
		{"USGLog", testUSGLog},
		{"PatientQueries", testPatientQueries},
		{"RecordIDsSortByTime", testRecordIDs},
		{"KeyPartLimit", testPartLimit},
		{"PatientRecordsAndAudit", testPatientRecordsAndAudit},
		{"OlderPatientIDsReadBack", testOlderPatientIDs},
		{"HistoryImagesAndHide", testHistoryImagesAndHide},
		{"USGLogHide", testUSGLogHide},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open(t)) })
	}
}

// t0 is a fixed time with whole microseconds.
var t0 = time.Date(2026, 3, 31, 23, 0, 0, 123456000, time.UTC)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fp(x float64) *float64 { return &x }

// addEntry adds a history entry without an image and returns it as
// stored.
func addEntry(t *testing.T, r repo.Repos, customer, uuid string, e repo.HistoryEntry) repo.HistoryEntry {
	t.Helper()
	got, err := r.History.Add(context.Background(), customer, uuid, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func testKeys(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	k := repo.Key{Prefix: "bbbb2222", Hash: []byte{1, 2, 3}, Customer: "c1", Created: t0}
	must(t, r.Keys.Create(ctx, k))
	must(t, r.Keys.Create(ctx, repo.Key{Prefix: "aaaa1111", Hash: []byte{9}, Customer: "c2", Created: t0.Add(time.Second)}))
	if err := r.Keys.Create(ctx, repo.Key{Prefix: "bbbb2222", Customer: "other", Created: t0}); !errors.Is(err, repo.ErrExists) {
		t.Fatalf("duplicate prefix: %v, want ErrExists", err)
	}
	got, err := r.Keys.Get(ctx, "bbbb2222")
	if err != nil || !reflect.DeepEqual(normKey(got), normKey(k)) || !got.Active() {
		t.Fatalf("get = %+v, %v; want %+v", got, err, k)
	}
	if _, err := r.Keys.Get(ctx, "nope"); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("missing key: %v, want ErrNotFound", err)
	}
	if _, err := r.Keys.Revoke(ctx, "nope", t0); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("revoke missing key: %v, want ErrNotFound", err)
	}
	rt := t0.Add(time.Hour)
	rev, err := r.Keys.Revoke(ctx, "bbbb2222", rt)
	if err != nil || rev.Active() || !rev.Revoked.Equal(rt) {
		t.Fatalf("revoke = %+v, %v", rev, err)
	}
	// Revoking again keeps the first time.
	rev, err = r.Keys.Revoke(ctx, "bbbb2222", rt.Add(time.Hour))
	if err != nil || !rev.Revoked.Equal(rt) {
		t.Fatalf("second revoke = %+v, %v; want revoked at %v", rev, err, rt)
	}
	got, err = r.Keys.Get(ctx, "bbbb2222")
	if err != nil || got.Active() || !got.Revoked.Equal(rt) {
		t.Fatalf("after revoke: %+v, %v", got, err)
	}
	list, err := r.Keys.List(ctx)
	if err != nil || len(list) != 2 || list[0].Prefix != "aaaa1111" || list[1].Prefix != "bbbb2222" || list[1].Active() {
		t.Fatalf("list = %+v, %v; want both keys by prefix", list, err)
	}
}

// normKey makes times comparable with reflect.DeepEqual.
func normKey(k repo.Key) repo.Key {
	k.Created = k.Created.UTC()
	if k.Revoked != nil {
		r := k.Revoked.UTC()
		k.Revoked = &r
	}
	return k
}

func testCustomers(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	if _, err := r.Customers.Get(ctx, "big"); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("missing customer: %v, want ErrNotFound", err)
	}
	for _, c := range []repo.Customer{
		{Name: "big", Tier: "paygo", Created: t0},
		{Name: "big", Tier: "enterprise", EnterpriseSingleCents: 110, EnterpriseSessionCents: 190, Created: t0},
		{Name: "Clinic São Paulo ポチ", Tier: "starter", Created: t0.Add(time.Minute)},
	} {
		must(t, r.Customers.Put(ctx, c))
		got, err := r.Customers.Get(ctx, c.Name)
		got.Created = got.Created.UTC()
		if err != nil || got != c {
			t.Fatalf("get after put = %+v, %v; want %+v", got, err, c)
		}
	}
}

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

func testHistoryIsolation(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: time.Unix(1, 0), VHS: fp(9)})
	addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: time.Unix(2, 0), VHS: fp(10)})
	addEntry(t, r, "b", "dog", repo.HistoryEntry{Time: time.Unix(3, 0), VHS: fp(11)})
	addEntry(t, r, "a", "dogx", repo.HistoryEntry{Time: time.Unix(3, 0), VHS: fp(12)})
	for _, tc := range []struct {
		customer, uuid string
		want           []float64
	}{{"a", "dog", []float64{9, 10}}, {"b", "dog", []float64{11}}, {"a", "do", nil}, {"c", "dog", nil}} {
		got, err := r.History.List(ctx, tc.customer, tc.uuid)
		if err != nil || got == nil || len(got) != len(tc.want) {
			t.Fatalf("%s/%s: %+v %v", tc.customer, tc.uuid, got, err)
		}
		for i, e := range got {
			if *e.VHS != tc.want[i] {
				t.Errorf("%s/%s[%d] = %v want %v", tc.customer, tc.uuid, i, *e.VHS, tc.want[i])
			}
		}
	}
}

// testHistoryRoundTrip: every field of an entry comes back as stored,
// including nanoseconds of its time and nil against zero values.
func testHistoryRoundTrip(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	full := repo.HistoryEntry{
		Time: time.Date(2026, 5, 1, 8, 30, 0, 123456789, time.UTC), VHS: fp(10.25), VLAS: fp(2.1),
		Source: "desktop", Kind: "edited", Edited: true, ModelVHS: fp(10.4), ModelVLAS: nil,
		Code: 2, Confidence: "high", ModelVersion: "3.1.0", Landmarks: [][2]float64{{1.5, 2.25}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14.125}},
	}
	bare := repo.HistoryEntry{Time: full.Time.Add(time.Second)}
	addEntry(t, r, "a", "Rex ポチ", full)
	addEntry(t, r, "a", "Rex ポチ", bare)
	got, err := r.History.List(ctx, "a", "Rex ポチ")
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("got %d entries", len(got))
	}
	for i, want := range []repo.HistoryEntry{full, bare} {
		if _, err := uuid.Parse(got[i].ID); err != nil {
			t.Errorf("entry %d id %q: %v", i, got[i].ID, err)
		}
		g := got[i]
		if g.Seq == 0 || i > 0 && g.Seq <= got[i-1].Seq {
			t.Errorf("entry %d seq %d", i, g.Seq)
		}
		g.ID, g.Seq = "", 0
		if !g.Time.Equal(want.Time) {
			t.Errorf("entry %d time %v, want %v", i, g.Time, want.Time)
		}
		g.Time = want.Time
		if !reflect.DeepEqual(g, want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, want)
		}
	}
}

func testUSGLog(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	// Inputs and outputs come back as the same JSON text, key order and
	// number spelling kept (insignificant space may go).
	in := json.RawMessage(`{"z": 1, "a":[1.50,2]}`)
	compact := func(b []byte) string {
		var out bytes.Buffer
		if err := json.Compact(&out, b); err != nil {
			return "invalid JSON: " + err.Error()
		}
		return out.String()
	}
	var appended []repo.USGLogEntry
	for i, u := range []string{"cat", "", "cat"} {
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Time: t0.Add(time.Duration(i) * time.Second), Customer: "a", KeyPrefix: "k1", ClinicCode: "C1", UUID: u, Inputs: in, Outputs: json.RawMessage(`{}`), ModelVersion: "1.6"})
		must(t, err)
		if e.Seq == 0 || e.ID == "" || i > 0 && e.Seq <= appended[i-1].Seq {
			t.Fatalf("append %d: %+v", i, e)
		}
		appended = append(appended, e)
	}
	l, err := r.USGLog.List(ctx)
	must(t, err)
	if len(l) != 3 {
		t.Fatalf("list: %+v", l)
	}
	for i, e := range l {
		w := appended[i]
		if e.Seq != w.Seq || e.ID != w.ID || !e.Time.Equal(w.Time) || e.Customer != "a" || e.KeyPrefix != "k1" || e.ClinicCode != "C1" ||
			e.UUID != w.UUID || compact(e.Inputs) != `{"z":1,"a":[1.50,2]}` || compact(e.Outputs) != "{}" || e.ModelVersion != "1.6" {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
	p, err := r.USGLog.ListPatient(ctx, "cat")
	if err != nil || len(p) != 2 || p[0].Seq != appended[0].Seq || p[1].Seq != appended[2].Seq {
		t.Fatalf("ListPatient(cat) = %+v, %v", p, err)
	}
	if none, err := r.USGLog.ListPatient(ctx, "ca"); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("ListPatient(ca) = %+v, %v; want empty", none, err)
	}
}

func testPatientQueries(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	addEntry(t, r, "desktop", "Rex-1", repo.HistoryEntry{Time: time.Unix(30, 0), VHS: fp(10), Edited: true, ModelVHS: fp(10.4), Source: "desktop"})
	addEntry(t, r, "lan", "Rex-1", repo.HistoryEntry{Time: time.Unix(10, 0), VHS: fp(9)})
	addEntry(t, r, "lan", "Rex-10", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(11)})
	addEntry(t, r, "lan", "Bella", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(8)})
	addEntry(t, r, "lan", "bob", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(8)})
	for _, u := range []string{"Rex-1", "", "Tom"} {
		_, err := r.USGLog.Append(ctx, repo.USGLogEntry{Customer: "desktop", UUID: u, Inputs: json.RawMessage(`{}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
	}
	got, err := r.History.ListPatient(ctx, "Rex-1")
	must(t, err)
	if len(got) != 2 || got[0].Customer != "lan" || *got[0].VHS != 9 || got[1].Customer != "desktop" || !got[1].Edited || *got[1].ModelVHS != 10.4 {
		t.Fatalf("ListPatient Rex-1 = %+v", got)
	}
	if none, err := r.History.ListPatient(ctx, "Rex"); err != nil || len(none) != 0 || none == nil {
		t.Fatalf("prefix must not match: %+v %v", none, err)
	}
	for _, tc := range []struct {
		query string
		limit int
		want  string
	}{
		{"rex", 0, "Rex-1,Rex-10"},
		{"REX-1", 1, "Rex-1"},
		// Byte order: upper case before lower case.
		{"", 0, "Bella,Rex-1,Rex-10,Tom,bob"},
		{"", 2, "Bella,Rex-1"},
		{"zzz", 0, ""},
	} {
		ids, err := r.Patients.PatientIDs(ctx, tc.query, tc.limit)
		must(t, err)
		if joinIDs(ids) != tc.want {
			t.Errorf("PatientIDs(%q, %d) = %v, want %s", tc.query, tc.limit, ids, tc.want)
		}
	}
}

// testRecordIDs: ledger events, history entries and USG log entries
// carry distinct UUIDv7 ids, which sort in the order they were made.
func testRecordIDs(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	var ids []string
	for i := 0; i < 3; i++ {
		ev, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"}, billAll(repo.Event{Time: t0}))
		must(t, err)
		ids = append(ids, ev.ID)
		addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: t0})
		h, err := r.History.List(ctx, "a", "dog")
		must(t, err)
		ids = append(ids, h[len(h)-1].ID)
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Customer: "a", Inputs: json.RawMessage(`{}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
		ids = append(ids, e.ID)
		time.Sleep(2 * time.Millisecond) // UUIDv7 orders by millisecond
	}
	seen := map[string]bool{}
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil || id.Version() != 7 || seen[s] {
			t.Fatalf("id %d %q: version %d, %v, duplicate %v", i, s, id.Version(), err, seen[s])
		}
		seen[s] = true
	}
	// The 2 ms pauses separate the rounds; within a round the order is
	// the order of creation too (the generator is monotonic).
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("ids not in creation order: %v", ids)
	}
}

func testPartLimit(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	long := strings.Repeat("x", repo.MaxPartLen+1)
	ok := strings.Repeat("x", repo.MaxPartLen)
	for _, tc := range []struct {
		name string
		f    func(string) error
	}{
		{"customer", func(s string) error { return r.Customers.Put(ctx, repo.Customer{Name: s, Tier: "paygo", Created: t0}) }},
		{"history uuid", func(s string) error {
			_, err := r.History.Add(ctx, "a", s, repo.HistoryEntry{Time: t0}, nil)
			return err
		}},
		{"bill customer", func(s string) error {
			_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: s, Month: "2026-03"}, billAll(repo.Event{Time: t0}))
			return err
		}},
		{"recheck uuid", func(s string) error {
			_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: s}, billAll(repo.Event{Time: t0}))
			return err
		}},
	} {
		if err := tc.f(ok); err != nil {
			t.Errorf("%s of %d bytes: %v", tc.name, len(ok), err)
		}
		if err := tc.f(long); err == nil || !strings.Contains(err.Error(), fmt.Sprint(repo.MaxPartLen)) {
			t.Errorf("%s of %d bytes: %v, want the limit error", tc.name, len(long), err)
		}
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

func testPatientRecordsAndAudit(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	w := 12.5
	for _, p := range []repo.Patient{
		{ID: "Rex-1", Name: "Rex", Species: "dog", WeightKg: &w, Created: t0, Updated: t0},
		{ID: "Tom-2", Name: "Tom", Species: "cat", Created: t0, Updated: t0},
		{ID: "B-3", Name: "Rexana", Created: t0, Updated: t0},
	} {
		must(t, r.Patients.Put(ctx, p, repo.AuditEvent{Time: t0, PatientID: p.ID, Action: "patient_created"}))
	}
	if err := r.Patients.Put(ctx, repo.Patient{}, repo.AuditEvent{}); err == nil {
		t.Fatal("a record without an id was stored")
	}
	if _, err := r.Patients.Get(ctx, "Rex"); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("missing record: %v, want ErrNotFound", err)
	}
	upd := repo.Patient{ID: "Rex-1", Name: "Rex II", Species: "dog", Breed: "Cavalier King Charles Spaniel", Sex: "male_neutered",
		BirthDate: "2019-05-01", WeightKg: &w, Owner: "Müller", Created: t0, Updated: t0.Add(time.Hour)}
	must(t, r.Patients.Put(ctx, upd, repo.AuditEvent{Time: t0.Add(time.Hour), PatientID: "Rex-1", Action: "patient_updated", Detail: "name"}))
	p, err := r.Patients.Get(ctx, "Rex-1")
	p.Created, p.Updated = p.Created.UTC(), p.Updated.UTC()
	if err != nil || !reflect.DeepEqual(p, upd) {
		t.Fatalf("get = %+v, %v; want %+v", p, err, upd)
	}
	for _, tc := range []struct {
		q     string
		limit int
		want  string
	}{{"rex", 0, "B-3,Rex-1"}, {"TOM", 0, "Tom-2"}, {" rex ii ", 0, "Rex-1"}, {"", 2, "B-3,Rex-1"}, {"zzz", 0, ""}} {
		got, err := r.Patients.Search(ctx, tc.q, tc.limit)
		must(t, err)
		ids := make([]patient.ID, len(got))
		for i, p := range got {
			ids[i] = p.ID
		}
		if joinIDs(ids) != tc.want {
			t.Errorf("Search(%q, %d) = %v, want %s", tc.q, tc.limit, ids, tc.want)
		}
	}
	// A record alone makes its id findable.
	if ids, err := r.Patients.PatientIDs(ctx, "tom", 0); err != nil || joinIDs(ids) != "Tom-2" {
		t.Fatalf("PatientIDs(tom) = %v, %v", ids, err)
	}
	e, err := r.Audit.Append(ctx, repo.AuditEvent{Time: t0, PatientID: "Tom-2", Action: "corrected", Customer: "desktop", Entry: 7, Reason: "landmark"})
	if err != nil || e.Seq == 0 {
		t.Fatalf("append %+v, %v", e, err)
	}
	trail, err := r.Audit.ListPatient(ctx, "Rex-1")
	if err != nil || len(trail) != 2 || trail[0].Action != "patient_created" || trail[1].Action != "patient_updated" || trail[1].Detail != "name" || trail[1].Seq <= trail[0].Seq {
		t.Fatalf("audit of Rex-1 = %+v, %v", trail, err)
	}
	tom, err := r.Audit.ListPatient(ctx, "Tom-2")
	if err != nil || len(tom) != 2 || tom[1].Seq != e.Seq || tom[1].Entry != 7 || tom[1].Reason != "landmark" || !tom[1].Time.Equal(t0) {
		t.Fatalf("audit of Tom-2 = %+v, %v", tom, err)
	}
	if other, err := r.Audit.ListPatient(ctx, "Rex"); err != nil || other == nil || len(other) != 0 {
		t.Fatalf("audit of a prefix = %+v, %v; want empty", other, err)
	}
}

func testHistoryImagesAndHide(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	img := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	e, err := r.History.Add(ctx, "desktop", "Rex-1", repo.HistoryEntry{Time: t0, VHS: fp(10)}, img)
	if err != nil || e.Seq == 0 || !e.HasImage {
		t.Fatalf("add with image: %+v, %v", e, err)
	}
	plain := addEntry(t, r, "desktop", "Rex-1", repo.HistoryEntry{Time: t0.Add(time.Minute)})
	other := addEntry(t, r, "lan", "Rex-1", repo.HistoryEntry{Time: t0})
	if plain.HasImage || plain.Seq == e.Seq || other.Seq == plain.Seq {
		t.Fatalf("entries %+v %+v %+v: want distinct seqs, no image", e, plain, other)
	}
	if got, err := r.History.Image(ctx, "desktop", "Rex-1", e.Seq); err != nil || !bytes.Equal(got, img) {
		t.Fatalf("image = %v, %v", got, err)
	}
	for _, tc := range []struct {
		customer, uuid string
		seq            uint64
	}{{"desktop", "Rex-1", plain.Seq}, {"lan", "Rex-1", e.Seq}, {"desktop", "Rex", e.Seq}, {"desktop", "Rex-1", 9999}} {
		if _, err := r.History.Image(ctx, tc.customer, tc.uuid, tc.seq); !errors.Is(err, repo.ErrNotFound) {
			t.Errorf("Image(%s, %s, %d): %v, want ErrNotFound", tc.customer, tc.uuid, tc.seq, err)
		}
	}
	h := repo.Hidden{Time: t0.Add(time.Hour), Reason: "duplicate"}
	got, err := r.History.Hide(ctx, "desktop", "Rex-1", e.Seq, h, repo.AuditEvent{Time: h.Time, PatientID: "Rex-1", Action: "hidden", Customer: "desktop", Entry: e.Seq, Reason: "duplicate"})
	if err != nil || got.Hidden == nil || got.Hidden.Reason != "duplicate" || got.Seq != e.Seq || *got.VHS != 10 {
		t.Fatalf("hide = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		customer, uuid string
		seq            uint64
	}{{"desktop", "Rex-1", 9999}, {"lan", "Rex-1", e.Seq}} {
		if _, err := r.History.Hide(ctx, tc.customer, tc.uuid, tc.seq, h, repo.AuditEvent{PatientID: "Rex-1", Action: "hidden"}); !errors.Is(err, repo.ErrNotFound) {
			t.Errorf("Hide(%s, %s, %d): %v, want ErrNotFound", tc.customer, tc.uuid, tc.seq, err)
		}
	}
	list, err := r.History.List(ctx, "desktop", "Rex-1")
	if err != nil || len(list) != 2 || list[0].Seq != e.Seq || list[0].Hidden == nil || !list[0].Hidden.Time.Equal(h.Time) ||
		list[1].Hidden != nil || !list[0].HasImage || list[0].ID != e.ID {
		t.Fatalf("after hide: %+v, %v", list, err)
	}
	// The image stays; the audit trail has the one hide (the refused
	// ones appended nothing).
	if _, err := r.History.Image(ctx, "desktop", "Rex-1", e.Seq); err != nil {
		t.Fatalf("image after hide: %v", err)
	}
	trail, err := r.Audit.ListPatient(ctx, "Rex-1")
	if err != nil || len(trail) != 1 || trail[0].Action != "hidden" || trail[0].Entry != e.Seq {
		t.Fatalf("audit = %+v, %v", trail, err)
	}
}

// testUSGLogHide: a hidden screening keeps its place and values in the
// log, carries the mark, and the audit trail records it.
func testUSGLogHide(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	var seqs []uint64
	for i := 0; i < 2; i++ {
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Time: t0, Customer: "desktop", UUID: "cat", Inputs: json.RawMessage(`{"BUN":27}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
		seqs = append(seqs, e.Seq)
	}
	h := repo.Hidden{Time: t0.Add(time.Hour), Reason: "wrong patient"}
	got, err := r.USGLog.Hide(ctx, seqs[0], h, repo.AuditEvent{Time: h.Time, PatientID: "cat", Action: "hidden", Reason: h.Reason})
	if err != nil || got.Seq != seqs[0] || got.Hidden == nil || got.Hidden.Reason != h.Reason || got.UUID != "cat" {
		t.Fatalf("hide = %+v, %v", got, err)
	}
	if _, err := r.USGLog.Hide(ctx, seqs[1]+100, h, repo.AuditEvent{PatientID: "cat", Action: "hidden"}); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("hide of a missing entry: %v, want ErrNotFound", err)
	}
	list, err := r.USGLog.ListPatient(ctx, "cat")
	if err != nil || len(list) != 2 || list[0].Hidden == nil || !list[0].Hidden.Time.Equal(h.Time) || list[1].Hidden != nil || string(list[0].Inputs) != `{"BUN":27}` {
		t.Fatalf("after hide: %+v, %v", list, err)
	}
	trail, err := r.Audit.ListPatient(ctx, "cat")
	if err != nil || len(trail) != 1 || trail[0].Reason != h.Reason {
		t.Fatalf("audit = %+v, %v", trail, err)
	}
}

// joinIDs is the ids joined with commas.
func joinIDs(ids []patient.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}

// testOlderPatientIDs: reads do not apply the patient id rule again
// (patient.ID). Versions before the identifier rule was tightened stored
// ids it now refuses (a bidi override; an API uuid over 128 bytes): their
// records, history and audit trail still read back under those ids.
func testOlderPatientIDs(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	for _, id := range []patient.ID{"old\u202eid", patient.ID("old-" + strings.Repeat("u", 200))} {
		must(t, r.Patients.Put(ctx, repo.Patient{ID: id, Name: "Old", Created: t0, Updated: t0},
			repo.AuditEvent{Time: t0, PatientID: id, Action: "patient_created"}))
		if _, err := r.History.Add(ctx, "desktop", id.String(), repo.HistoryEntry{Time: t0}, nil); err != nil {
			t.Fatalf("history for %q: %v", id, err)
		}
		if p, err := r.Patients.Get(ctx, id); err != nil || p.ID != id {
			t.Fatalf("Get(%q) = %+v, %v", id, p, err)
		}
		if h, err := r.History.ListPatient(ctx, id); err != nil || len(h) != 1 {
			t.Fatalf("History.ListPatient(%q) = %+v, %v", id, h, err)
		}
		if a, err := r.Audit.ListPatient(ctx, id); err != nil || len(a) != 1 || a[0].PatientID != id {
			t.Fatalf("Audit.ListPatient(%q) = %+v, %v", id, a, err)
		}
	}
	ids, err := r.Patients.PatientIDs(ctx, "old", 0)
	if want := "old-" + strings.Repeat("u", 200) + ",old\u202eid"; err != nil || joinIDs(ids) != want {
		t.Fatalf("PatientIDs(old) = %q, %v; want %q", ids, err, want)
	}
	if ps, err := r.Patients.Search(ctx, "old", 0); err != nil || len(ps) != 2 {
		t.Fatalf("Search(old) = %+v, %v", ps, err)
	}
}
