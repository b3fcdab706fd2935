package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"vetlens/app/repo"
	"vetlens/platform/store"
	"vetlens/platform/store/postgres"
)

// StoreEnv is the environment variable selecting the storage when
// --store is not given (docs/storage.md).
const StoreEnv = "VETLENS_STORE"

// storeUsage is the --store flag's help.
const storeUsage = "storage: bbolt (the embedded database in the data dir, the default) or a postgres:// URL shared by several servers (default $" + StoreEnv + ")"

// storeSpec resolves the storage: the flag, then $VETLENS_STORE, then
// bbolt.
func storeSpec(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := os.Getenv(StoreEnv); v != "" {
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
