package store

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

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
