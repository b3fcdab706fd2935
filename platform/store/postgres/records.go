package postgres

import (
	"context"
	"fmt"
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

// querier is what both a pool and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
