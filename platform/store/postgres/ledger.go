package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/repo"
)

// maxBillAttempts bounds Bill's retries of a transaction that failed in
// a way a retry may cure (retryable).
const maxBillAttempts = 8

// ledger is repo.Ledger on the append-only ledger table.
type ledger struct{ db *pgxpool.Pool }

// customerLock is the advisory lock key that serializes one customer's
// billing across every process on the database (a 64-bit FNV-1a hash;
// two customers that share a key only wait for each other).
func customerLock(customer string) int64 {
	h := fnv.New64a()
	h.Write([]byte("vetlens/ledger\x00"))
	h.Write([]byte(customer))
	return int64(h.Sum64())
}

// errDecide marks an error from the caller's decision, never retried.
type errDecide struct{ err error }

func (e errDecide) Error() string { return e.err.Error() }
func (e errDecide) Unwrap() error { return e.err }

// Bill runs the decision in one transaction: it takes the customer's
// advisory lock (held until commit, so a second server billing the same
// customer waits and then sees this event), returns the recorded event
// when the idempotency key is already in the ledger, appends the USG log
// entry, reads the month's count and the last billed time for the
// recheck uuid, calls decide and appends the event. It returns after
// COMMIT, so an acknowledged event is durable. Retryable failures run
// the whole transaction again (decide may run more than once).
func (s ledger) Bill(ctx context.Context, req repo.BillRequest, decide repo.Decide) (repo.Event, repo.BillState, bool, error) {
	if err := checkParts(req.Customer, req.RecheckUUID); err != nil {
		return repo.Event{}, repo.BillState{}, false, err
	}
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = repo.NewID()
	}
	if req.USGLog != nil && req.USGLog.ID == "" {
		req.USGLog.ID = repo.NewID()
	}
	for attempt := 1; ; attempt++ {
		ev, st, billed, err := s.billOnce(ctx, req, decide)
		if err == nil {
			return ev, st, billed, nil
		}
		var de errDecide
		if errors.As(err, &de) || !retryable(err) || attempt == maxBillAttempts || ctx.Err() != nil {
			if errors.As(err, &de) {
				err = de.err
			}
			return repo.Event{}, repo.BillState{}, false, fmt.Errorf("postgres: bill %q: %w", req.Customer, err)
		}
		// Back off a little, with jitter, before running it again.
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * time.Duration(1+rand.IntN(5)) * time.Millisecond):
		}
	}
}

const eventColumns = `seq, id::text, time, customer, key_prefix, service, call_type, uuid, tier, rate_cents, monthly_usage`

func scanEvent(row pgx.Row) (repo.Event, error) {
	var e repo.Event
	err := row.Scan(&e.Seq, &e.ID, &e.Time, &e.Customer, &e.KeyPrefix, &e.Service, &e.CallType, &e.UUID, &e.Tier, &e.RateCents, &e.MonthlyUsage)
	e.Time = e.Time.UTC()
	return e, err
}

