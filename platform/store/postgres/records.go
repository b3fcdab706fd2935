package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

// keys is repo.Keys on the api_keys table.
type keys struct{ db *pgxpool.Pool }

// Create stores a new key; repo.ErrExists when the prefix is taken.
func (s keys) Create(ctx context.Context, k repo.Key) error {
	hash := k.Hash
	if hash == nil {
		hash = []byte{}
	}
	tag, err := s.db.Exec(ctx, `INSERT INTO api_keys (prefix, hash, customer, created, revoked)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (prefix) DO NOTHING`, k.Prefix, hash, k.Customer, k.Created, k.Revoked)
	if err != nil {
		return fmt.Errorf("postgres: key %s: %w", k.Prefix, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: key %s: %w", k.Prefix, repo.ErrExists)
	}
	return nil
}

const keyColumns = `prefix, hash, customer, created, revoked`

func scanKey(row pgx.Row) (repo.Key, error) {
	var k repo.Key
	err := row.Scan(&k.Prefix, &k.Hash, &k.Customer, &k.Created, &k.Revoked)
	k.Created = k.Created.UTC()
	if k.Revoked != nil {
		t := k.Revoked.UTC()
		k.Revoked = &t
	}
	return k, err
}

// Get returns the key with the prefix, or repo.ErrNotFound.
func (s keys) Get(ctx context.Context, prefix string) (repo.Key, error) {
	k, err := scanKey(s.db.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE prefix = $1`, prefix))
	if err != nil {
		return repo.Key{}, notFound(err, "key "+prefix)
	}
	return k, nil
}

// List returns every key, ordered by prefix (byte order).
func (s keys) List(ctx context.Context) ([]repo.Key, error) {
	rows, err := s.db.Query(ctx, `SELECT `+keyColumns+` FROM api_keys ORDER BY prefix COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.Key, error) { return scanKey(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list keys: %w", err)
	}
	return out, nil
}

// Revoke marks the key revoked at t; revoking twice keeps the first time.
func (s keys) Revoke(ctx context.Context, prefix string, t time.Time) (repo.Key, error) {
	k, err := scanKey(s.db.QueryRow(ctx, `UPDATE api_keys SET revoked = coalesce(revoked, $2)
		WHERE prefix = $1 RETURNING `+keyColumns, prefix, t.UTC()))
	if err != nil {
		return repo.Key{}, notFound(err, "revoke key "+prefix)
	}
	return k, nil
}

// customers is repo.Customers on the customers table.
type customers struct{ db *pgxpool.Pool }

// Get returns the customer, or repo.ErrNotFound.
func (s customers) Get(ctx context.Context, name string) (repo.Customer, error) {
	var c repo.Customer
	err := s.db.QueryRow(ctx, `SELECT name, tier, enterprise_single_cents, enterprise_session_cents, created
		FROM customers WHERE name = $1`, name).Scan(&c.Name, &c.Tier, &c.EnterpriseSingleCents, &c.EnterpriseSessionCents, &c.Created)
	if err != nil {
		return repo.Customer{}, notFound(err, fmt.Sprintf("customer %q", name))
	}
	c.Created = c.Created.UTC()
	return c, nil
}

// Put creates or replaces the customer.
func (s customers) Put(ctx context.Context, c repo.Customer) error {
	if err := checkParts(c.Name); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `INSERT INTO customers (name, tier, enterprise_single_cents, enterprise_session_cents, created)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO UPDATE SET tier = $2, enterprise_single_cents = $3, enterprise_session_cents = $4, created = $5`,
		c.Name, c.Tier, c.EnterpriseSingleCents, c.EnterpriseSessionCents, c.Created)
	if err != nil {
		return fmt.Errorf("postgres: put customer %q: %w", c.Name, err)
	}
	return nil
}

// history is repo.History on the history table (and history_images).
type history struct{ db *pgxpool.Pool }

// Add appends an entry for the pair and returns it with its Seq; img,
// when not empty, is kept beside it in the same transaction.
func (s history) Add(ctx context.Context, customer, uuid string, e repo.HistoryEntry, img []byte) (repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return e, err
	}
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	e.HasImage = len(img) > 0
	e.Seq = 0 // the column is the number; the JSON never carries it
	doc, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("postgres: encode history entry: %w", err)
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, `INSERT INTO history (id, customer, uuid, time, entry) VALUES ($1, $2, $3, $4, $5) RETURNING seq`,
		e.ID, customer, uuid, e.Time, doc).Scan(&e.Seq); err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	if len(img) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO history_images (history_seq, image) VALUES ($1, $2)`, e.Seq, img); err != nil {
			return e, fmt.Errorf("postgres: history image: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	return e, nil
}

// decodeEntry reads an entry's JSON and gives it its number.
func decodeEntry(seq uint64, doc []byte) (repo.HistoryEntry, error) {
	var e repo.HistoryEntry
	if err := json.Unmarshal(doc, &e); err != nil {
		return e, fmt.Errorf("decode history entry: %w", err)
	}
	e.Seq = seq
	return e, nil
}

// List returns the pair's entries in the order they were added; an
// empty, non-nil slice when there are none.
func (s history) List(ctx context.Context, customer, uuid string) ([]repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT seq, entry FROM history WHERE customer = $1 AND uuid = $2 ORDER BY seq`, customer, uuid)
	if err != nil {
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.HistoryEntry, error) {
		var (
			seq uint64
			doc []byte
		)
		if err := r.Scan(&seq, &doc); err != nil {
			return repo.HistoryEntry{}, err
		}
		return decodeEntry(seq, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	if out == nil {
		out = []repo.HistoryEntry{}
	}
	return out, nil
}

// ListPatient returns every customer's entries for uuid, oldest first
// (by time, then by the order they were added).
func (s history) ListPatient(ctx context.Context, uuid patient.ID) ([]repo.PatientEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT customer, seq, entry FROM history WHERE uuid = $1 ORDER BY time, seq`, uuid.String())
	if err != nil {
		return nil, fmt.Errorf("postgres: patient history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.PatientEntry, error) {
		var (
			p   repo.PatientEntry
			seq uint64
			doc []byte
		)
		if err := r.Scan(&p.Customer, &seq, &doc); err != nil {
			return p, err
		}
		e, err := decodeEntry(seq, doc)
		p.HistoryEntry = e
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: patient history: %w", err)
	}
	// Times equal to the microsecond keep their order of addition;
	// finer differences (kept in the entry) decide the rest.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if out == nil {
		out = []repo.PatientEntry{}
	}
	return out, nil
}

// Image returns the image kept with an entry, or repo.ErrNotFound.
func (s history) Image(ctx context.Context, customer, uuid string, seq uint64) ([]byte, error) {
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	var img []byte
	err := s.db.QueryRow(ctx, `SELECT i.image FROM history_images i JOIN history h ON h.seq = i.history_seq
		WHERE h.seq = $1 AND h.customer = $2 AND h.uuid = $3`, seq, customer, uuid).Scan(&img)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("image of history entry %d", seq))
	}
	return img, nil
}

// Hide marks the entry hidden and appends the audit event in one
// transaction; repo.ErrNotFound when there is no such entry.
func (s history) Hide(ctx context.Context, customer, uuid string, seq uint64, h repo.Hidden, audit repo.AuditEvent) (repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return repo.HistoryEntry{}, err
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return repo.HistoryEntry{}, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	defer tx.Rollback(ctx)
	var doc []byte
	err = tx.QueryRow(ctx, `SELECT entry FROM history WHERE seq = $1 AND customer = $2 AND uuid = $3 FOR UPDATE`, seq, customer, uuid).Scan(&doc)
	if err != nil {
		return repo.HistoryEntry{}, notFound(err, fmt.Sprintf("history entry %d", seq))
	}
	e, err := decodeEntry(seq, doc)
	if err != nil {
		return e, fmt.Errorf("postgres: %w", err)
	}
	e.Hidden = &h
	stored := e
	stored.Seq = 0
	if doc, err = json.Marshal(stored); err != nil {
		return e, fmt.Errorf("postgres: encode history entry: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE history SET entry = $2 WHERE seq = $1`, seq, doc); err != nil {
		return e, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	if _, err := appendAudit(ctx, tx, audit); err != nil {
		return e, err
	}
	if err := tx.Commit(ctx); err != nil {
		return e, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	return e, nil
}

// usgLog is repo.USGLog on the usg_log table.
type usgLog struct{ db *pgxpool.Pool }

// querier is what both a pool and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

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
