package app

import (
	"context"
	"testing"
	"time"

	"vetlens/engine/cardiac"
)

var t0 = time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)

func TestTierFor(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want Tier
	}{{0, TierPaygo}, {1, TierPaygo}, {100, TierPaygo}, {101, TierStarter}, {500, TierStarter},
		{501, TierProfessional}, {2000, TierProfessional}, {2001, TierEnterprise}, {1 << 30, TierEnterprise}} {
		if got := TierFor(tc.n); got != tc.want {
			t.Errorf("TierFor(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// TestTierChanges bills 2001 calls and checks every tier boundary's
// rate and the usage count, single and session.
func TestTierChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("2001 ledger commits")
	}
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	c := newCaller(t, s, "clinic", "")
	want := map[int]struct {
		tier         Tier
		single, sess Cents
	}{
		1: {TierPaygo, 300, 400}, 100: {TierPaygo, 300, 400}, 101: {TierStarter, 250, 350}, 500: {TierStarter, 250, 350},
		501: {TierProfessional, 200, 300}, 2000: {TierProfessional, 200, 300}, 2001: {TierEnterprise, 150, 250},
	}
	for n := 1; n <= 2001; n++ {
		ct := CallSingle
		if n%2 == 0 {
			ct = CallSession
		}
		b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: ct, Valid: true})
		if !b.Billable || *b.MonthlyUsage != n || b.Reason != ReasonValid || b.CallType != ct {
			t.Fatalf("call %d: %+v", n, b)
		}
		if w, ok := want[n]; ok {
			rate := w.single
			if ct == CallSession {
				rate = w.sess
			}
			if b.Tier != w.tier || *b.Rate != rate {
				t.Errorf("call %d (%s): tier %s rate %v, want %s %v", n, ct, b.Tier, *b.Rate, w.tier, rate)
			}
		}
	}
	if n, _ := s.Accounts.MonthlyUsage(ctx, "clinic"); n != 2001 {
		t.Fatalf("monthly usage %d", n)
	}
	// Custom enterprise rates apply from then on.
	if err := s.Accounts.SetEnterpriseRates(ctx, "clinic", Rate{Single: 110, Session: 190}); err != nil {
		t.Fatal(err)
	}
	if b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true}); *b.Rate != 110 || b.Tier != TierEnterprise {
		t.Fatalf("custom enterprise single: %+v", b)
	}
	if b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSession, Valid: true}); *b.Rate != 190 {
		t.Fatalf("custom enterprise session: %+v", b)
	}
	if err := s.Accounts.SetEnterpriseRates(ctx, "clinic", Rate{Single: -1}); KindOf(err) != KindInvalid {
		t.Fatalf("negative enterprise rate: %v", err)
	}
}

func TestMonthRollover(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC))
	c := newCaller(t, s, "clinic", "")
	for i := 1; i <= 3; i++ {
		if b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true}); *b.MonthlyUsage != i {
			t.Fatalf("jan call %d: %+v", i, b)
		}
	}
	clk.Set(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true})
	if *b.MonthlyUsage != 1 || b.Tier != TierPaygo {
		t.Fatalf("feb first call: %+v", b)
	}
	// A local time zone does not move the month: 2026-02-01 00:30 in
	// UTC+2 is still January in UTC.
	clk.Set(time.Date(2026, 2, 1, 0, 30, 0, 0, time.FixedZone("EET", 2*3600)))
	if n, _ := s.Accounts.MonthlyUsage(ctx, "clinic"); n != 3 {
		t.Fatalf("UTC month of a UTC+2 time: usage %d, want january's 3", n)
	}
}

func TestRecheckGrace(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, t0)
	a := newCaller(t, s, "a", "")
	b := newCaller(t, s, "b", "")
	steps := []struct {
		name    string
		caller  Caller
		uuid    string
		advance time.Duration
		ct      string
		billed  bool
		reason  string
	}{
		{"first", a, "dog1", 0, CallSingle, true, ReasonValid},
		{"repeat at once", a, "dog1", 0, CallSingle, false, ReasonRecheck},
		{"repeat as session", a, "dog1", time.Hour, CallSession, false, ReasonRecheck},
		{"other uuid", a, "dog2", 0, CallSingle, true, ReasonValid},
		{"other customer same uuid", b, "dog1", 0, CallSingle, true, ReasonValid},
		{"no uuid", a, "", 0, CallSingle, true, ReasonValid},
		{"no uuid again", a, "", 0, CallSingle, true, ReasonValid},
		{"just under 24h", a, "dog1", 23*time.Hour - time.Second, CallSingle, false, ReasonRecheck},
		{"24h after the billed call", a, "dog1", time.Second, CallSingle, true, ReasonValid},
		{"grace restarts", a, "dog1", 23 * time.Hour, CallSingle, false, ReasonRecheck},
	}
	for _, st := range steps {
		clk.Add(st.advance)
		got := s.Accounts.Meter(ctx, st.caller, Charge{Service: "cardiac", CallType: st.ct, Valid: true, UUID: st.uuid})
		if got.Billable != st.billed || got.Reason != st.reason {
			t.Errorf("%s: %+v, want billed %v reason %s", st.name, got, st.billed, st.reason)
		}
		if !got.Billable && (got.Rate != nil || got.CallType != "") {
			t.Errorf("%s: unbilled call carries rate or call_type: %+v", st.name, got)
		}
	}
}

