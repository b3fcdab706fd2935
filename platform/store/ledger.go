package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/repo"
)

// LedgerService is the append-only billing ledger with two indexes
// derived from it in the same transactions: per customer and month (for
// monthly_usage) and the last billed time per (customer, uuid) (for the
// recheck grace).
type LedgerService struct{ db *bolt.DB }

// Bill reads the state for req, calls decide and, when it says so, appends
// the event, all in one read-write transaction: concurrent calls for one
// customer are serialized, so the counts never race. The transaction is
// committed (fsynced) before Bill returns. Concurrent calls are grouped
// into one commit (bbolt's Batch), so decide may run more than once and
// must only depend on its argument. It returns the final state
// (MonthlyUsage including an appended event), the event and whether it was
// appended.
func (s *LedgerService) Bill(ctx context.Context, req BillRequest, decide Decide) (Event, BillState, bool, error) {
	var (
		ev   Event
		st   BillState
		bill bool
	)
	if err := ctxErr(ctx); err != nil {
		return ev, st, false, err
	}
	if err := checkParts(req.Customer, req.RecheckUUID); err != nil {
		return ev, st, false, err
	}
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = repo.NewID()
	}
	if req.USGLog != nil && req.USGLog.ID == "" {
		req.USGLog.ID = repo.NewID()
	}
	err := s.db.Batch(func(tx *bolt.Tx) error {
		ev, st, bill = Event{}, BillState{}, false
		ids := tx.Bucket(bucketLedgerIDs)
		if seq := ids.Get([]byte(req.IdempotencyKey)); seq != nil {
			// Billed before: report the recorded event, append nothing.
			v := tx.Bucket(bucketLedger).Get(seq)
			if v == nil {
				return fmt.Errorf("ledger id index points at missing event %x", seq)
			}
			if err := json.Unmarshal(v, &ev); err != nil {
				return fmt.Errorf("decode ledger event: %w", err)
			}
			st.MonthlyUsage, bill = ev.MonthlyUsage, true
			return nil
		}
		if req.USGLog != nil {
			b := tx.Bucket(bucketUSGLog)
			seq, err := b.NextSequence()
			if err != nil {
				return fmt.Errorf("usg log sequence: %w", err)
			}
			req.USGLog.Seq = seq
			if err := put(b, itob(seq), req.USGLog); err != nil {
				return err
			}
		}
		usage := tx.Bucket(bucketUsage)
		rk := tx.Bucket(bucketRecheck)
		prefix := join(req.Customer, req.Month)
		st.MonthlyUsage = countPrefix(usage, prefix)
		if req.RecheckUUID != "" {
			if v := rk.Get(join(req.Customer, req.RecheckUUID)); v != nil {
				t, err := time.Parse(time.RFC3339Nano, string(v))
				if err != nil {
					return fmt.Errorf("decode recheck time: %w", err)
				}
				st.LastBilled = t
			}
			st.Rechecks = int(btoiOr0(tx.Bucket(bucketRecheckPairs).Get(join(req.Customer, req.RecheckUUID))))
		}
		var err error
		ev, bill, err = decide(st)
		if err != nil {
			return err
		}
		if !bill {
			if ev.Recheck && req.RecheckUUID != "" {
				return countRecheck(tx, req, ev.KeyPrefix)
			}
			return nil
		}
		if req.RecheckUUID != "" {
			if err := tx.Bucket(bucketRecheckPairs).Delete(join(req.Customer, req.RecheckUUID)); err != nil {
				return fmt.Errorf("recheck count: %w", err)
			}
		}
		led := tx.Bucket(bucketLedger)
		seq, err := led.NextSequence()
		if err != nil {
			return fmt.Errorf("ledger sequence: %w", err)
		}
		ev.Seq = seq
		ev.ID = req.IdempotencyKey
		ev.Customer = req.Customer
		st.MonthlyUsage++
		ev.MonthlyUsage = st.MonthlyUsage
		if err := put(led, itob(seq), ev); err != nil {
			return err
		}
		if err := ids.Put([]byte(ev.ID), itob(seq)); err != nil {
			return fmt.Errorf("ledger id index: %w", err)
		}
		if err := usage.Put(append(prefix, itob(seq)...), nil); err != nil {
			return fmt.Errorf("usage index: %w", err)
		}
		if req.RecheckUUID != "" {
			ts := ev.Time.UTC().Format(time.RFC3339Nano)
			if err := rk.Put(join(req.Customer, req.RecheckUUID), []byte(ts)); err != nil {
				return fmt.Errorf("recheck index: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Event{}, BillState{}, false, fmt.Errorf("store: bill %q: %w", req.Customer, err)
	}
	return ev, st, bill, nil
}

// countRecheck adds one free recheck to the request's (customer, uuid)
// pair and to the key's month.
func countRecheck(tx *bolt.Tx, req BillRequest, keyPrefix string) error {
	for _, c := range []struct {
		bucket []byte
		key    []byte
	}{
		{bucketRecheckPairs, join(req.Customer, req.RecheckUUID)},
		{bucketRecheckUsage, join(keyPrefix, req.Month)},
	} {
		b := tx.Bucket(c.bucket)
		if err := b.Put(c.key, itob(btoiOr0(b.Get(c.key))+1)); err != nil {
			return fmt.Errorf("recheck count: %w", err)
		}
	}
	return nil
}

// btoiOr0 reads an 8-byte big-endian count; 0 when absent or malformed.
func btoiOr0(v []byte) uint64 {
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// RecheckCount is how many free rechecks the key with this prefix was
// given in month ("YYYY-MM").
func (s *LedgerService) RecheckCount(ctx context.Context, keyPrefix, month string) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		n = btoiOr0(tx.Bucket(bucketRecheckUsage).Get(join(keyPrefix, month)))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: recheck count: %w", err)
	}
	return int(n), nil
}

// MonthlyUsage is the customer's billable events in month ("YYYY-MM").
func (s *LedgerService) MonthlyUsage(ctx context.Context, customer, month string) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		n = countPrefix(tx.Bucket(bucketUsage), join(customer, month))
		return nil
	})
	return n, err
}

// MonthlyCharges is the customer's billable events in month ("YYYY-MM")
// and the sum of their rates in US cents.
func (s *LedgerService) MonthlyCharges(ctx context.Context, customer, month string) (int, int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, 0, err
	}
	var (
		n     int
		total int64
	)
	err := s.db.View(func(tx *bolt.Tx) error {
		ledger := tx.Bucket(bucketLedger)
		prefix := join(customer, month)
		c := tx.Bucket(bucketUsage).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+8 {
				continue
			}
			v := ledger.Get(k[len(prefix):])
			if v == nil {
				return fmt.Errorf("store: usage index points at missing ledger event %x", k[len(prefix):])
			}
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode ledger event: %w", err)
			}
			n++
			total += e.RateCents
		}
		return nil
	})
	return n, total, err
}

// Events returns the whole ledger in append order.
func (s *LedgerService) Events(ctx context.Context) ([]Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out []Event
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLedger).ForEach(func(_, v []byte) error {
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode ledger event: %w", err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}

func countPrefix(b *bolt.Bucket, prefix []byte) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}
