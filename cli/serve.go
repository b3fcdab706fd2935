package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"vetlens/app"
	"vetlens/app/learn"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/internal/adminsock"
	"vetlens/internal/config"
	"vetlens/internal/diskfree"
	"vetlens/platform/httpapi"
)

// adminKind is the admin socket's transport: the system's own
// (adminsock.Native); tests set the other.
var adminKind = adminsock.Native

// Serve runs `vetlens serve`: the LAN API over HTTPS until ctx ends, then
// a graceful shutdown that lets in-flight requests finish. It prints the
// address and the certificate's SHA-256 fingerprint to stdout.
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	addr := config.Addr.String(fs, config.DefaultAddr)
	certPath := config.Cert.String(fs, "")
	keyPath := config.Key.String(fs, "")
	redirect := config.RedirectAddr.String(fs, "")
	public := config.PublicHost.String(fs, "")
	models := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	inFlight := config.MaxInFlight.Int(fs, config.DefaultMaxInFlight)
	usgRate := dollarsFlag(app.DefaultUSGRate)
	config.USGRate.Var(fs, &usgRate)
	cardiacConc := config.CardiacConcurrency.Int(fs, config.DefaultCardiacConcurrency)
	pixelMB := config.PixelBudgetMB.Int64(fs, 0)
	pixelWait := config.PixelWait.Duration(fs, 0)
	popSessions := config.MaxPoPSessions.Int(fs, config.DefaultMaxPoPSessions)
	freeRechecks := config.MaxFreeRechecks.Int(fs, 0)
	importDir := config.ImportDir.String(fs, "")
	learnPoll := config.LearnPoll.Duration(fs, config.DefaultLearnPoll)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *dataDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: vetlens serve --data-dir DIR [--store bbolt|postgres://...] [--addr HOST:PORT] [--cert FILE --key FILE] [--redirect-addr HOST:PORT]")
		return ExitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if err := serve(ctx, serveConfig{
		dataDir: *dataDir, store: storeSpec(*storeFlag), addr: *addr, cert: *certPath, key: *keyPath, redirect: *redirect, publicHost: *public,
		models: config.ModelsDir(*models), ortLib: *ortLib, inFlight: *inFlight, usgRate: app.Cents(usgRate), cardiacConc: *cardiacConc,
		pixelBudget: *pixelMB << 20, pixelWait: *pixelWait, popSessions: *popSessions, importDir: *importDir,
		learnPoll: *learnPoll, freeRechecks: *freeRechecks,
	}, stdout, logger); err != nil {
		fmt.Fprintf(stderr, "vetlens serve: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}

// serveConfig is the configuration of the service and its HTTPS API, the
// one place where settings live: `vetlens serve` fills it from flags and
// `vetlens gui` from flags and the window's saved settings (defaults where
// a field is zero). docs/security.md lists the limits it sets.
type serveConfig struct {
	dataDir, addr, cert, key, redirect, models, ortLib string
	// store is the storage: "bbolt" (in dataDir) or a postgres:// URL
	// (openRepos).
	store string
	// publicHost is the redirect's target host (publicHost()).
	publicHost            string
	inFlight, cardiacConc int
	usgRate               app.Cents
	// pixelBudget is app.Config.PixelBudget in bytes (0: sized from the
	// machine); pixelWait is app.Config.PixelWait (0: default).
	pixelBudget int64
	pixelWait   time.Duration
	// popSessions is app.Config.MaxOpenSessionsPerKey (0: default).
	popSessions int
	// freeRechecks is app.Config.MaxFreeRechecks (0: no cap).
	freeRechecks int
	// importDir is the watched import folder ("": none).
	importDir string
	// learnPoll is how often the active model version is checked (0:
	// config.DefaultLearnPoll); trainDir and python run the trainer
	// ("": defaults).
	learnPoll        time.Duration
	trainDir, python string
	// ready, when set, is called once the listeners are open, with the
	// bound HTTPS address and the certificate.
	ready func(addr string, cert tls.Certificate)
	// connState, when set, is the HTTPS server's connection state hook
	// (the desktop counts its LAN clients with it).
	connState func(net.Conn, http.ConnState)
}

func serve(ctx context.Context, c serveConfig, stdout io.Writer, log *slog.Logger) error {
	svc, closeSvc, err := openService(ctx, c, log)
	if err != nil {
		return err
	}
	if c.importDir != "" {
		if err := watchImports(ctx, svc, c.importDir, log); err != nil {
			closeSvc()
			return err
		}
	}
	defer closeSvc()
	return serveAPI(ctx, svc, c, stdout, log)
}

// openService builds the app.Service that serve and gui share: the store
// c.store names (bbolt in c.dataDir by default) and whatever engines load from c.models (a missing ONNX
// Runtime or model is a warning: its endpoints answer 503). The PoP
// sweeper runs until ctx ends. closeAll releases the engines and the store.
func openService(ctx context.Context, c serveConfig, log *slog.Logger) (svc *app.Service, closeAll func(), err error) {
	svc, _, closeAll, err = openServices(ctx, c, log)
	return svc, closeAll, err
}

// openServices is openService with the learning service, whose active
// cardiac model version the service measures with: loaded at start and
// followed every c.learnPoll (a promotion or rollback by `vetlens learn`,
// `vetlens models use` or another server on the same database).
func openServices(ctx context.Context, c serveConfig, log *slog.Logger) (svc *app.Service, ls *learn.Service, closeAll func(), err error) {
	repos, closeStore, err := openRepos(ctx, c.store, c.dataDir, time.Second)
	if err != nil {
		return nil, nil, nil, err
	}
	closers := []func() error{closeStore}
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// A run started from the desktop's Learning tab logs the trainer's
	// messages where `vetlens learn` does.
	var trainerLog io.Writer
	if err := os.MkdirAll(LearnDir(c.dataDir), 0o755); err == nil {
		if f, err := os.OpenFile(filepath.Join(LearnDir(c.dataDir), "trainer.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			trainerLog = f
			closers = append(closers, f.Close)
		}
	}
	ls, closeLearn, err := openLearn(ctx, learnConfig{dataDir: c.dataDir, store: c.store, models: c.models, ortLib: c.ortLib,
		trainDir: c.trainDir, python: c.python, log: trainerLog})
	var cardiacDir string
	if err != nil {
		log.Warn("model versions unavailable: the shipped cardiac models are used", "err", err)
		ls = nil
	} else {
		closers = append(closers, func() error { closeLearn(); return nil })
		if cardiacDir, err = ls.ActiveDir(ctx); err != nil {
			log.Warn("the active cardiac model version does not resolve: the shipped models are used", "err", err)
			cardiacDir = ""
		}
	}
	deps, closeEngines, err := loadEngines(ctx, c.models, c.ortLib, localNeeds{cardiac: true, usg: true, cardiacDir: cardiacDir}, func(part string, err error) error {
		log.Warn(part+" not loaded: its endpoints answer 503", "err", err)
		return nil
	})
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	closers = append(closers, func() error { closeEngines(); return nil })
	if live, ok := deps.Cardiac.(*learn.Live); ok && ls != nil {
		ls.Attach(live, func(dir string) (learn.Engine, error) { return cardiacort.Load(dir, cardiac.DefaultOptions()) })
		poll := c.learnPoll
		if poll <= 0 {
			poll = config.DefaultLearnPoll
		}
		go ls.Follow(ctx, poll, func(err error) { log.Warn("cardiac model version not followed", "err", err) })
	}
	deps.Repos = repos
	if c.store == "" || c.store == "bbolt" {
		// The free-space guard watches the bbolt store's filesystem
		// (internal/config's Disk* thresholds); a remote store has none.
		deps.Disk = diskfree.Dir{Path: c.dataDir}
	}
	cfg := app.DefaultConfig()
	cfg.USGRate = c.usgRate
	cfg.CardiacConcurrency = c.cardiacConc
	cfg.PixelBudget, cfg.PixelWait = c.pixelBudget, c.pixelWait
	cfg.MaxOpenSessionsPerKey = c.popSessions
	cfg.MaxFreeRechecks = c.freeRechecks
	svc, err = app.New(deps, cfg)
	if err != nil {
		closeAll()
		return nil, nil, nil, err
	}
	return svc, ls, closeAll, nil
}

// serveAPI runs the HTTPS API and the admin socket for svc until ctx ends
// or a listener fails.
func serveAPI(ctx context.Context, svc *app.Service, c serveConfig, stdout io.Writer, log *slog.Logger) error {
	cert, created, err := loadOrCreateCert(c.dataDir, c.cert, c.key)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	admin, err := adminsock.Listen(adminKind, c.dataDir)
	if err != nil {
		ln.Close()
		return err
	}
	api := httpapi.New(svc, httpapi.Config{MaxInFlightPerKey: c.inFlight, Logger: log})
	ln = api.Listener(ln) // the connection limits
	srv := api.HTTPServer(httpapi.TLSConfig(cert))
	srv.ConnState = c.connState
	if created {
		fmt.Fprintf(stdout, "generated a self-signed certificate in %s\n", c.dataDir)
	}
	fmt.Fprintf(stdout, "vetlens: serving https://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "certificate SHA-256 fingerprint: %s\n", Fingerprint(cert))
	fmt.Fprintf(stdout, "public key pin (curl --pinnedpubkey): %s\n", PublicKeyPin(cert))
	fmt.Fprintf(stdout, "image pixel memory budget: %d MiB\n", svc.Status.PixelStats().Capacity>>20)
	if c.ready != nil {
		c.ready(ln.Addr().String(), cert)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	run(func() error { return httpapi.Serve(ctx, srv, ln, 305*time.Second) })
	run(func() error {
		return httpapi.Serve(ctx, &http.Server{Handler: admin.Handler(httpapi.AdminHandler(svc)), ReadHeaderTimeout: 5 * time.Second}, admin, 5*time.Second)
	})
	if c.redirect != "" {
		rl, err := net.Listen("tcp", c.redirect)
		if err != nil {
			cancel()
			wg.Wait()
			return fmt.Errorf("listen redirect: %w", err)
		}
		fmt.Fprintf(stdout, "vetlens: redirecting http://%s to https\n", rl.Addr())
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		public := publicHost(c.publicHost, host)
		fmt.Fprintf(stdout, "vetlens: redirect target https://%s\n", net.JoinHostPort(public, port))
		rl = api.Listener(rl)
		run(func() error {
			return httpapi.Serve(ctx, &http.Server{Handler: httpapi.RedirectHandler(public, port),
				ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}, rl, 5*time.Second)
		})
	}
	wg.Wait()
	admin.Close()
	close(errs)
	return <-errs
}

// publicHost is the host clients reach the API at, for the HTTP to HTTPS
// redirect: the configured one (--public-host), else the listen host
// when it is a specific address, else the machine's host name (which the
// self-signed certificate names). Never a request's Host header.
func publicHost(configured, listenHost string) string {
	if configured != "" {
		return configured
	}
	if ip := net.ParseIP(listenHost); listenHost != "" && (ip == nil || !ip.IsUnspecified()) {
		return listenHost
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// dollarsFlag is a flag holding an amount of money, set as dollars with
// at most two decimals ("0.50") and kept in cents (app.ParseDollars).
type dollarsFlag app.Cents

func (d *dollarsFlag) String() string { return strings.TrimPrefix(app.Cents(*d).String(), "$") }

func (d *dollarsFlag) Set(s string) error {
	c, err := app.ParseDollars(s)
	if err != nil {
		return err
	}
	*d = dollarsFlag(c)
	return nil
}