func TestUSGFlatRateCountsTowardTier(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	c := newCaller(t, s, "clinic", "")
	for i := 1; i <= 100; i++ {
		b := s.Accounts.Meter(ctx, c, Charge{Service: "usg", CallType: CallUSG, Valid: true, UUID: "cat"})
		if !b.Billable || *b.Rate != DefaultUSGRate {
			t.Fatalf("usg call %d: %+v (uuid must not give a recheck grace)", i, b)
		}
	}
	b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true})
	if b.Tier != TierStarter || *b.Rate != 250 || *b.MonthlyUsage != 101 {
		t.Fatalf("101st call after 100 USG calls: %+v", b)
	}
	if b := s.Accounts.Meter(ctx, c, Charge{Service: "usg", CallType: CallUSG, Valid: true}); *b.Rate != DefaultUSGRate || b.Tier != TierStarter {
		t.Fatalf("usg in starter: %+v", b)
	}
	cfg := DefaultConfig()
	cfg.USGRate = 75
	s2, err := New(Deps{Repos: s.Repos(), Clock: s.Accounts.clock}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b := s2.Accounts.Meter(ctx, c, Charge{Service: "usg", CallType: CallUSG, Valid: true}); *b.Rate != 75 {
		t.Fatalf("configured usg rate: %+v", b)
	}
}

func TestContractedTierFloor(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	c := newCaller(t, s, "big", TierProfessional)
	b := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true})
	if b.Tier != TierProfessional || *b.Rate != 200 {
		t.Fatalf("%+v", b)
	}
	nb := s.Accounts.Meter(ctx, c, Charge{Service: "cardiac", CallType: CallSingle, Valid: false})
	if nb.Tier != TierProfessional || nb.Billable {
		t.Fatalf("%+v", nb)
	}
}

// TestCodesBilling runs every result code through PredictSingle and a
// one-image batch: only 1-4 are billed, and the body's omissions follow
// the spec.
func TestCodesBilling(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, t0)
	c := newCaller(t, s, "clinic", "")
	billed := 0
	for code := 0; code <= 7; code++ {
		clk.Add(time.Minute)
		req := &CardiacRequest{Images: [][]byte{codeImage(t, code)}}
		body, err := s.Cardiac.PredictSingle(ctx, c, req)
		if err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		want := code >= 1 && code <= 4
		if want {
			billed++
		}
		if body.Result.Code != cardiac.Code(code) || body.Billing.Billable != want || *body.Billing.MonthlyUsage != billed {
			t.Errorf("single code %d: code %d billing %+v, want billable %v usage %d", code, body.Result.Code, body.Billing, want, billed)
		}
		if want && (body.Billing.CallType != CallSingle || *body.Billing.Rate != 300) {
			t.Errorf("single code %d: %+v", code, body.Billing)
		}
		if !want && body.Billing.Reason != ReasonNoValid {
			t.Errorf("code %d reason %s", code, body.Billing.Reason)
		}
		if (code == 6) != (body.Historic == nil) {
			t.Errorf("code %d: historic %+v (omitted only on rejection)", code, body.Historic)
		}
		bb, err := s.Cardiac.PredictBatch(ctx, c, &CardiacRequest{Batch: true, Images: [][]byte{codeImage(t, code)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want {
			billed++
		}
		if bb.Billing.Billable != want || *bb.Billing.MonthlyUsage != billed || want && (bb.Billing.CallType != CallSession || *bb.Billing.Rate != 400) {
			t.Errorf("batch code %d: %+v", code, bb.Billing)
		}
	}
	evs, _ := s.Repos().Ledger.Events(ctx)
	if len(evs) != billed || billed != 8 {
		t.Fatalf("ledger has %d events, %d billed responses", len(evs), billed)
	}
}

func TestHistoryPerCustomer(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, t0)
	a := newCaller(t, s, "a", "")
	b := newCaller(t, s, "b", "")
	pred := func(c Caller, uuid string, code int) Historic {
		body, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{codeImage(t, code)}, UUID: uuid, HasUUID: uuid != ""})
		if err != nil {
			t.Fatal(err)
		}
		return *body.Historic
	}
	if got := wireHistoric(pred(a, "", 1).VHS); got != "null" {
		t.Fatalf("no uuid: historic_vhs %s, want null", got)
	}
	if got := wireHistoric(pred(a, "rex", 1).VHS); got != "[]" {
		t.Fatalf("new uuid: %s, want []", got)
	}
	clk.Add(48 * time.Hour)
	got := pred(a, "rex", 4)
	if wireHistoric(got.VHS) != `[["2026-01-15",9.1]]` || wireHistoric(got.VLAS) != `[["2026-01-15",2]]` {
		t.Fatalf("second visit: %+v", got)
	}
	third := pred(a, "rex", 5)
	if wireHistoric(third.VHS) != `[["2026-01-15",9.1],["2026-01-17",9.4]]` || wireHistoric(third.VLAS) != `[["2026-01-15",2]]` {
		t.Fatalf("third visit: %+v", third)
	}
	if got := wireHistoric(pred(b, "rex", 1).VHS); got != "[]" {
		t.Fatalf("customer b sees %s for a's patient", got)
	}
}

