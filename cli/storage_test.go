package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"vetlens/internal/pgtest"
	"vetlens/platform/store"
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
		t.Setenv(StoreEnv, tc.env)
		if got := storeSpec(tc.flag); got != tc.want {
			t.Errorf("storeSpec(%q) with $%s=%q = %q, want %q", tc.flag, StoreEnv, tc.env, got, tc.want)
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
	dsn := pgtest.NewDatabase(t)
	ctx := context.Background()
	var out, errb strings.Builder
	if code := Keys(ctx, []string{"create", "--store", dsn, "--customer", "Clinic A"}, &out, &errb); code != ExitOK {
		t.Fatalf("create: %d %s", code, errb.String())
	}
	t.Setenv(StoreEnv, dsn)
	out.Reset()
	if code := Keys(ctx, []string{"list"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "Clinic A") {
		t.Fatalf("list via $%s: %d %q %s", StoreEnv, code, out.String(), errb.String())
	}
}
