package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/patient"
)

// PatientService keeps patient records (bucket patients: id -> Patient)
// and finds patient ids across the records, the history and the USG log.
type PatientService struct {
	db    *bolt.DB
	store *Store
}

// PatientIDs returns up to limit distinct patient ids containing query
// (case-insensitive), sorted (Store.PatientIDs).
func (s *PatientService) PatientIDs(ctx context.Context, query string, limit int) ([]patient.ID, error) {
	return s.store.PatientIDs(ctx, query, limit)
}

// Get returns the record of a patient id, or ErrNotFound.
func (s *PatientService) Get(ctx context.Context, id patient.ID) (Patient, error) {
	var p Patient
	if err := ctxErr(ctx); err != nil {
		return p, err
	}
	if err := checkParts(id.String()); err != nil {
		return p, err
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketPatients).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("store: patient %q: %w", id, ErrNotFound)
		}
		if err := json.Unmarshal(v, &p); err != nil {
			return fmt.Errorf("store: decode patient %q: %w", id, err)
		}
		return nil
	})
	return p, err
}

// Put creates or replaces a record and appends the audit event in one
// transaction.
func (s *PatientService) Put(ctx context.Context, p Patient, audit AuditEvent) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if p.ID == "" {
		return fmt.Errorf("store: patient without an id")
	}
	if err := checkParts(p.ID.String()); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := put(tx.Bucket(bucketPatients), []byte(p.ID), p); err != nil {
			return fmt.Errorf("store: patient %q: %w", p.ID, err)
		}
		_, err := appendAudit(tx, audit)
		return err
	})
}

// Search returns up to limit records whose id or name contains query
// (case-insensitive), sorted by id.
func (s *PatientService) Search(ctx context.Context, query string, limit int) ([]Patient, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	out := []Patient{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPatients).ForEach(func(k, v []byte) error {
			var p Patient
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("store: decode patient %q: %w", k, err)
			}
			if strings.Contains(strings.ToLower(p.ID.String()), q) || strings.Contains(strings.ToLower(p.Name), q) {
				out = append(out, p)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// AuditService is the append-only audit trail (bucket audit: seq ->
// AuditEvent).
type AuditService struct{ db *bolt.DB }

// Append stores the event and returns it with its Seq.
func (s *AuditService) Append(ctx context.Context, e AuditEvent) (AuditEvent, error) {
	if err := ctxErr(ctx); err != nil {
		return e, err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		e, err = appendAudit(tx, e)
		return err
	})
	return e, err
}

// appendAudit appends e inside tx.
func appendAudit(tx *bolt.Tx, e AuditEvent) (AuditEvent, error) {
	b := tx.Bucket(bucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return e, fmt.Errorf("store: audit sequence: %w", err)
	}
	e.Seq = seq
	if err := put(b, itob(seq), e); err != nil {
		return e, fmt.Errorf("store: audit: %w", err)
	}
	return e, nil
}

// ListPatient returns the patient's audit events in append order.
func (s *AuditService) ListPatient(ctx context.Context, patientID patient.ID) ([]AuditEvent, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	out := []AuditEvent{}
	want, err := json.Marshal(patientID)
	if err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAudit).ForEach(func(_, v []byte) error {
			if !bytes.Contains(v, want) { // cheap pre-filter; the decode decides
				return nil
			}
			var e AuditEvent
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("store: decode audit: %w", err)
			}
			if e.PatientID == patientID {
				out = append(out, e)
			}
			return nil
		})
	})
	return out, err
}
