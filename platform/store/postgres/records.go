package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// history is repo.History on the history table.
type history struct{ db *pgxpool.Pool }

// Add appends an entry for the pair.
func (s history) Add(ctx context.Context, customer, uuid string, e repo.HistoryEntry) error {
	if err := checkParts(customer, uuid); err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("postgres: encode history entry: %w", err)
	}
	_, err = s.db.Exec(ctx, `INSERT INTO history (id, customer, uuid, time, entry) VALUES ($1, $2, $3, $4, $5)`,
		e.ID, customer, uuid, e.Time, doc)
	if err != nil {
		return fmt.Errorf("postgres: add history: %w", err)
	}
	return nil
}

func decodeEntry(doc []byte) (repo.HistoryEntry, error) {
	var e repo.HistoryEntry
	if err := json.Unmarshal(doc, &e); err != nil {
		return e, fmt.Errorf("decode history entry: %w", err)
	}
	return e, nil
}

// List returns the pair's entries in the order they were added; an
// empty, non-nil slice when there are none.
func (s history) List(ctx context.Context, customer, uuid string) ([]repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT entry FROM history WHERE customer = $1 AND uuid = $2 ORDER BY seq`, customer, uuid)
	if err != nil {
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.HistoryEntry, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return repo.HistoryEntry{}, err
		}
		return decodeEntry(doc)
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
func (s history) ListPatient(ctx context.Context, uuid string) ([]repo.PatientEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT customer, entry FROM history WHERE uuid = $1 ORDER BY time, seq`, uuid)
	if err != nil {
		return nil, fmt.Errorf("postgres: patient history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.PatientEntry, error) {
		var (
			p   repo.PatientEntry
			doc []byte
		)
		if err := r.Scan(&p.Customer, &doc); err != nil {
			return p, err
		}
		e, err := decodeEntry(doc)
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

// appendUSG inserts e (its ID made when empty) and fills in Seq.
func appendUSG(ctx context.Context, q querier, e *repo.USGLogEntry) error {
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	return q.QueryRow(ctx, `INSERT INTO usg_log (id, time, customer, key_prefix, clinic_code, uuid, inputs, outputs, model_version)
		VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8::json, $9) RETURNING seq`,
		e.ID, e.Time, e.Customer, e.KeyPrefix, e.ClinicCode, e.UUID, jsonText(e.Inputs), jsonText(e.Outputs), e.ModelVersion).Scan(&e.Seq)
}

// Append stores the entry and returns it with its sequence number.
func (s usgLog) Append(ctx context.Context, e repo.USGLogEntry) (repo.USGLogEntry, error) {
	if err := appendUSG(ctx, s.db, &e); err != nil {
		return e, fmt.Errorf("postgres: usg log: %w", err)
	}
	return e, nil
}

func (s usgLog) list(ctx context.Context, where string, args ...any) ([]repo.USGLogEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT seq, id::text, time, customer, key_prefix, clinic_code, uuid, inputs::text, outputs::text, model_version
		FROM usg_log `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: usg log: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.USGLogEntry, error) {
		var (
			e       repo.USGLogEntry
			in, out string
		)
		err := r.Scan(&e.Seq, &e.ID, &e.Time, &e.Customer, &e.KeyPrefix, &e.ClinicCode, &e.UUID, &in, &out, &e.ModelVersion)
		e.Time = e.Time.UTC()
		e.Inputs, e.Outputs = json.RawMessage(in), json.RawMessage(out)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: usg log: %w", err)
	}
	return out, nil
}

// List returns the log in append order.
func (s usgLog) List(ctx context.Context) ([]repo.USGLogEntry, error) { return s.list(ctx, "") }

// ListPatient returns the uuid's entries in append order (empty, not
// nil, when there are none).
func (s usgLog) ListPatient(ctx context.Context, uuid string) ([]repo.USGLogEntry, error) {
	out, err := s.list(ctx, "WHERE uuid = $1", uuid)
	if out == nil && err == nil {
		out = []repo.USGLogEntry{}
	}
	return out, err
}

// patients is repo.Patients over the history and the USG log.
type patients struct{ db *pgxpool.Pool }

// PatientIDs returns up to limit distinct patient ids that contain query
// (case-insensitive, as Go's strings.ToLower folds), in byte order. The
// match runs here rather than in SQL so that it does not depend on the
// database's locale.
func (s patients) PatientIDs(ctx context.Context, query string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT id FROM (SELECT uuid AS id FROM history UNION SELECT uuid FROM usg_log WHERE uuid <> '') ids
		ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: patient ids: %w", err)
	}
	defer rows.Close()
	q := strings.ToLower(query)
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("postgres: patient ids: %w", err)
		}
		if strings.Contains(strings.ToLower(id), q) {
			ids = append(ids, id)
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
