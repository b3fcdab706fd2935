package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"vetlens/api/admin"
	"vetlens/app"
	"vetlens/internal/adminsock"
	"vetlens/internal/config"
	"vetlens/platform/store"
	"vetlens/platform/store/postgres"
)

const keysUsage = `usage: vetlens keys create --data-dir DIR --customer NAME [--tier paygo|starter|professional|enterprise]
       vetlens keys list --data-dir DIR
       vetlens keys revoke --data-dir DIR PREFIX|vl_PREFIX|KEY
       (with --store postgres://... or $VETLENS_STORE instead of --data-dir: the keys in that database)`

// keyAdmin is key administration, either on the database directly or
// through a running server's admin socket.
type keyAdmin interface {
	create(ctx context.Context, customer, tier string) (string, app.KeyInfo, error)
	list(ctx context.Context) ([]app.KeyInfo, error)
	revoke(ctx context.Context, prefix string) (app.KeyInfo, error)
}

// Keys runs `vetlens keys create|list|revoke`. When a server (or the GUI)
// holds the database, it talks to that process over its admin socket
// (internal/adminsock: DIR/admin.sock, on Windows loopback TCP with the
// token in DIR/admin.token).
// create prints the key once, on the last line of stdout.
func Keys(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, keysUsage)
		return ExitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	customer := fs.String("customer", "", "customer name (create)")
	tier := fs.String("tier", "", "contracted tier (create; default paygo for a new customer)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	spec := storeSpec(*storeFlag)
	if *dataDir == "" && !postgres.IsDSN(spec) {
		fmt.Fprintln(stderr, keysUsage)
		return ExitUsage
	}
	var want int
	switch sub {
	case "create", "list":
	case "revoke":
		want = 1
	default:
		fmt.Fprintf(stderr, "vetlens keys: unknown subcommand %q\n%s\n", sub, keysUsage)
		return ExitUsage
	}
	if fs.NArg() != want || sub == "create" && *customer == "" {
		fmt.Fprintln(stderr, keysUsage)
		return ExitUsage
	}
	adm, closeFn, err := openKeyAdmin(ctx, spec, *dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens keys: %v\n", err)
		return ExitInternal
	}
	defer closeFn()
	switch sub {
	case "create":
		key, info, err := adm.create(ctx, *customer, *tier)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens keys create: %v\n", err)
			return ExitRejected
		}
		fmt.Fprintf(stdout, "customer: %s\nprefix: %s\ntier: %s\nThe key is shown once; store it now:\n%s\n", info.Customer, info.Prefix, info.Tier, key)
	case "list":
		ks, err := adm.list(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "vetlens keys list: %v\n", err)
			return ExitInternal
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CUSTOMER\tPREFIX\tTIER\tCREATED\tSTATUS\tRECHECKS")
		for _, k := range ks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", k.Customer, k.Prefix, k.Tier, k.Created, k.Status, k.Rechecks)
		}
		tw.Flush()
	case "revoke":
		info, err := adm.revoke(ctx, fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "vetlens keys revoke: %v\n", err)
			return ExitRejected
		}
		fmt.Fprintf(stdout, "revoked %s (%s)\n", info.Prefix, info.Customer)
	}
	return ExitOK
}

// openKeyAdmin opens the storage spec names (openRepos), or, when
// another process holds the bbolt database, connects to that process's
// admin socket. A PostgreSQL database is always opened directly: servers
// share it.
func openKeyAdmin(ctx context.Context, spec, dir string) (keyAdmin, func(), error) {
	repos, closeStore, err := openRepos(ctx, spec, dir, 200*time.Millisecond)
	if err == nil {
		svc, err := app.New(app.Deps{Repos: repos}, app.DefaultConfig())
		if err != nil {
			closeStore()
			return nil, nil, err
		}
		return directAdmin{svc}, func() { closeStore() }, nil
	}
	if !errors.Is(err, store.ErrLocked) {
		return nil, nil, err
	}
	rt, err := adminsock.Transport(adminKind, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("database held by a running server; %w", err)
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: rt}
	return socketAdmin{c}, func() { c.CloseIdleConnections() }, nil
}

type directAdmin struct{ svc *app.Service }

func (d directAdmin) create(ctx context.Context, customer, tier string) (string, app.KeyInfo, error) {
	return d.svc.Accounts.CreateKey(ctx, customer, app.Tier(tier))
}
func (d directAdmin) list(ctx context.Context) ([]app.KeyInfo, error) {
	return d.svc.Accounts.ListKeys(ctx)
}
func (d directAdmin) revoke(ctx context.Context, p string) (app.KeyInfo, error) {
	return d.svc.Accounts.RevokeKey(ctx, p)
}

type socketAdmin struct{ c *http.Client }

func (s socketAdmin) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://admin"+path, body)
	if err != nil {
		return err
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return fmt.Errorf("database held by a running server; admin socket: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.Unmarshal(data, &e)
		return fmt.Errorf("server: %s", e.Error)
	}
	return json.Unmarshal(data, out)
}

func (s socketAdmin) create(ctx context.Context, customer, tier string) (string, app.KeyInfo, error) {
	var out admin.Created
	err := s.call(ctx, "POST", "/keys", admin.CreateRequest{Customer: customer, Tier: tier}, &out)
	return out.Key, app.KeyInfo(out.Info), err
}
func (s socketAdmin) list(ctx context.Context) ([]app.KeyInfo, error) {
	var ks []admin.KeyInfo
	err := s.call(ctx, "GET", "/keys", nil, &ks)
	out := make([]app.KeyInfo, len(ks))
	for i, k := range ks {
		out[i] = app.KeyInfo(k)
	}
	return out, err
}
func (s socketAdmin) revoke(ctx context.Context, p string) (app.KeyInfo, error) {
	var out admin.KeyInfo
	err := s.call(ctx, "POST", "/keys/"+url.PathEscape(p)+"/revoke", nil, &out)
	return app.KeyInfo(out), err
}
