package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

// patients is repo.Patients: the patients table, and patient ids across
// it, the history and the USG log.
type patients struct{ db *pgxpool.Pool }

// PatientIDs returns up to limit distinct patient ids with a record,
// cardiac history or USG log entries that contain query
// (case-insensitive, as Go's strings.ToLower folds), in byte order. The
// match runs here rather than in SQL so that it does not depend on the
// database's locale. The ids are the stored ones, not parsed again
// (patient.ID: older data may hold ids the rule now refuses).
func (s patients) PatientIDs(ctx context.Context, query string, limit int) ([]patient.ID, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM (SELECT uuid AS id FROM history UNION SELECT id FROM patients
		UNION SELECT uuid FROM usg_log WHERE uuid <> '') ids ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: patient ids: %w", err)
	}
	defer rows.Close()
	q := strings.ToLower(query)
	ids := []patient.ID{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("postgres: patient ids: %w", err)
		}
		if strings.Contains(strings.ToLower(id), q) {
			ids = append(ids, patient.ID(id))
			if limit > 0 && len(ids) == limit {
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: patient ids: %w", err)
	}
	return ids, nil
}

// Get returns the record of a patient id, or repo.ErrNotFound.
func (s patients) Get(ctx context.Context, id patient.ID) (repo.Patient, error) {
	var (
		p   repo.Patient
		doc []byte
	)
	if err := checkParts(id.String()); err != nil {
		return p, err
	}
	if err := s.db.QueryRow(ctx, `SELECT record FROM patients WHERE id = $1`, id.String()).Scan(&doc); err != nil {
		return p, notFound(err, fmt.Sprintf("patient %q", id))
	}
	if err := json.Unmarshal(doc, &p); err != nil {
		return p, fmt.Errorf("postgres: decode patient %q: %w", id, err)
	}
	return p, nil
}

// Put creates or replaces a record and appends the audit event in one
// transaction.
func (s patients) Put(ctx context.Context, p repo.Patient, audit repo.AuditEvent) error {
	if p.ID == "" {
		return fmt.Errorf("postgres: patient without an id")
	}
	if err := checkParts(p.ID.String()); err != nil {
		return err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("postgres: encode patient %q: %w", p.ID, err)
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: patient %q: %w", p.ID, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO patients (id, name, record) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET name = $2, record = $3`, p.ID.String(), p.Name, doc); err != nil {
		return fmt.Errorf("postgres: patient %q: %w", p.ID, err)
	}
	if _, err := appendAudit(ctx, tx, audit); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: patient %q: %w", p.ID, err)
	}
	return nil
}

// Search returns up to limit records whose id or name contains query
// (case-insensitive, as Go folds it), sorted by id (byte order).
func (s patients) Search(ctx context.Context, query string, limit int) ([]repo.Patient, error) {
	rows, err := s.db.Query(ctx, `SELECT id, name, record FROM patients ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: search patients: %w", err)
	}
	defer rows.Close()
	q := strings.ToLower(strings.TrimSpace(query))
	out := []repo.Patient{}
	for rows.Next() {
		var (
			id, name string
			doc      []byte
		)
		if err := rows.Scan(&id, &name, &doc); err != nil {
			return nil, fmt.Errorf("postgres: search patients: %w", err)
		}
		if !strings.Contains(strings.ToLower(id), q) && !strings.Contains(strings.ToLower(name), q) {
			continue
		}
		var p repo.Patient
		if err := json.Unmarshal(doc, &p); err != nil {
			return nil, fmt.Errorf("postgres: decode patient %q: %w", id, err)
		}
		out = append(out, p)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: search patients: %w", err)
	}
	return out, nil
}

// audit is repo.Audit on the append-only audit table.
type audit struct{ db *pgxpool.Pool }

// appendAudit inserts e (through a pool or inside a transaction) and
// returns it with its Seq.
func appendAudit(ctx context.Context, q querier, e repo.AuditEvent) (repo.AuditEvent, error) {
	e.Seq = 0
	doc, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("postgres: encode audit event: %w", err)
	}
	if err := q.QueryRow(ctx, `INSERT INTO audit (patient_id, event) VALUES ($1, $2) RETURNING seq`, e.PatientID.String(), doc).Scan(&e.Seq); err != nil {
		return e, fmt.Errorf("postgres: audit: %w", err)
	}
	return e, nil
}

// Append stores the event and returns it with its Seq.
func (s audit) Append(ctx context.Context, e repo.AuditEvent) (repo.AuditEvent, error) {
	return appendAudit(ctx, s.db, e)
}

// ListPatient returns the patient's events in append order (empty, not
// nil, when there are none).
func (s audit) ListPatient(ctx context.Context, patientID patient.ID) ([]repo.AuditEvent, error) {
	rows, err := s.db.Query(ctx, `SELECT seq, event FROM audit WHERE patient_id = $1 ORDER BY seq`, patientID.String())
	if err != nil {
		return nil, fmt.Errorf("postgres: audit: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.AuditEvent, error) {
		var (
			e   repo.AuditEvent
			seq uint64
			doc []byte
		)
		if err := r.Scan(&seq, &doc); err != nil {
			return e, err
		}
		if err := json.Unmarshal(doc, &e); err != nil {
			return e, fmt.Errorf("decode audit event: %w", err)
		}
		e.Seq = seq
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: audit: %w", err)
	}
	if out == nil {
		out = []repo.AuditEvent{}
	}
	return out, nil
}
