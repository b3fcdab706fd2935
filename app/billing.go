package app

import (
	"context"
	"fmt"
	"time"

	"vetlens/app/repo"
	"vetlens/engine/cardiac"
)

// Tier is a volume pricing tier.
type Tier string

// Tiers of the spec's table.
const (
	TierPaygo        Tier = "paygo"
	TierStarter      Tier = "starter"
	TierProfessional Tier = "professional"
	TierEnterprise   Tier = "enterprise"
)

// Tiers lists the tiers from lowest to highest.
func Tiers() []Tier { return []Tier{TierPaygo, TierStarter, TierProfessional, TierEnterprise} }

// Valid reports whether t is one of Tiers.
func (t Tier) Valid() bool { return t.rank() >= 0 }

func (t Tier) rank() int {
	for i, x := range Tiers() {
		if x == t {
			return i
		}
	}
	return -1
}

// TierFor is the volume tier of the n-th billable call of a month:
// paygo 0-100, starter 101-500, professional 501-2000, enterprise 2001+.
func TierFor(n int) Tier {
	switch {
	case n <= 100:
		return TierPaygo
	case n <= 500:
		return TierStarter
	case n <= 2000:
		return TierProfessional
	default:
		return TierEnterprise
	}
}

// Rate is a tier's price per call.
type Rate struct {
	Single  Cents
	Session Cents
}

// check reports an amount outside 0..MaxCents.
func (r Rate) check() error {
	for _, c := range []Cents{r.Single, r.Session} {
		if c < 0 || c > MaxCents {
			return fmt.Errorf("%s: %w", c, ErrBadAmount)
		}
	}
	return nil
}

// Call types.
const (
	CallSingle  = "single"
	CallSession = "session"
	CallUSG     = "usg" // ledger only; USG responses carry no billing object
)

// Billing reasons.
const (
	ReasonValid   = "valid_vhs"
	ReasonNoValid = "no_valid_vhs"
	ReasonRecheck = "recheck_24h"
	ReasonError   = "billing_error"
)

// Billing is the spec's billing object. For reason billing_error (the
// ledger could not be written) only billable (false) and reason are sent:
// the caller gets the result free of charge, and usage and tier are not
// claimed because they could not be read. Its JSON (money.go) is the
// spec's: rate a number of dollars.
type Billing struct {
	Billable     bool
	Reason       string
	CallType     string
	MonthlyUsage *int
	Tier         Tier
	// Rate is the amount charged; nil unless billable.
	Rate *Cents
}

// Charge is one outcome to meter.
type Charge struct {
	// Service is "cardiac" or "usg".
	Service string
	// CallType is CallSingle, CallSession or CallUSG.
	CallType string
	// Valid: a valid VHS resulted (cardiac codes 1-4), or the USG call
	// succeeded.
	Valid bool
	// UUID is the patient id; for cardiac calls it selects the 24 h
	// recheck grace (USG calls never get the grace).
	UUID string
}

// ValidCode reports whether a cardiac result code is billable (1-4).
func ValidCode(c cardiac.Code) bool { return c.HasVHS() }

// Month is the UTC calendar month of t, "YYYY-MM": the billing period.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// Meter applies the spec's billing rules to one outcome and, when it is
// billable, appends it to the ledger; the ledger transaction is committed
// before Meter returns, so the response that reports it can be sent.
//
// Rules: only a valid outcome is billed (the desktop customer's own use
// is counted at no charge: the usage statistics, not a bill); a cardiac call with a uuid billed
// for the same customer less than RecheckWindow ago is recheck_24h and not
// billed (the window counts from the last billed call, so repeats do not
// extend it; with Config.MaxFreeRechecks set, only that many per window
// are free, and the next is billed and starts a new window; each free
// recheck is counted for the key, RecheckCount); the tier is the higher of the customer's contracted tier and
// the volume tier of the call's rank in the month (TierFor), counting
// cardiac and USG calls together; the rate is the tier's single or
// session rate (custom for enterprise customers that have one), or the
// flat USG rate. A non-billable outcome reports the current usage and the
// tier of that count. A ledger failure gives reason billing_error.
func (s *Accounts) Meter(ctx context.Context, c Caller, ch Charge) Billing {
	return s.meter(ctx, c, ch, nil)
}