func (s ledger) billOnce(ctx context.Context, req repo.BillRequest, decide repo.Decide) (repo.Event, repo.BillState, bool, error) {
	var (
		ev repo.Event
		st repo.BillState
	)
	tx, err := s.db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return ev, st, false, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	// Every statement after the lock reads a snapshot that includes the
	// previous holder's commit.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, customerLock(req.Customer)); err != nil {
		return ev, st, false, fmt.Errorf("lock customer: %w", err)
	}
	prev, err := scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM ledger WHERE id = $1`, req.IdempotencyKey))
	switch {
	case err == nil:
		// Billed before (a retry whose first commit went through).
		st.MonthlyUsage = prev.MonthlyUsage
		return prev, st, true, tx.Commit(ctx)
	case !errors.Is(err, pgx.ErrNoRows):
		return ev, st, false, fmt.Errorf("idempotency key: %w", err)
	}
	if req.USGLog != nil {
		if err := appendUSG(ctx, tx, req.USGLog); err != nil {
			return ev, st, false, fmt.Errorf("usg log: %w", err)
		}
	}
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM ledger WHERE customer = $1 AND month = $2`,
		req.Customer, req.Month).Scan(&st.MonthlyUsage); err != nil {
		return ev, st, false, fmt.Errorf("monthly usage: %w", err)
	}
	if req.RecheckUUID != "" {
		var last *time.Time
		if err := tx.QueryRow(ctx, `SELECT max(time) FROM ledger WHERE customer = $1 AND recheck_uuid = $2`,
			req.Customer, req.RecheckUUID).Scan(&last); err != nil {
			return ev, st, false, fmt.Errorf("recheck: %w", err)
		}
		if last != nil {
			st.LastBilled = last.UTC()
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(count), 0) FROM recheck_pairs WHERE customer = $1 AND uuid = $2`,
			req.Customer, req.RecheckUUID).Scan(&st.Rechecks); err != nil {
			return ev, st, false, fmt.Errorf("recheck count: %w", err)
		}
	}
	ev, bill, err := decide(st)
	if err != nil {
		return repo.Event{}, repo.BillState{}, false, errDecide{err}
	}
	if !bill && ev.Recheck && req.RecheckUUID != "" {
		if err := countRecheck(ctx, tx, req, ev.KeyPrefix); err != nil {
			return repo.Event{}, repo.BillState{}, false, err
		}
	}
	if bill && req.RecheckUUID != "" {
		if _, err := tx.Exec(ctx, `DELETE FROM recheck_pairs WHERE customer = $1 AND uuid = $2`, req.Customer, req.RecheckUUID); err != nil {
			return repo.Event{}, repo.BillState{}, false, fmt.Errorf("recheck count: %w", err)
		}
	}
	if bill {
		ev.ID = req.IdempotencyKey
		ev.Customer = req.Customer
		st.MonthlyUsage++
		ev.MonthlyUsage = st.MonthlyUsage
		var recheck *string
		if req.RecheckUUID != "" {
			recheck = &req.RecheckUUID
		}
		err := tx.QueryRow(ctx, `INSERT INTO ledger (id, time, customer, month, key_prefix, service, call_type, uuid, recheck_uuid, tier, rate_cents, monthly_usage)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING seq`,
			ev.ID, ev.Time, ev.Customer, req.Month, ev.KeyPrefix, ev.Service, ev.CallType, ev.UUID, recheck, ev.Tier, ev.RateCents, ev.MonthlyUsage).Scan(&ev.Seq)
		if err != nil {
			return repo.Event{}, repo.BillState{}, false, fmt.Errorf("append: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return repo.Event{}, repo.BillState{}, false, fmt.Errorf("commit: %w", err)
	}
	return ev, st, bill, nil
}

// countRecheck adds one free recheck to the request's (customer, uuid)
// pair and to the key's month.
func countRecheck(ctx context.Context, tx pgx.Tx, req repo.BillRequest, keyPrefix string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO recheck_pairs (customer, uuid, count) VALUES ($1, $2, 1)
		ON CONFLICT (customer, uuid) DO UPDATE SET count = recheck_pairs.count + 1`, req.Customer, req.RecheckUUID); err != nil {
		return fmt.Errorf("recheck count: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO recheck_usage (key_prefix, month, count) VALUES ($1, $2, 1)
		ON CONFLICT (key_prefix, month) DO UPDATE SET count = recheck_usage.count + 1`, keyPrefix, req.Month); err != nil {
		return fmt.Errorf("recheck usage: %w", err)
	}
	return nil
}

// RecheckCount is how many free rechecks the key with this prefix was
// given in month (YYYY-MM).
func (s ledger) RecheckCount(ctx context.Context, keyPrefix, month string) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT coalesce(max(count), 0) FROM recheck_usage WHERE key_prefix = $1 AND month = $2`, keyPrefix, month).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: recheck count: %w", err)
	}
	return n, nil
}

// MonthlyUsage is the customer's billable events in month (YYYY-MM).
func (s ledger) MonthlyUsage(ctx context.Context, customer, month string) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM ledger WHERE customer = $1 AND month = $2`, customer, month).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: monthly usage: %w", err)
	}
	return n, nil
}

// MonthlyCharges is the customer's billable events in month and the sum
// of their rates in US cents.
func (s ledger) MonthlyCharges(ctx context.Context, customer, month string) (int, int64, error) {
	var (
		n     int
		total int64
	)
	err := s.db.QueryRow(ctx, `SELECT count(*), coalesce(sum(rate_cents), 0) FROM ledger WHERE customer = $1 AND month = $2`,
		customer, month).Scan(&n, &total)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: monthly charges: %w", err)
	}
	return n, total, nil
}

// Events returns the whole ledger in append (seq) order.
func (s ledger) Events(ctx context.Context) ([]repo.Event, error) {
	rows, err := s.db.Query(ctx, `SELECT `+eventColumns+` FROM ledger ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("postgres: ledger: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.Event, error) { return scanEvent(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: ledger: %w", err)
	}
	return out, nil
}
