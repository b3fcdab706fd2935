package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"vetlens/app/learn"
	"vetlens/app/learn/learntest"

	"github.com/jackc/pgx/v5/pgconn"

	"vetlens/app/repo"
	"vetlens/internal/pgtest"
	"vetlens/platform/store/storetest"
)

// openTwo opens two stores (two servers) on one new, empty database.
func openTwo(t *testing.T) (a, b *Store) {
	t.Helper()
	dsn := pgtest.NewSchema(t)
	for _, s := range []**Store{&a, &b} {
		st, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		*s = st
	}
	return a, b
}

// openTest opens a new, empty database (skipping without a cluster).
func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.NewSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestContract runs the storage contract (platform/store/storetest) on
// PostgreSQL, each test in a new database.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repo.Repos { return openTest(t).Repos() })
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	ms, err := Migrations()
	if err != nil || len(ms) == 0 || ms[0].Version != 1 || ms[0].Name != "init" {
		t.Fatalf("Migrations() = %+v, %v", ms, err)
	}
	dsn := pgtest.NewSchema(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(ms))
	}
	// A second server opening the migrated database applies nothing.
	s2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	s2.Close()
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations has %d rows, %v; want %d", n, err, len(ms))
	}
	// A database a newer VetLens migrated is refused, not written to.
	if _, err := s.pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'future')`, len(ms)+1); err != nil {
		t.Fatal(err)
	}
	if s3, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "newer") {
		if s3 != nil {
			s3.Close()
		}
		t.Fatalf("open of a newer schema: %v, want refusal", err)
	}
}

// TestConcurrentMigrate: servers starting together on an empty database
// migrate it once.
func TestConcurrentMigrate(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewSchema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, dsn)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLedgerAppendOnly: the database itself refuses to change or remove
// ledger events and USG log entries.
func TestLedgerAppendOnly(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if _, _, _, err := s.Repos().Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"},
		func(repo.BillState) (repo.Event, bool, error) {
			return repo.Event{Time: time.Now(), RateCents: 300}, true, nil
		}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repos().USGLog.Append(ctx, repo.USGLogEntry{Customer: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE ledger SET rate_cents = 0`, `DELETE FROM ledger`, `TRUNCATE ledger`,
		`UPDATE usg_log SET customer = 'b'`, `DELETE FROM usg_log`, `TRUNCATE usg_log CASCADE`,
	} {
		if _, err := s.pool.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only refusal", q, err)
		}
	}
	if evs, err := s.Repos().Ledger.Events(ctx); err != nil || len(evs) != 1 || evs[0].RateCents != 300 {
		t.Fatalf("ledger after the refused changes: %+v, %v", evs, err)
	}
}

