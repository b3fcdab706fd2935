package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/patient"
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

// HistoryService keeps cardiac measurements per (customer, uuid).
type HistoryService struct{ db *bolt.DB }

// Add appends an entry for the pair and returns it with its Seq; img,
// when not empty, is kept beside it in the same transaction.
func (s *HistoryService) Add(ctx context.Context, customer, uuid string, e HistoryEntry, img []byte) (HistoryEntry, error) {
	if err := ctxErr(ctx); err != nil {
		return e, err
	}
	if err := checkParts(customer, uuid); err != nil {
		return e, err
	}
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	e.HasImage = len(img) > 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("store: history sequence: %w", err)
		}
		e.Seq = seq
		k := append(join(customer, uuid), itob(seq)...)
		if len(img) > 0 {
			if err := tx.Bucket(bucketHistoryImages).Put(k, img); err != nil {
				return fmt.Errorf("store: history image: %w", err)
			}
		}
		return put(b, k, e)
	})
	return e, err
}

// Image returns the image kept with an entry, or ErrNotFound.
func (s *HistoryService) Image(ctx context.Context, customer, uuid string, seq uint64) ([]byte, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketHistoryImages).Get(append(join(customer, uuid), itob(seq)...))
		if v == nil {
			return fmt.Errorf("store: image of history entry %d: %w", seq, ErrNotFound)
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// Hide marks the entry hidden and appends the audit event in one
// transaction; ErrNotFound when there is no such entry.
func (s *HistoryService) Hide(ctx context.Context, customer, uuid string, seq uint64, h Hidden, audit AuditEvent) (HistoryEntry, error) {
	var e HistoryEntry
	if err := ctxErr(ctx); err != nil {
		return e, err
	}
	if err := checkParts(customer, uuid); err != nil {
		return e, err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		k := append(join(customer, uuid), itob(seq)...)
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("store: history entry %d: %w", seq, ErrNotFound)
		}
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("store: decode history: %w", err)
		}
		e.Seq = seq
		e.Hidden = &h
		if err := put(b, k, e); err != nil {
			return err
		}
		_, err := appendAudit(tx, audit)
		return err
	})
	return e, err
}

// List returns the pair's entries in the order they were added (oldest
// first); an empty, non-nil slice when there are none.
func (s *HistoryService) List(ctx context.Context, customer, uuid string) ([]HistoryEntry, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	out := []HistoryEntry{}
	prefix := join(customer, uuid)
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketHistory).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				continue
			}
			var e HistoryEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode history: %w", err)
			}
			e.Seq = binary.BigEndian.Uint64(k[len(prefix):])
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// ListPatient returns every customer's entries for uuid, oldest first
// (by time, then by the order they were added). It scans the bucket: the
// desktop's patient view is a clinic-scale query, not an API path.
func (s *HistoryService) ListPatient(ctx context.Context, uuid patient.ID) ([]PatientEntry, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []PatientEntry{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHistory).ForEach(func(k, v []byte) error {
			cust, id, ok := splitPair(k)
			if !ok || id != uuid.String() {
				return nil
			}
			var e HistoryEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode history: %w", err)
			}
			e.Seq = binary.BigEndian.Uint64(k[len(k)-8:])
			out = append(out, PatientEntry{Customer: cust, HistoryEntry: e})
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, err
}

// PatientIDs returns up to limit distinct patient ids (uuids) with a
// record, cardiac history or USG log entries that contain query
// (case-insensitive), sorted. The ids are the stored ones, not parsed
// again (patient.ID: older data may hold ids the rule now refuses).
func (s *Store) PatientIDs(ctx context.Context, query string, limit int) ([]patient.ID, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	q := strings.ToLower(query)
	seen := map[string]bool{}
	err := s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketHistory).ForEach(func(k, _ []byte) error {
			if _, id, ok := splitPair(k); ok && strings.Contains(strings.ToLower(id), q) {
				seen[id] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketPatients).ForEach(func(k, _ []byte) error {
			if id := string(k); strings.Contains(strings.ToLower(id), q) {
				seen[id] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketUSGLog).ForEach(func(_, v []byte) error {
			var e struct {
				UUID string `json:"uuid"`
			}
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode usg log: %w", err)
			}
			if e.UUID != "" && strings.Contains(strings.ToLower(e.UUID), q) {
				seen[e.UUID] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	ids := make([]patient.ID, 0, len(seen))
	for id := range seen {
		ids = append(ids, patient.ID(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, nil
}

// splitPair undoes join(customer, uuid) + 8-byte sequence.
func splitPair(k []byte) (customer, uuid string, ok bool) {
	var parts [2]string
	for i := range parts {
		if len(k) < 2 {
			return "", "", false
		}
		n := int(binary.BigEndian.Uint16(k))
		if len(k) < 2+n {
			return "", "", false
		}
		parts[i], k = string(k[2:2+n]), k[2+n:]
	}
	if len(k) != 8 {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// USGLogService is the append-only USG prediction log.
type USGLogService struct{ db *bolt.DB }

// Append stores the entry and returns it with its sequence number.
func (s *USGLogService) Append(ctx context.Context, e USGLogEntry) (USGLogEntry, error) {
	if err := ctxErr(ctx); err != nil {
		return e, err
	}
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUSGLog)
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("usg log sequence: %w", err)
		}
		e.Seq = seq
		return put(b, itob(seq), e)
	})
	if err != nil {
		return e, fmt.Errorf("store: usg log: %w", err)
	}
	return e, nil
}

// List returns the log in append order.
func (s *USGLogService) List(ctx context.Context) ([]USGLogEntry, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	var out []USGLogEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUSGLog).ForEach(func(_, v []byte) error {
			var e USGLogEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode usg log: %w", err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}

// ListPatient returns the USG log entries for uuid in append order.
func (s *USGLogService) ListPatient(ctx context.Context, uuid patient.ID) ([]USGLogEntry, error) {
	all, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := []USGLogEntry{}
	for _, e := range all {
		if e.UUID == uuid.String() {
			out = append(out, e)
		}
	}
	return out, nil
}

// Hide marks the USG log entry hidden and appends the audit event in one
// transaction; ErrNotFound when there is no such entry.
func (s *USGLogService) Hide(ctx context.Context, seq uint64, h Hidden, audit AuditEvent) (USGLogEntry, error) {
	var e USGLogEntry
	if err := ctxErr(ctx); err != nil {
		return e, err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUSGLog)
		v := b.Get(itob(seq))
		if v == nil {
			return fmt.Errorf("store: usg log entry %d: %w", seq, ErrNotFound)
		}
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("store: decode usg log: %w", err)
		}
		e.Hidden = &h
		if err := put(b, itob(seq), e); err != nil {
			return err
		}
		_, err := appendAudit(tx, audit)
		return err
	})
	return e, err
}
