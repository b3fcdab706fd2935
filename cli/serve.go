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
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/ort"
	"vetlens/engine/usg"
	"vetlens/platform/httpapi"
	"vetlens/platform/store"
)

// AdminSocket is the unix socket in the data dir through which `vetlens
// keys` reaches a running server (mode 0600: only the owner).
const AdminSocket = "admin.sock"

// Serve runs `vetlens serve`: the LAN API over HTTPS until ctx ends, then
// a graceful shutdown that lets in-flight requests finish. It prints the
// address and the certificate's SHA-256 fingerprint to stdout.
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory: database, certificate, admin socket (required)")
	addr := fs.String("addr", "0.0.0.0:8443", "HTTPS listen address HOST:PORT")
	certPath := fs.String("cert", "", "TLS certificate PEM (default: self-signed, generated into the data dir)")
	keyPath := fs.String("key", "", "TLS private key PEM (with --cert)")
	redirect := fs.String("redirect-addr", "", "also serve plain HTTP here, redirecting to HTTPS")
	public := fs.String("public-host", "", "host name or address clients use, the HTTP redirect's target (default: the --addr host, or the machine's host name for 0.0.0.0)")
	models := fs.String("models", "", "models directory (default $"+ModelsEnv+", then models beside the executable, then ./models)")
	ortLib := fs.String("ort-lib", "", "ONNX Runtime shared library (default: search)")
	inFlight := fs.Int("max-in-flight", 32, "requests in flight per API key before 429")
	usgRate := dollarsFlag(app.DefaultUSGRate)
	fs.Var(&usgRate, "usg-rate", "flat price of one USG prediction, dollars with at most 2 decimals")
	cardiacConc := fs.Int("cardiac-concurrency", 1, "cardiac images measured at once across all requests")
	pixelMB := fs.Int64("pixel-budget-mb", 0, "memory budget for decoded image pixels across all requests, MiB (0: total memory / 16, within 256-4096)")
	pixelWait := fs.Duration("pixel-wait", 0, "how long an image waits for room in the pixel budget before 503 (0: 2s)")
	popSessions := fs.Int("max-pop-sessions", app.DefaultMaxOpenSessionsPerKey, "open PoP capture sessions per API key before 429")
	importDir := fs.String("import-dir", "", "watched import folder: new DICOM, JPEG and PNG files are measured and logged (docs/dicom.md)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *dataDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: vetlens serve --data-dir DIR [--addr HOST:PORT] [--cert FILE --key FILE] [--redirect-addr HOST:PORT]")
		return ExitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if err := serve(ctx, serveConfig{
		dataDir: *dataDir, addr: *addr, cert: *certPath, key: *keyPath, redirect: *redirect, publicHost: *public,
		models: ModelsDir(*models), ortLib: *ortLib, inFlight: *inFlight, usgRate: app.Cents(usgRate), cardiacConc: *cardiacConc,
		pixelBudget: *pixelMB << 20, pixelWait: *pixelWait, popSessions: *popSessions, importDir: *importDir,
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
	// importDir is the watched import folder ("": none).
	importDir string
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
// in c.dataDir and whatever engines load from c.models (a missing ONNX
// Runtime or model is a warning: its endpoints answer 503). The PoP
// sweeper runs until ctx ends. closeAll releases the engines and the store.
func openService(ctx context.Context, c serveConfig, log *slog.Logger) (svc *app.Service, closeAll func(), err error) {
	st, err := store.Open(c.dataDir, time.Second)
	if err != nil {
		return nil, nil, err
	}
	closers := []func() error{st.Close}
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	deps := app.Deps{Repos: st.Repos()}
	if err := ort.Init(c.ortLib); err != nil {
		log.Warn("ONNX Runtime unavailable: prediction endpoints answer 503", "err", err)
	} else {
		if e, err := usg.Load(c.models); err != nil {
			log.Warn("USG model not loaded", "err", err)
		} else {
			closers = append(closers, e.Close)
			deps.USG = e
		}
		if e, err := cardiac.Load(c.models, cardiac.DefaultOptions()); err != nil {
			log.Warn("cardiac models not loaded", "err", err)
		} else {
			closers = append(closers, e.Close)
			deps.Cardiac = e
			// The PoP pipeline (classical geometry, no model files) needs
			// the cardiac engine to measure rectified frames.
			mgr := capture.NewManager(capture.DefaultConfig(), e, capture.PoP{}, time.Now)
			go mgr.RunSweeper(ctx, 30*time.Second)
			deps.PoP = capture.NewService(mgr, e, capture.PoP{})
		}
	}
	cfg := app.DefaultConfig()
	cfg.USGRate = c.usgRate
	cfg.CardiacConcurrency = c.cardiacConc
	cfg.PixelBudget, cfg.PixelWait = c.pixelBudget, c.pixelWait
	cfg.MaxOpenSessionsPerKey = c.popSessions
	svc, err = app.New(deps, cfg)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	go svc.RunSessionSweeper(ctx, time.Minute)
	return svc, closeAll, nil
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
	admin, err := listenAdmin(c.dataDir)
	if err != nil {
		ln.Close()
		return err
	}
	api := httpapi.New(svc, httpapi.Config{MaxInFlightPerKey: c.inFlight, Logger: log})
	srv := api.HTTPServer(httpapi.TLSConfig(cert))
	srv.ConnState = c.connState
	if created {
		fmt.Fprintf(stdout, "generated a self-signed certificate in %s\n", c.dataDir)
	}
	fmt.Fprintf(stdout, "vetlens: serving https://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "certificate SHA-256 fingerprint: %s\n", Fingerprint(cert))
	fmt.Fprintf(stdout, "public key pin (curl --pinnedpubkey): %s\n", PublicKeyPin(cert))
	fmt.Fprintf(stdout, "image pixel memory budget: %d MiB\n", svc.PixelStats().Capacity>>20)
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
		return httpapi.Serve(ctx, &http.Server{Handler: httpapi.AdminHandler(svc), ReadHeaderTimeout: 5 * time.Second}, admin, 5*time.Second)
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
		run(func() error {
			return httpapi.Serve(ctx, &http.Server{Handler: httpapi.RedirectHandler(public, port),
				ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}, rl, 5*time.Second)
		})
	}
	wg.Wait()
	os.Remove(filepath.Join(c.dataDir, AdminSocket))
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

// listenAdmin listens on DIR/admin.sock with mode 0600. A socket left by
// a crashed server is removed: holding the database lock proves no live
// server owns it.
func listenAdmin(dir string) (net.Listener, error) {
	path := filepath.Join(dir, AdminSocket)
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return ln, nil
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
