package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/learn"
)

// ModelRegistry is the learn.Registry of a shared database: the active
// cardiac model version in model_active, each promoted version's files in
// model_version_files, so every server on the database follows a
// promotion or rollback and can fetch a version it did not train.
func (s *Store) ModelRegistry() learn.Registry { return modelRegistry{s.pool} }

type modelRegistry struct{ pool *pgxpool.Pool }

var _ learn.Registry = modelRegistry{}

func (r modelRegistry) Active(ctx context.Context) (string, error) {
	var v string
	err := r.pool.QueryRow(ctx, `SELECT version FROM model_active`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres: active model version: %w", err)
	}
	return v, nil
}

func (r modelRegistry) SetActive(ctx context.Context, version string) error {
	_, err := r.pool.Exec(ctx, `INSERT INTO model_active (singleton, version, updated_at) VALUES (true, $1, now())
		ON CONFLICT (singleton) DO UPDATE SET version = excluded.version, updated_at = now()`, version)
	if err != nil {
		return fmt.Errorf("postgres: set active model version: %w", err)
	}
	return nil
}

// Publish stores every file under dir as version's, in one transaction.
// A version already published is refused: versions are immutable, and
// two servers that trained the same name must not overwrite each other.
func (r modelRegistry) Publish(ctx context.Context, version, dir string) error {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: publish %s: %w", version, err)
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `INSERT INTO model_versions (version) VALUES ($1) ON CONFLICT DO NOTHING`, version)
	if err != nil {
		return fmt.Errorf("postgres: publish %s: %w", version, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: publish %s: a version of that name is already in the database", version)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO model_version_files (version, name, data) VALUES ($1, $2, $3)`, version, filepath.ToSlash(rel), b)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: publish %s: %w", version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: publish %s: %w", version, err)
	}
	return nil
}

// Fetch writes version's files into dir.
func (r modelRegistry) Fetch(ctx context.Context, version, dir string) error {
	rows, err := r.pool.Query(ctx, `SELECT name, data FROM model_version_files WHERE version = $1`, version)
	if err != nil {
		return fmt.Errorf("postgres: fetch %s: %w", version, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name string
		var data []byte
		if err := rows.Scan(&name, &data); err != nil {
			return fmt.Errorf("postgres: fetch %s: %w", version, err)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			return fmt.Errorf("postgres: fetch %s: file name %q leaves the folder", version, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("postgres: fetch %s: %w", version, err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("postgres: fetch %s: %w", version, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: fetch %s: %w", version, err)
	}
	if n == 0 {
		return learn.ErrUnknownVersion
	}
	return nil
}

func (r modelRegistry) Published(ctx context.Context) ([]string, error) {
	rows, err := r.pool.Query(ctx, `SELECT version FROM model_versions ORDER BY created_at, version`)
	if err != nil {
		return nil, fmt.Errorf("postgres: model versions: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: model versions: %w", err)
	}
	return vs, nil
}
