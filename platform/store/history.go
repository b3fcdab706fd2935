package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

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
