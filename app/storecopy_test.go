package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"vetlens/app/repo"
)

// fillStore gives s a little of everything: two customers (one on
// contracted enterprise rates), keys, billed and unbilled calls over two
// months, desktop history and USG log entries.
func fillStore(t *testing.T, s *Service, clk *fakeClock) {
	t.Helper()
	ctx := context.Background()
	a := newCaller(t, s, "Clinic A", "")
	b := newCaller(t, s, "Clinic ポチ", TierEnterprise)
	if _, _, err := s.Accounts.CreateKey(ctx, "Clinic A", ""); err != nil {
		t.Fatal(err)
	}
	for i, ch := range []struct {
		c  Caller
		ch Charge
	}{
		{a, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "dog1"}},
		{a, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "dog1"}}, // a week later: billed
		{a, Charge{Service: "cardiac", CallType: CallSession, Valid: true}},
		{b, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "dog1"}},
		{a, Charge{Service: "cardiac", CallType: CallSingle, Valid: false, UUID: "dog2"}},
	} {
		s.Accounts.Meter(ctx, ch.c, ch.ch)
		clk.Add(time.Duration(i+1) * 7 * 24 * time.Hour) // into the next month by the end
	}
	if _, err := s.USG.PredictUSG(ctx, a, nil); err == nil {
		t.Fatal("PredictUSG without an engine succeeded")
	}
	v := 10.5
	// A measurement with its image, a correction of it, one hidden
	// entry, and a patient record: the records' references (supersedes,
	// the audit trail's entries) must follow the copy's numbers.
	if _, err := s.repos.History.Add(ctx, "lan", "dog1", repo.HistoryEntry{Time: clk.Now(), VHS: &v}, nil); err != nil {
		t.Fatal(err)
	}
	first, err := s.repos.History.Add(ctx, "Clinic A", "dog1", repo.HistoryEntry{Time: clk.Now(), VHS: &v, Source: "desktop", Kind: "model"}, []byte("png-1"))
	if err != nil {
		t.Fatal(err)
	}
	w := 11.0
	fix, err := s.repos.History.Add(ctx, "Clinic A", "dog1", repo.HistoryEntry{Time: clk.Now().Add(time.Minute), VHS: &w, Source: "desktop", Kind: "edited",
		Edited: true, ModelVHS: &v, Supersedes: first.Seq}, []byte("png-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.Audit.Append(ctx, repo.AuditEvent{Time: fix.Time, PatientID: "dog1", Action: "corrected", Customer: "Clinic A", Entry: fix.Supersedes}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.History.Hide(ctx, "Clinic A", "dog1", first.Seq, repo.Hidden{Time: fix.Time, Reason: "superseded"},
		repo.AuditEvent{Time: fix.Time, PatientID: "dog1", Action: "hidden", Customer: "Clinic A", Entry: first.Seq, Reason: "superseded"}); err != nil {
		t.Fatal(err)
	}
	if err := s.repos.Patients.Put(ctx, repo.Patient{ID: "dog1", Name: "Rex", Species: "dog", Created: t0, Updated: t0},
		repo.AuditEvent{Time: t0, PatientID: "dog1", Action: "patient_created"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.repos.USGLog.Append(ctx, repo.USGLogEntry{Time: clk.Now(), Customer: "Clinic A", UUID: "cat1", Inputs: json.RawMessage(`{"BUN":27}`), Outputs: json.RawMessage(`{"p":0.2}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.repos.Ledger.Bill(ctx, repo.BillRequest{Customer: "Clinic A", Month: Month(clk.Now()), IdempotencyKey: repo.NewID()},
		func(repo.BillState) (repo.Event, bool, error) {
			return repo.Event{Time: clk.Now(), Service: "usg", CallType: CallUSG, UUID: "cat1", Tier: "paygo", RateCents: 50}, true, nil
		}); err != nil {
		t.Fatal(err)
	}
}

func TestCopyStore(t *testing.T) {
	ctx := context.Background()
	src, clk := newTestService(t, t0)
	fillStore(t, src, clk)
	dst, _ := newTestService(t, t0)
	n, err := CopyStore(ctx, src.repos, dst.repos)
	if err != nil {
		t.Fatal(err)
	}
	if n != (CopyCounts{Keys: 3, Customers: 2, Events: 5, History: 3, USGLog: 1, Patients: 1, Audit: 3}) {
		t.Errorf("copied %+v", n)
	}
	same := func(name string, get func(repo.Repos) (any, error)) {
		t.Helper()
		a, err := get(src.repos)
		if err != nil {
			t.Fatal(err)
		}
		b, err := get(dst.repos)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs:\nsource %+v\ncopy   %+v", name, a, b)
		}
	}
	same("keys", func(r repo.Repos) (any, error) { return r.Keys.List(ctx) })
	same("customer", func(r repo.Repos) (any, error) { return r.Customers.Get(ctx, "Clinic ポチ") })
	same("ledger", func(r repo.Repos) (any, error) { return r.Ledger.Events(ctx) })
	same("history", func(r repo.Repos) (any, error) {
		// The same entries, corrections pointing at the same entry,
		// whatever the numbers.
		es, err := r.History.ListPatient(ctx, "dog1")
		pos := map[uint64]int{}
		for i, e := range es {
			pos[e.Seq] = i + 1
		}
		for i := range es {
			es[i].Seq, es[i].Supersedes = 0, uint64(pos[es[i].Supersedes])
		}
		return es, err
	})
	same("image", func(r repo.Repos) (any, error) {
		es, err := r.History.List(ctx, "Clinic A", "dog1")
		if err != nil || len(es) != 2 {
			return nil, fmt.Errorf("entries %+v, %v", es, err)
		}
		return r.History.Image(ctx, "Clinic A", "dog1", es[0].Seq)
	})
	same("patient", func(r repo.Repos) (any, error) { return r.Patients.Get(ctx, "dog1") })
	trail, err := dst.repos.Audit.ListPatient(ctx, "dog1")
	if err != nil || len(trail) != 4 || trail[3].Action != AuditCopied {
		t.Fatalf("copied audit trail %+v, %v; want the 3 events and copied", trail, err)
	}
	copied, _ := dst.repos.History.List(ctx, "Clinic A", "dog1")
	for _, a := range trail[:3] {
		if a.Action != "patient_created" && (a.Entry != copied[0].Seq || copied[1].Supersedes != copied[0].Seq || copied[0].Hidden == nil) {
			t.Errorf("audit event %+v does not name the copied entry %d", a, copied[0].Seq)
		}
	}
	same("usg log", func(r repo.Repos) (any, error) { return r.USGLog.List(ctx) })
	for _, m := range []string{Month(t0), Month(clk.Now())} {
		same("charges "+m, func(r repo.Repos) (any, error) {
			n, c, err := r.Ledger.MonthlyCharges(ctx, "Clinic A", m)
			return [2]int64{int64(n), c}, err
		})
	}
	// The recheck grace carries over: dog1 was last billed for Clinic A
	// a week after t0, an hour before this time.
	dst.Accounts.clock.(*fakeClock).Set(t0.Add(7*24*time.Hour + time.Hour))
	a, err := dst.Accounts.Authenticate(ctx, mustKey(t, dst, "Clinic A"))
	if err != nil {
		t.Fatal(err)
	}
	if b := dst.Accounts.Meter(ctx, a, Charge{Service: "cardiac", CallType: CallSingle, Valid: true, UUID: "dog1"}); b.Reason != ReasonRecheck {
		t.Errorf("after the copy dog1 is %+v, want recheck_24h", b)
	}
	// A destination with records is refused.
	if _, err := CopyStore(ctx, src.repos, dst.repos); !errors.Is(err, ErrStoreNotEmpty) {
		t.Fatalf("copy into a used store: %v, want ErrStoreNotEmpty", err)
	}
}

// mustKey creates a new key for customer and returns it.
func mustKey(t *testing.T, s *Service, customer string) string {
	t.Helper()
	k, _, err := s.Accounts.CreateKey(context.Background(), customer, "")
	if err != nil {
		t.Fatal(err)
	}
	return k
}
