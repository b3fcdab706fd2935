// Package storetest is the storage contract: one suite of tests that
// every adapter of app/repo's ports must pass (bbolt in platform/store,
// PostgreSQL in platform/store/postgres). Each adapter's own test calls
// Run with a function that opens an empty store.
//
// Times in the suite have whole microseconds: PostgreSQL keeps no finer
// timestamps, and the contract is what both adapters keep.
package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

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