// meter is Meter, also appending log to the USG log in the same commit.
func (s *Accounts) meter(ctx context.Context, c Caller, ch Charge, log *repo.USGLogEntry) Billing {
	now := s.clock.Now().UTC()
	cust, err := s.repos.Customers.Get(ctx, c.Customer)
	if err != nil {
		return Billing{Reason: ReasonError}
	}
	recheck := ""
	if ch.Service != "usg" {
		recheck = ch.UUID
	}
	reason := ReasonNoValid
	ev, st, billed, err := s.repos.Ledger.Bill(ctx,
		// The key names this billable response: a retried Bill (a
		// serialization retry, a commit whose answer was lost) bills once.
		repo.BillRequest{Customer: c.Customer, Month: Month(now), RecheckUUID: recheck, USGLog: log, IdempotencyKey: repo.NewID()},
		func(st repo.BillState) (repo.Event, bool, error) {
			if !ch.Valid {
				reason = ReasonNoValid
				return repo.Event{}, false, nil
			}
			if recheck != "" && !st.LastBilled.IsZero() && now.Sub(st.LastBilled) < s.cfg.RecheckWindow &&
				(s.cfg.MaxFreeRechecks <= 0 || st.Rechecks < s.cfg.MaxFreeRechecks) {
				reason = ReasonRecheck
				// Counted per key and per pair (Ledger.RecheckCount,
				// BillState.Rechecks); never in the ledger.
				return repo.Event{Time: now, KeyPrefix: c.KeyPrefix, UUID: ch.UUID, Recheck: true}, false, nil
			}
			reason = ReasonValid
			tier := s.tier(cust, st.MonthlyUsage+1)
			rate := s.rate(cust, tier, ch.CallType)
			if c.Customer == DesktopCustomer {
				rate = 0 // the clinic's own console: counted for the usage statistics, not charged
			}
			return repo.Event{
				Time: now, KeyPrefix: c.KeyPrefix, Service: ch.Service, CallType: ch.CallType,
				UUID: ch.UUID, Tier: string(tier), RateCents: int64(rate),
			}, true, nil
		})
	if err != nil {
		return Billing{Reason: ReasonError}
	}
	usage := st.MonthlyUsage
	if !billed {
		return Billing{Reason: reason, MonthlyUsage: &usage, Tier: s.tier(cust, usage)}
	}
	rate := Cents(ev.RateCents)
	return Billing{Billable: true, Reason: reason, CallType: ch.CallType, MonthlyUsage: &usage, Tier: Tier(ev.Tier), Rate: &rate}
}

func (s *Accounts) tier(c repo.Customer, n int) Tier {
	t := TierFor(n)
	if ct := Tier(c.Tier); ct.rank() > t.rank() {
		return ct
	}
	return t
}

func (s *Accounts) rate(c repo.Customer, t Tier, callType string) Cents {
	if callType == CallUSG {
		return s.cfg.USGRate
	}
	r := s.cfg.Rates[t]
	if t == TierEnterprise {
		if c.EnterpriseSingleCents > 0 {
			r.Single = Cents(c.EnterpriseSingleCents)
		}
		if c.EnterpriseSessionCents > 0 {
			r.Session = Cents(c.EnterpriseSessionCents)
		}
	}
	if callType == CallSession {
		return r.Session
	}
	return r.Single
}

// MonthlyUsage is the customer's billable calls in the current month,
// read from the ledger.
func (s *Accounts) MonthlyUsage(ctx context.Context, customer string) (int, error) {
	return s.repos.Ledger.MonthlyUsage(ctx, customer, Month(s.clock.Now()))
}

// Statement is a customer's current month: billable calls, the tier the
// next call would be billed at, and the charges so far.
type Statement struct {
	Month   string
	Usage   int
	Tier    Tier
	Charges Cents
}

// MonthlyStatement reads the customer's statement for the current month.
func (s *Accounts) MonthlyStatement(ctx context.Context, customer string) (Statement, error) {
	month := Month(s.clock.Now())
	cust, err := s.repos.Customers.Get(ctx, customer)
	if err != nil {
		return Statement{}, fmt.Errorf("statement %s: %w", customer, err)
	}
	n, total, err := s.repos.Ledger.MonthlyCharges(ctx, customer, month)
	if err != nil {
		return Statement{}, fmt.Errorf("statement %s: %w", customer, err)
	}
	return Statement{Month: month, Usage: n, Tier: s.tier(cust, n+1), Charges: Cents(total)}, nil
}
