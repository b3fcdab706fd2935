package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/internal/config"
	"vetlens/internal/pgtest"
	"vetlens/platform/store"
	"vetlens/platform/store/postgres"
)

func TestStoreSpec(t *testing.T) {
	for _, tc := range []struct {
		flag, env, want string
	}{
		{"", "", "bbolt"},
		{"", "postgres://db/vetlens", "postgres://db/vetlens"},
		{"bbolt", "postgres://db/vetlens", "bbolt"},
		{"postgresql://h/x", "", "postgresql://h/x"},
	} {
		t.Setenv(config.Store.Env, tc.env)
		if got := storeSpec(tc.flag); got != tc.want {
			t.Errorf("storeSpec(%q) with $%s=%q = %q, want %q", tc.flag, config.Store.Env, tc.env, got, tc.want)
		}
	}
}

func TestOpenRepos(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, spec, dir, wantErr string
	}{
		{"bbolt", "bbolt", dir, ""},
		{"empty means bbolt", "", t.TempDir(), ""},
		{"bbolt without a data dir", "bbolt", "", "needs a data directory"},
		{"unknown kind", "mysql://db", dir, "want bbolt or a postgres:// URL"},
		{"a path is not a store", "/var/lib/vetlens", dir, "want bbolt or a postgres:// URL"},
		{"unreachable postgres", "postgres://nobody@127.0.0.1:1/none?connect_timeout=2", dir, "postgres: connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, closeFn, err := openRepos(ctx, tc.spec, tc.dir, time.Second)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !r.Complete() {
				t.Fatalf("open: %+v, %v", r, err)
			}
			defer closeFn()
			// bbolt is the data dir's database file, held while open.
			if _, err := store.Open(tc.dir, 50*time.Millisecond); !errors.Is(err, store.ErrLocked) {
				t.Fatalf("second open of the bbolt store: %v, want ErrLocked", err)
			}
		})
	}
}

// TestKeysOnPostgres: `vetlens keys` with --store postgres://... needs
// no data dir and works on the shared database, also while servers run.
func TestKeysOnPostgres(t *testing.T) {
	dsn := pgtest.NewSchema(t)
	ctx := context.Background()
	var out, errb strings.Builder
	if code := Keys(ctx, []string{"create", "--store", dsn, "--customer", "Clinic A"}, &out, &errb); code != ExitOK {
		t.Fatalf("create: %d %s", code, errb.String())
	}
	t.Setenv(config.Store.Env, dsn)
	out.Reset()
	if code := Keys(ctx, []string{"list"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "Clinic A") {
		t.Fatalf("list via $%s: %d %q %s", config.Store.Env, code, out.String(), errb.String())
	}
}

// TestStoreCopyToPostgres: a clinic's bbolt data directory copied into a
// PostgreSQL database: its keys authenticate there and its ledger is the
// same; a second copy is refused (the database is no longer empty).
func TestStoreCopyToPostgres(t *testing.T) {
	dsn := pgtest.NewSchema(t)
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(app.Deps{Repos: st.Repos()}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := svc.Accounts.CreateKey(ctx, "Clinic A", app.TierStarter)
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Accounts.Authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"dog1", "dog2", "dog1"} {
		svc.Accounts.Meter(ctx, c, app.Charge{Service: "cardiac", CallType: app.CallSingle, Valid: true, UUID: u})
	}
	want, err := st.Repos().Ledger.Events(ctx)
	st.Close()
	if err != nil || len(want) != 2 {
		t.Fatalf("source ledger %+v, %v", want, err)
	}

	migrations, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no subcommand", nil, ExitUsage, ""},
		{"both bbolt", []string{"copy", "--data-dir", dir, "--to", "bbolt"}, ExitUsage, ""},
		{"migrate needs postgres", []string{"migrate", "--store", "bbolt"}, ExitUsage, ""},
		{"migrate", []string{"migrate", "--store", dsn}, ExitOK, fmt.Sprintf("schema version %d\n", len(migrations))},
		{"copy", []string{"copy", "--data-dir", dir, "--to", dsn}, ExitOK, "copied 1 keys, 1 customers, 2 ledger events, 0 history entries, 0 USG log entries, 0 patient records, 0 audit events"},
		{"copy again", []string{"copy", "--data-dir", dir, "--to", dsn}, ExitRejected, ""},
	} {
		var out, errb strings.Builder
		if code := StoreCmd(ctx, tc.args, &out, &errb); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%s: exit %d, out %q, err %q; want %d and %q", tc.name, code, out.String(), errb.String(), tc.code, tc.out)
		}
	}
	pg, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	got, err := pg.Repos().Ledger.Events(ctx)
	if err != nil || len(got) != len(want) {
		t.Fatalf("copied ledger %+v, %v", got, err)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || !g.Time.Equal(w.Time.Truncate(time.Microsecond)) || g.UUID != w.UUID || g.Tier != w.Tier || g.RateCents != w.RateCents || g.MonthlyUsage != w.MonthlyUsage {
			t.Errorf("event %d: copied %+v, source %+v", i, g, w)
		}
	}
	psvc, err := app.New(app.Deps{Repos: pg.Repos()}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if pc, err := psvc.Accounts.Authenticate(ctx, key); err != nil || pc.Customer != "Clinic A" {
		t.Fatalf("the clinic's key on PostgreSQL: %+v, %v", pc, err)
	}
}
