// Package postgres is the PostgreSQL storage adapter: it implements
// app/repo's ports on one PostgreSQL database (github.com/jackc/pgx/v5),
// so several `vetlens serve` processes, at one site or many, share one
// key list, one patient history and one ledger. The embedded bbolt store
// (platform/store) stays the default for a single clinic.
//
// The schema is versioned: the SQL files in migrations/ (NNNN_name.sql)
// are embedded in the binary and applied in order at Open, in one
// transaction with their rows in schema_migrations, under an advisory
// lock so that servers starting together migrate once.
//
// Billing is correct across processes by transactions, not by in-process
// locks: Bill takes a transaction-scoped advisory lock on the customer,
// reads the month's count and the patient's last billed time, decides and
// appends, and commits before it returns. Each billable response carries
// an idempotency key (the event's UUIDv7 id, unique in the ledger), so a
// retried Bill (a serialization failure, a lost connection) bills once.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/repo"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key held while migrating.
const migrationLock int64 = 0x7665746c656e7301 // "vetlens" 01

// IsDSN reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a bbolt data directory.
func IsDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Store is an open connection pool on a migrated database.
type Store struct {
	pool *pgxpool.Pool
}

// Each repository port is implemented.
var (
	_ repo.Keys      = keys{}
	_ repo.Customers = customers{}
	_ repo.Ledger    = ledger{}
	_ repo.History   = history{}
	_ repo.USGLog    = usgLog{}
	_ repo.Patients  = patients{}
	_ repo.Audit     = audit{}
)

// Open connects to the database at dsn (a postgres:// URL; pgx's
// parameters such as pool_max_conns apply), checks it answers and
// brings its schema to the newest version this binary knows. A database
// migrated by a newer VetLens is refused.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool}, nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Repos is the database as the application's repositories.
func (s *Store) Repos() repo.Repos {
	return repo.Repos{Keys: keys{s.pool}, Customers: customers{s.pool}, Ledger: ledger{s.pool},
		History: history{s.pool}, USGLog: usgLog{s.pool}, Patients: patients{s.pool}, Audit: audit{s.pool}}
}

// SchemaVersion is the database's schema version (0 before any
// migration).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// Migration is one embedded schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order. Their versions
// are 1, 2, 3... without gaps.
func Migrations() ([]Migration, error) {
	ents, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	var out []Migration
	for _, e := range ents {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("postgres: migration %s: name is not NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("postgres: migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("postgres: migration versions must run 1, 2, 3...: found %d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// migrate applies the embedded migrations the database lacks.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	return applyMigrations(ctx, pool, ms)
}

// applyMigrations applies those of ms (versions 1, 2, 3...) newer than
// the database's version, all in one transaction under an advisory
// lock: a failure leaves the schema as it was.
func applyMigrations(ctx context.Context, pool *pgxpool.Pool, ms []Migration) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	var cur int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
		return fmt.Errorf("postgres: migrate: read version: %w", err)
	}
	if latest := len(ms); cur > latest {
		return fmt.Errorf("postgres: the database's schema is version %d, newer than this VetLens knows (%d): upgrade VetLens", cur, latest)
	}
	for _, m := range ms[cur:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("postgres: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("postgres: migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	return nil
}

// notFound maps pgx's no-rows to repo.ErrNotFound.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: %s: %w", what, repo.ErrNotFound)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// checkParts refuses key parts longer than repo.MaxPartLen.
func checkParts(parts ...string) error {
	if err := repo.CheckParts(parts...); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// retryable reports a transaction failure that running it again may
// cure: a serialization failure, a deadlock, an error pgx says happened
// before anything reached the server, or a broken connection (the
// commit's outcome is then unknown; Bill's idempotency key makes the
// retry safe).
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var ne net.Error
	return pgconn.SafeToRetry(err) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
