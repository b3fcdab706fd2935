package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestKeysCreateGetRevoke(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	k := Key{Prefix: "abcd1234", Hash: []byte{1, 2, 3}, Customer: "c1", Created: time.Now().UTC()}
	if err := s.Keys().Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys().Create(ctx, k); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate prefix: %v, want ErrExists", err)
	}
	got, err := s.Keys().Get(ctx, "abcd1234")
	if err != nil || got.Customer != "c1" || !got.Active() {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := s.Keys().Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := s.Keys().Revoke(ctx, "abcd1234", time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Keys().Get(ctx, "abcd1234")
	if got.Active() {
		t.Fatal("revoked key still active")
	}
	list, _ := s.Keys().List(ctx)
	if len(list) != 1 {
		t.Fatalf("list: %d keys", len(list))
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// bbolt's flock is per open file description, so a second Open in the
	// same process sees the lock too.
	if _, err := Open(dir, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

func TestBillCountsAndRecheck(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	billAll := func(st BillState) (Event, bool, error) {
		return Event{Time: t0, Tier: "paygo", RateCents: 300}, true, nil
	}
	for i := 1; i <= 3; i++ {
		ev, st, billed, err := s.Ledger().Bill(ctx, BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "p1"}, billAll)
		if err != nil || !billed || ev.MonthlyUsage != i || st.MonthlyUsage != i {
			t.Fatalf("bill %d: %+v %+v %v %v", i, ev, st, billed, err)
		}
	}
	_, st, _, _ := s.Ledger().Bill(ctx, BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: "p1"},
		func(st BillState) (Event, bool, error) { return Event{}, false, nil })
	if st.MonthlyUsage != 3 || !st.LastBilled.Equal(t0) {
		t.Fatalf("state after no-bill: %+v", st)
	}
	for _, tc := range []struct {
		customer, month string
		want            int
	}{{"a", "2026-03", 3}, {"a", "2026-04", 0}, {"b", "2026-03", 0}, {"", "2026-03", 0}} {
		n, err := s.Ledger().MonthlyUsage(ctx, tc.customer, tc.month)
		if err != nil || n != tc.want {
			t.Errorf("MonthlyUsage(%q,%q) = %d, %v; want %d", tc.customer, tc.month, n, err, tc.want)
		}
	}
	evs, _ := s.Ledger().Events(ctx)
	if len(evs) != 3 || evs[2].Seq != 3 {
		t.Fatalf("events: %+v", evs)
	}
}

func TestBillConcurrent(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	var wg sync.WaitGroup
	seen := make(chan int, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, _, _, err := s.Ledger().Bill(ctx, BillRequest{Customer: "c", Month: "2026-01"},
				func(BillState) (Event, bool, error) { return Event{Time: time.Now()}, true, nil })
			if err != nil {
				t.Error(err)
			}
			seen <- ev.MonthlyUsage
		}()
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for n := range seen {
		if got[n] {
			t.Fatalf("monthly_usage %d handed out twice", n)
		}
		got[n] = true
	}
	if len(got) != 100 || !got[1] || !got[100] {
		t.Fatalf("usage values %v", got)
	}
}

func TestHistoryIsolation(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	v := func(x float64) *float64 { return &x }
	s.History().Add(ctx, "a", "dog", HistoryEntry{Time: time.Unix(1, 0), VHS: v(9)}, nil)
	s.History().Add(ctx, "a", "dog", HistoryEntry{Time: time.Unix(2, 0), VHS: v(10)}, nil)
	s.History().Add(ctx, "b", "dog", HistoryEntry{Time: time.Unix(3, 0), VHS: v(11)}, nil)
	s.History().Add(ctx, "a", "dogx", HistoryEntry{Time: time.Unix(3, 0), VHS: v(12)}, nil)
	for _, tc := range []struct {
		customer, uuid string
		want           []float64
	}{{"a", "dog", []float64{9, 10}}, {"b", "dog", []float64{11}}, {"a", "do", nil}, {"c", "dog", nil}} {
		got, err := s.History().List(ctx, tc.customer, tc.uuid)
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

func TestUSGLogAppend(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for i := 0; i < 2; i++ {
		if _, err := s.USGLog().Append(ctx, USGLogEntry{Customer: "a", ClinicCode: "C1", Inputs: []byte(`{}`), Outputs: []byte(`{}`), ModelVersion: "1.6"}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.USGLog().List(ctx)
	if err != nil || len(l) != 2 || l[1].Seq != 2 || l[0].ClinicCode != "C1" {
		t.Fatalf("%+v %v", l, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestPatientQueries(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	v := func(x float64) *float64 { return &x }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.History().Add(ctx, "desktop", "Rex-1", HistoryEntry{Time: time.Unix(30, 0), VHS: v(10), Edited: true, ModelVHS: v(10.4), Source: "desktop"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History().Add(ctx, "lan", "Rex-1", HistoryEntry{Time: time.Unix(10, 0), VHS: v(9)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History().Add(ctx, "lan", "Rex-10", HistoryEntry{Time: time.Unix(20, 0), VHS: v(11)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.History().Add(ctx, "lan", "Bella", HistoryEntry{Time: time.Unix(20, 0), VHS: v(8)}, nil); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"Rex-1", "", "Tom"} {
		_, err := s.USGLog().Append(ctx, USGLogEntry{Customer: "desktop", UUID: u, Inputs: []byte(`{}`), Outputs: []byte(`{}`)})
		must(err)
	}

	got, err := s.History().ListPatient(ctx, "Rex-1")
	must(err)
	if len(got) != 2 || got[0].Customer != "lan" || *got[0].VHS != 9 || got[1].Customer != "desktop" || !got[1].Edited || *got[1].ModelVHS != 10.4 {
		t.Fatalf("ListPatient Rex-1 = %+v", got)
	}
	if none, err := s.History().ListPatient(ctx, "Rex"); err != nil || len(none) != 0 || none == nil {
		t.Fatalf("prefix must not match: %+v %v", none, err)
	}
	usg, err := s.USGLog().ListPatient(ctx, "Rex-1")
	must(err)
	if len(usg) != 1 || usg[0].UUID != "Rex-1" {
		t.Fatalf("USG ListPatient = %+v", usg)
	}
	for _, tc := range []struct {
		query string
		limit int
		want  string
	}{
		{"rex", 0, "Rex-1,Rex-10"},
		{"", 0, "Bella,Rex-1,Rex-10,Tom"},
		{"", 2, "Bella,Rex-1"},
		{"zzz", 0, ""},
	} {
		ids, err := s.PatientIDs(ctx, tc.query, tc.limit)
		must(err)
		if strings.Join(ids, ",") != tc.want {
			t.Errorf("PatientIDs(%q, %d) = %v, want %s", tc.query, tc.limit, ids, tc.want)
		}
	}
}

// TestLegacyDollarAmounts: records written when amounts were float64
// dollars read back as whole cents; new records carry only cents.
func TestLegacyDollarAmounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int64
	}{
		{"legacy rate", `{"seq":1,"customer":"a","tier":"starter","rate":2.5,"monthly_usage":101}`, 250},
		{"legacy rate off by float error", `{"seq":1,"rate":0.29}`, 29},
		{"legacy usg rate", `{"seq":1,"rate":0.5}`, 50},
		{"cents", `{"seq":1,"rate_cents":400}`, 400},
		{"cents win over a stray rate", `{"seq":1,"rate_cents":300,"rate":9.99}`, 300},
		{"free", `{"seq":1,"rate_cents":0}`, 0},
	} {
		var e Event
		if err := json.Unmarshal([]byte(tc.in), &e); err != nil || e.RateCents != tc.want || e.Seq != 1 {
			t.Errorf("%s: %+v %v, want %d cents", tc.name, e, err, tc.want)
		}
	}
	j, _ := json.Marshal(Event{Seq: 2, RateCents: 350})
	if !strings.Contains(string(j), `"rate_cents":350`) || strings.Contains(string(j), `"rate":`) {
		t.Errorf("new event written as %s", j)
	}

	for _, tc := range []struct {
		name                 string
		in                   string
		wantSingle, wantSess int64
	}{
		{"legacy", `{"name":"big","tier":"enterprise","enterprise_single":1.1,"enterprise_session":1.9}`, 110, 190},
		{"cents", `{"name":"big","tier":"enterprise","enterprise_single_cents":120,"enterprise_session_cents":200}`, 120, 200},
		{"defaults", `{"name":"big","tier":"paygo"}`, 0, 0},
	} {
		var c Customer
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil || c.Name != "big" || c.EnterpriseSingleCents != tc.wantSingle || c.EnterpriseSessionCents != tc.wantSess {
			t.Errorf("%s: %+v %v", tc.name, c, err)
		}
	}
}

// TestMonthlyChargesExact: the month's charges are an exact sum of cents
// (ten 10-cent and three 29-cent events: 0.1 and 0.29 have no exact
// float64).
func TestMonthlyChargesExact(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 29, 29, 29} {
		_, _, billed, err := s.Ledger().Bill(ctx, BillRequest{Customer: "a", Month: "2026-03"},
			func(BillState) (Event, bool, error) { return Event{Time: t0, Tier: "paygo", RateCents: c}, true, nil })
		if err != nil || !billed {
			t.Fatalf("bill %d: %v", i, err)
		}
	}
	n, total, err := s.Ledger().MonthlyCharges(ctx, "a", "2026-03")
	if err != nil || n != 13 || total != 187 {
		t.Fatalf("MonthlyCharges = %d, %d, %v; want 13 events, 187 cents", n, total, err)
	}
}
