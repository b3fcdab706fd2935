package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

// usgLog is repo.USGLog on the usg_log table.
type usgLog struct{ db *pgxpool.Pool }

// jsonText is raw JSON as a query argument ("null" when empty).
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}

// appendUSG inserts e (its ID made when empty) and fills in Seq; a
// hidden mark it carries (a copied store) goes beside it.
func appendUSG(ctx context.Context, q querier, e *repo.USGLogEntry) error {
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	err := q.QueryRow(ctx, `INSERT INTO usg_log (id, time, customer, key_prefix, clinic_code, uuid, inputs, outputs, model_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8::json, $9) RETURNING seq`,
		e.ID, e.Time, e.Customer, e.KeyPrefix, e.ClinicCode, e.UUID, jsonText(e.Inputs), jsonText(e.Outputs), e.ModelVersion).Scan(&e.Seq)
	if err != nil || e.Hidden == nil {
		return err
	}
	return hideUSG(ctx, q, e.Seq, *e.Hidden)
}

// hideUSG records the hidden mark of USG log entry seq.
func hideUSG(ctx context.Context, q querier, seq uint64, h repo.Hidden) error {
	doc, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode hidden mark: %w", err)
	}
	var done uint64
	return q.QueryRow(ctx, `INSERT INTO usg_log_hidden (usg_seq, hidden) VALUES ($1, $2)
		ON CONFLICT (usg_seq) DO UPDATE SET hidden = excluded.hidden RETURNING usg_seq`, seq, doc).Scan(&done)
}

// Append stores the entry and returns it with its sequence number.
func (s usgLog) Append(ctx context.Context, e repo.USGLogEntry) (repo.USGLogEntry, error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return e, fmt.Errorf("postgres: usg log: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := appendUSG(ctx, tx, &e); err != nil {
		return e, fmt.Errorf("postgres: usg log: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return e, fmt.Errorf("postgres: usg log: %w", err)
	}
	return e, nil
}

func (s usgLog) list(ctx context.Context, where string, args ...any) ([]repo.USGLogEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT l.seq, l.id::text, l.time, l.customer, l.key_prefix, l.clinic_code, l.uuid, l.inputs::text, l.outputs::text,
		l.model_version, h.hidden::text
		FROM usg_log l LEFT JOIN usg_log_hidden h ON h.usg_seq = l.seq `+where+` ORDER BY l.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: usg log: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.USGLogEntry, error) {
		var (
			e       repo.USGLogEntry
			in, out string
			hidden  *string
		)
		if err := r.Scan(&e.Seq, &e.ID, &e.Time, &e.Customer, &e.KeyPrefix, &e.ClinicCode, &e.UUID, &in, &out, &e.ModelVersion, &hidden); err != nil {
			return e, err
		}
		e.Time = e.Time.UTC()
		e.Inputs, e.Outputs = json.RawMessage(in), json.RawMessage(out)
		if hidden != nil {
			e.Hidden = &repo.Hidden{}
			if err := json.Unmarshal([]byte(*hidden), e.Hidden); err != nil {
				return e, fmt.Errorf("decode hidden mark: %w", err)
			}
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: usg log: %w", err)
	}
	return out, nil
}

// Hide marks the entry hidden and appends the audit event in one
// transaction (the log row itself is never changed); repo.ErrNotFound
// when there is no such entry.
func (s usgLog) Hide(ctx context.Context, seq uint64, h repo.Hidden, audit repo.AuditEvent) (repo.USGLogEntry, error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return repo.USGLogEntry{}, fmt.Errorf("postgres: hide usg log entry: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := hideUSG(ctx, tx, seq, h); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23503" { // foreign key: no such entry
			return repo.USGLogEntry{}, fmt.Errorf("postgres: usg log entry %d: %w", seq, repo.ErrNotFound)
		}
		return repo.USGLogEntry{}, fmt.Errorf("postgres: hide usg log entry %d: %w", seq, err)
	}
	if _, err := appendAudit(ctx, tx, audit); err != nil {
		return repo.USGLogEntry{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return repo.USGLogEntry{}, fmt.Errorf("postgres: hide usg log entry: %w", err)
	}
	got, err := s.list(ctx, "WHERE l.seq = $1", seq)
	if err != nil || len(got) != 1 {
		return repo.USGLogEntry{}, fmt.Errorf("postgres: read usg log entry %d: %w", seq, err)
	}
	return got[0], nil
}

// List returns the log in append order.
func (s usgLog) List(ctx context.Context) ([]repo.USGLogEntry, error) { return s.list(ctx, "") }

// ListPatient returns the uuid's entries in append order (empty, not
// nil, when there are none).
func (s usgLog) ListPatient(ctx context.Context, uuid patient.ID) ([]repo.USGLogEntry, error) {
	out, err := s.list(ctx, "WHERE l.uuid = $1", uuid.String())
	if out == nil && err == nil {
		out = []repo.USGLogEntry{}
	}
	return out, err
}