// TestTwoStoresBillOneCustomer: two stores on one database (two servers)
// bill one customer at once. The month's count hands out each rank once
// and the 24-hour recheck bills a patient once, because the decision and
// the append share one transaction under the customer's lock.
func TestTwoStoresBillOneCustomer(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewSchema(t)
	var stores [2]*Store
	for i := range stores {
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	now := time.Now().UTC()
	// decide bills unless the patient was billed in the last 24 hours.
	decide := func(st repo.BillState) (repo.Event, bool, error) {
		if !st.LastBilled.IsZero() && now.Sub(st.LastBilled) < 24*time.Hour {
			return repo.Event{}, false, nil
		}
		return repo.Event{Time: now, RateCents: 300}, true, nil
	}
	const perStore, patients = 40, 5
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		ranks  = map[int]int{}
		billed = map[string]int{}
	)
	for i := range stores {
		for j := 0; j < perStore; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("dog-%d", j%patients)
				ev, _, ok, err := stores[i].Repos().Ledger.Bill(ctx, repo.BillRequest{Customer: "group", Month: "2026-03", RecheckUUID: p, IdempotencyKey: repo.NewID()}, decide)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					ranks[ev.MonthlyUsage]++
					billed[p]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for p, n := range billed {
		if n != 1 {
			t.Errorf("patient %s billed %d times within 24 hours", p, n)
		}
	}
	if len(billed) != patients || len(ranks) != patients {
		t.Fatalf("billed %v, ranks %v; want %d patients billed once, ranks 1..%d", billed, ranks, patients, patients)
	}
	for r := 1; r <= patients; r++ {
		if ranks[r] != 1 {
			t.Errorf("rank %d handed out %d times", r, ranks[r])
		}
	}
	if n, err := stores[0].Repos().Ledger.MonthlyUsage(ctx, "group", "2026-03"); err != nil || n != patients {
		t.Fatalf("usage %d, %v; want %d", n, err, patients)
	}
}

// TestRetryable: which failures Bill runs again.
func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"deadlock", fmt.Errorf("append: %w", &pgconn.PgError{Code: "40P01"}), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"append-only refusal", &pgconn.PgError{Code: "P0001"}, false},
		{"connection reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"unexpected EOF", fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), true},
		{"a decision's error", errDecide{errors.New("no")}, false},
		{"canceled", context.Canceled, false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("%s: retryable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSameKeyFromTwoStores: one idempotency key billed at once through
// two stores (a retry racing its own first attempt on another
// connection) appends one event; both calls answer it.
func TestSameKeyFromTwoStores(t *testing.T) {
	ctx := context.Background()
	a, b := openTwo(t)
	for round := 0; round < 20; round++ {
		req := repo.BillRequest{Customer: "c", Month: "2026-03", IdempotencyKey: repo.NewID()}
		var (
			wg  sync.WaitGroup
			evs [2]repo.Event
		)
		for i, s := range []*Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ev, _, billed, err := s.Repos().Ledger.Bill(ctx, req, func(repo.BillState) (repo.Event, bool, error) {
					return repo.Event{Time: time.Now(), RateCents: 300}, true, nil
				})
				if err != nil || !billed {
					t.Errorf("round %d store %d: billed %v, %v", round, i, billed, err)
				}
				evs[i] = ev
			}()
		}
		wg.Wait()
		if evs[0].Seq != evs[1].Seq || evs[0].ID != req.IdempotencyKey || evs[0].MonthlyUsage != round+1 {
			t.Fatalf("round %d: the two calls answered %+v and %+v", round, evs[0], evs[1])
		}
	}
	if n, err := a.Repos().Ledger.MonthlyUsage(ctx, "c", "2026-03"); err != nil || n != 20 {
		t.Fatalf("usage %d, %v; want 20 (one event per key)", n, err)
	}
}

func BenchmarkBill(b *testing.B) {
	s, err := Open(context.Background(), pgtest.NewSchema(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchmarkBill(b, s.Repos())
}

// TestUpgrade: a database at version 1 gets only the newer migrations;
// a failing migration changes nothing, not even the ones before it in
// the same run.
func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	next := len(ms) + 1
	add := Migration{Version: next, Name: "customer_note", SQL: `ALTER TABLE customers ADD COLUMN note text NOT NULL DEFAULT ''`}
	broken := Migration{Version: next + 1, Name: "broken", SQL: `CREATE TABLE half_done (x int); SELECT 1/0;`}
	version := func() int {
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	exists := func(table, column string) bool {
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND ($2 = '' OR column_name = $2)`, table, column).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	if err := applyMigrations(ctx, s.pool, append(ms, add, broken)); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("a failing migration: %v", err)
	}
	if version() != len(ms) || exists("customers", "note") || exists("half_done", "") {
		t.Fatalf("after a failed run: version %d, note column %v, half_done %v; want nothing changed", version(), exists("customers", "note"), exists("half_done", ""))
	}
	for i := 0; i < 2; i++ { // the second run finds nothing to do
		if err := applyMigrations(ctx, s.pool, append(ms, add)); err != nil {
			t.Fatal(err)
		}
		if version() != next || !exists("customers", "note") {
			t.Fatalf("run %d: version %d, note column %v", i, version(), exists("customers", "note"))
		}
	}
	// The stores work on the upgraded schema.
	if err := s.Repos().Customers.Put(ctx, repo.Customer{Name: "a", Tier: "paygo", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// TestModelRegistry: the active version is shared by two connections
// (two servers), a published version's files come back byte for byte in
// their subfolders, a version is published once, and an unknown one is
// learn.ErrUnknownVersion.
func TestModelRegistry(t *testing.T) {
	ctx := context.Background()
	a, b := openTwo(t)
	ra, rb := a.ModelRegistry(), b.ModelRegistry()
	if v, err := rb.Active(ctx); err != nil || v != "" {
		t.Fatalf("fresh active %q %v", v, err)
	}
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "reference"), 0o755)
	os.WriteFile(filepath.Join(src, "manifest.json"), []byte(`{"x":1}`), 0o644)
	os.WriteFile(filepath.Join(src, "reference", "in.f32"), []byte{0, 1, 2, 255}, 0o644)
	if err := ra.Publish(ctx, "v3.1.0-clinic.1", src); err != nil {
		t.Fatal(err)
	}
	if err := ra.Publish(ctx, "v3.1.0-clinic.1", src); err == nil {
		t.Error("published twice")
	}
	if err := ra.SetActive(ctx, "v3.1.0-clinic.1"); err != nil {
		t.Fatal(err)
	}
	if v, _ := rb.Active(ctx); v != "v3.1.0-clinic.1" {
		t.Errorf("other server sees %q", v)
	}
	dst := filepath.Join(t.TempDir(), "v")
	if err := rb.Fetch(ctx, "v3.1.0-clinic.1", dst); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"manifest.json", filepath.Join("reference", "in.f32")} {
		w, _ := os.ReadFile(filepath.Join(src, f))
		g, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil || string(g) != string(w) {
			t.Errorf("%s: %q %v", f, g, err)
		}
	}
	if err := rb.Fetch(ctx, "v3.1.0-clinic.2", t.TempDir()); !errors.Is(err, learn.ErrUnknownVersion) {
		t.Errorf("unknown version: %v", err)
	}
	if vs, err := rb.Published(ctx); err != nil || len(vs) != 1 {
		t.Errorf("published %v %v", vs, err)
	}
	if err := rb.SetActive(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if v, _ := ra.Active(ctx); v != "" {
		t.Errorf("rollback to shipped seen as %q", v)
	}
}

// TestModelRegistryTwoServers: a version promoted by one server (its own
// data directory) is fetched and served by another on the same
// database, and a rollback there reaches the first.
func TestModelRegistryTwoServers(t *testing.T) {
	ctx := context.Background()
	sa, sb := openTwo(t)
	a := learntest.NewRigOn(t, learntest.Trainer{}, learntest.Models{}, sa.ModelRegistry())
	b := learntest.NewRigOn(t, learntest.Trainer{}, learntest.Models{}, sb.ModelRegistry())
	run, err := a.Svc.Learn(ctx, learn.Options{}, nil)
	if err != nil || !run.Promoted {
		t.Fatalf("learn on A: %v %s", err, run.Refusal())
	}
	if err := b.Svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Live.ModelVersion() != run.Candidate {
		t.Fatalf("B serves %s", b.Live.ModelVersion())
	}
	if _, err := os.Stat(filepath.Join(b.Layout.Versions(), run.Candidate, "manifest.json")); err != nil {
		t.Errorf("B did not fetch the version: %v", err)
	}
	if _, err := b.Svc.Use(ctx, learn.ShippedAlias); err != nil {
		t.Fatal(err)
	}
	if err := a.Svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Live.ModelVersion() != "v3.1.0-synthetic-xraysim.1" {
		t.Errorf("A serves %s after B's rollback", a.Live.ModelVersion())
	}
	// The next version number counts the database's versions too.
	run2, err := b.Svc.Learn(ctx, learn.Options{}, nil)
	if err != nil || run2.Candidate != "v3.1.0-clinic.2" {
		t.Errorf("B's run: %s %v", run2.Candidate, err)
	}
}
