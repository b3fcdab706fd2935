// Package pgtest gives tests a PostgreSQL database of their own. The
// cluster comes from outside: `make test` starts a throwaway one with
// pgcluster.sh (beside this file) and passes its DSN in the environment
// variable DSNEnv; without it the PostgreSQL tests skip and say why.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DSNEnv names the environment variable holding the DSN of a PostgreSQL
// cluster the tests may create and drop databases in.
const DSNEnv = "VETLENS_TEST_POSTGRES"

// AdminDSN returns the cluster's DSN, or skips the test when DSNEnv is
// unset.
func AdminDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(DSNEnv)
	if dsn == "" {
		t.Skipf("PostgreSQL tests skipped: %s is not set (make test starts a throwaway cluster and sets it; "+
			"by hand: internal/pgtest/pgcluster.sh start DIR prints the DSN)", DSNEnv)
	}
	return dsn
}

// NewDatabase creates an empty database for the test, drops it when the
// test ends, and returns its DSN. It skips the test when DSNEnv is unset.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminDSN(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "vetlens_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", DSNEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	dsn, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// WithDatabase returns dsn (a postgres:// URL) naming database db.
func WithDatabase(dsn, db string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}
