package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"vetlens/app"
	"vetlens/app/repo"
	"vetlens/internal/config"
	"vetlens/platform/store"
	"vetlens/platform/store/postgres"
)

// storeSpec resolves the storage (config.Store): the flag, then
// $VETLENS_STORE, then bbolt.
func storeSpec(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := config.Store.FromEnv(); v != "" {
		return v
	}
	return "bbolt"
}

// openRepos opens the storage spec names: "bbolt" (or empty) is the
// embedded database in dataDir, waiting up to lockTimeout for another
// process's lock (store.ErrLocked); a postgres:// or postgresql:// URL is
// a PostgreSQL database, migrated to this binary's schema. close releases
// it.
func openRepos(ctx context.Context, spec, dataDir string, lockTimeout time.Duration) (r repo.Repos, close func() error, err error) {
	switch {
	case spec == "" || spec == "bbolt":
		if dataDir == "" {
			return repo.Repos{}, nil, fmt.Errorf("the bbolt store needs a data directory")
		}
		st, err := store.Open(dataDir, lockTimeout)
		if err != nil {
			return repo.Repos{}, nil, err
		}
		return st.Repos(), st.Close, nil
	case postgres.IsDSN(spec):
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := postgres.Open(ctx, spec)
		if err != nil {
			return repo.Repos{}, nil, err
		}
		return st.Repos(), st.Close, nil
	default:
		return repo.Repos{}, nil, fmt.Errorf("--store %q: want bbolt or a postgres:// URL", spec)
	}
}

const storeCmdUsage = `usage: vetlens store migrate --store postgres://...
       vetlens store copy [--data-dir DIR] --from bbolt|postgres://... --to bbolt|postgres://...`

// StoreCmd runs `vetlens store`: migrate brings a PostgreSQL database
// to this binary's schema (as serve would at start) and prints its
// version; copy copies every record from one store into another, empty
// one (app.CopyStore), for example a clinic's bbolt data directory into
// a group's PostgreSQL database. The bbolt side is --data-dir, and must
// not be held by a running server.
func StoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, storeCmdUsage)
		return ExitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("store "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	spec := config.Store.String(fs, "")
	from := fs.String("from", "bbolt", "the store to copy from (copy)")
	to := fs.String("to", "", "the store to copy into, empty (copy)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, storeCmdUsage)
		return ExitUsage
	}
	switch sub {
	case "migrate":
		dsn := storeSpec(*spec)
		if !postgres.IsDSN(dsn) {
			fmt.Fprintln(stderr, "vetlens store migrate: --store (or $"+config.Store.Env+") must be a postgres:// URL; bbolt needs no migration")
			return ExitUsage
		}
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens store migrate: %v\n", err)
			return ExitInternal
		}
		defer st.Close()
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens store migrate: %v\n", err)
			return ExitInternal
		}
		fmt.Fprintf(stdout, "schema version %d\n", v)
	case "copy":
		if *to == "" || postgres.IsDSN(*from) == postgres.IsDSN(*to) {
			fmt.Fprintln(stderr, "vetlens store copy: one side bbolt (--data-dir), the other a postgres:// URL")
			fmt.Fprintln(stderr, storeCmdUsage)
			return ExitUsage
		}
		src, closeSrc, err := openRepos(ctx, *from, *dataDir, time.Second)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens store copy: from: %v\n", err)
			return ExitInternal
		}
		defer closeSrc()
		dst, closeDst, err := openRepos(ctx, *to, *dataDir, time.Second)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens store copy: to: %v\n", err)
			return ExitInternal
		}
		defer closeDst()
		n, err := app.CopyStore(ctx, src, dst)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens store copy: %v\n", err)
			if errors.Is(err, app.ErrStoreNotEmpty) {
				return ExitRejected
			}
			return ExitInternal
		}
		fmt.Fprintf(stdout, "copied %d keys, %d customers, %d ledger events, %d history entries, %d USG log entries, %d patient records, %d audit events\n",
			n.Keys, n.Customers, n.Events, n.History, n.USGLog, n.Patients, n.Audit)
	default:
		fmt.Fprintf(stderr, "vetlens store: unknown subcommand %q\n%s\n", sub, storeCmdUsage)
		return ExitUsage
	}
	return ExitOK
}