// TestCardiacConcurrencyBound: with CardiacConcurrency 1 a second
// prediction waits for the first, and gives up with its context.
func TestCardiacConcurrencyBound(t *testing.T) {
	s, _ := newTestService(t, t0)
	busy, err := s.Cardiac.cardiacSlots.Acquire(context.Background(), "busy") // a prediction in progress
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := newCaller(t, s, "clinic", "")
	_, err = s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{codeImage(t, 1)}})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("prediction ran without a free slot: %v", err)
	}
	busy()
	if _, err := s.Cardiac.PredictSingle(context.Background(), c, &CardiacRequest{Images: [][]byte{codeImage(t, 1)}}); err != nil {
		t.Fatal(err)
	}
}

// TestCardiacSlotsTakeTurnsPerKey: a key with a queue of waiting
// predictions does not keep another key's request waiting behind all of
// them (issue 13, per-key fairness).
func TestCardiacSlotsTakeTurnsPerKey(t *testing.T) {
	s, _ := newTestService(t, t0)
	a := newCaller(t, s, "busy-clinic", "")
	b := newCaller(t, s, "other-clinic", "")
	busy, err := s.Cardiac.cardiacSlots.Acquire(context.Background(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 5)
	run := func(c Caller, name string) {
		// the request path's slot, recording the order predictions run in
		_, err := s.Cardiac.inCardiacSlot(withSlotKey(context.Background(), c), func() (*cardiac.Result, error) {
			ran <- name
			return nil, nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	for i := 0; i < 4; i++ {
		go run(a, "a")
		time.Sleep(20 * time.Millisecond) // queue in this order
	}
	go run(b, "b")
	time.Sleep(50 * time.Millisecond)
	busy()
	var order []string
	for i := 0; i < 5; i++ {
		order = append(order, <-ran)
	}
	for i, name := range order {
		if name == "b" && i > 1 {
			t.Fatalf("slot order %v: the other key waited behind the busy key's queue", order)
		}
	}
}

// TestBillingErrorShape: when the ledger cannot be written the caller
// gets {billable: false, reason: billing_error} and nothing else.
func TestBillingErrorShape(t *testing.T) {
	s, _ := newTestService(t, t0)
	c := newCaller(t, s, "clinic", "")
	testStores[s].Close()
	b := s.Accounts.Meter(context.Background(), c, Charge{Service: "cardiac", CallType: CallSingle, Valid: true})
	if b != (Billing{Reason: ReasonError}) {
		t.Fatalf("%+v", b)
	}
}

func TestMonthlyStatement(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	c := newCaller(t, s, "lan", TierPaygo)
	for i, code := range []int{1, 2, 5, 1} { // three valid singles at $3.00, one invalid
		if _, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{codeImage(t, code)}}); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
	}
	st, err := s.Accounts.MonthlyStatement(ctx, "lan")
	if err != nil {
		t.Fatal(err)
	}
	if st.Month != "2026-03" || st.Usage != 3 || st.Tier != TierPaygo || st.Charges != 900 {
		t.Fatalf("statement %+v", st)
	}
	clk.Add(2 * time.Hour) // April: a fresh month
	if st, err = s.Accounts.MonthlyStatement(ctx, "lan"); err != nil || st.Usage != 0 || st.Charges != 0 || st.Month != "2026-04" {
		t.Fatalf("next month %+v %v", st, err)
	}
	if _, err := s.Accounts.MonthlyStatement(ctx, "nobody"); err == nil {
		t.Fatal("unknown customer must fail")
	}
}
