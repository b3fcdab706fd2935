// Package pgtest gives tests a PostgreSQL schema of their own. The
// cluster comes from outside: `make test` starts a throwaway one with
// pgcluster.sh (beside this file) and passes its DSN in the environment
// variable DSNEnv; without it the PostgreSQL tests skip and say why.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"vetlens/internal/config"
)

// DSNEnv names the environment variable holding the DSN of a PostgreSQL
// cluster the tests may create and drop schemas in (config.TestPostgres).
var DSNEnv = config.TestPostgres.Env

// AdminDSN returns the cluster's DSN, or skips the test when DSNEnv is
// unset.
func AdminDSN(t testing.TB) string {
	t.Helper()
	dsn := config.TestPostgres.FromEnv()
	if dsn == "" {
		t.Skipf("PostgreSQL tests skipped: %s is not set (make test starts a throwaway cluster and sets it; "+
			"by hand: internal/pgtest/pgcluster.sh start DIR prints the DSN)", DSNEnv)
	}
	return dsn
}

// NewSchema creates an empty schema for the test in the cluster's
// database, drops it (and everything in it) when the test ends, and
// returns a DSN whose search_path selects it, so the store creates its
// tables there. A schema costs milliseconds where a database costs about
// a second. It skips the test when DSNEnv is unset.
func NewSchema(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "vetlens_test_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("pgtest: connect to $%s: %w", DSNEnv, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s: %w", sql, err)
		}
		return nil
	}
	if err := exec("CREATE SCHEMA " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA IF EXISTS " + name + " CASCADE"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: $%s: %v", DSNEnv, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
