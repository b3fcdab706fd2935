package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"vetlens/app"
	"vetlens/assets"
	"vetlens/internal/config"
	"vetlens/internal/lanaddr"
	"vetlens/platform/pacs"
	"vetlens/platform/printing"
	"vetlens/ui"
)

// guiConfig is the parsed `vetlens gui` command line.
type guiConfig struct {
	serveConfig
	serve  bool   // start the HTTPS API in-process
	camera string // capture source spec
	open   string // a radiograph to open on Review at start (--open)
}

// parseGUI parses `vetlens gui` flags; ok is false with the exit status
// when the command should stop (help or a bad command line). Flags not
// given are filled from the window's saved settings (prefs may be nil).
func parseGUI(args []string, stderr io.Writer, prefs fyne.Preferences) (c guiConfig, code int, ok bool) {
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	addr := config.Addr.String(fs, "")
	serve := config.Serve.Bool(fs, false)
	models := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	cam := config.Camera.String(fs, "")
	importDir := config.ImportDir.String(fs, "")
	open := config.Open.String(fs, "")
	tdir := config.TrainDir.String(fs, "")
	python := config.Python.String(fs, "")
	learnPoll := config.LearnPoll.Duration(fs, config.DefaultLearnPoll)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, ExitOK, false
		}
		return c, ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: vetlens gui [--data-dir DIR] [--store bbolt|postgres://...] [--serve] [--addr HOST:PORT] [--camera SPEC] [--import-dir DIR] [--open FILE]")
		return c, ExitUsage, false
	}
	pref := func(key string) string {
		if prefs == nil {
			return ""
		}
		return prefs.String(key)
	}
	dir := firstNonEmpty(*dataDir, pref(ui.PrefDataDir))
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			fmt.Fprintf(stderr, "vetlens gui: no --data-dir and no user config dir: %v\n", err)
			return c, ExitUsage, false
		}
		dir = filepath.Join(base, "vetlens")
	}
	// The listener: the setting saved in the data dir, else one saved by
	// an older version in the window's preferences, else the default;
	// flags given override it for this run (and are not saved).
	ls, found, err := loadListenSetting(dir)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens gui: %v (using the default)\n", err)
	}
	if !found {
		ls = defaultListenSetting()
		if a := pref(ui.PrefListenAddr); a != "" {
			ls = listenSetting{Serve: pref(ui.PrefListenOnStart) == "true", Addr: a}
		}
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "serve":
			ls.Serve = *serve
		case "addr":
			ls.Addr = *addr
		}
	})
	if _, err := lanaddr.Port(ls.Addr); err != nil {
		fmt.Fprintf(stderr, "vetlens gui: --addr: %v\n", err)
		return c, ExitUsage, false
	}
	c = guiConfig{
		serve:  ls.Serve,
		camera: firstNonEmpty(*cam, pref(ui.PrefCamera)), open: *open,
		serveConfig: serveConfig{
			dataDir: dir, store: storeSpec(*storeFlag), addr: ls.Addr, models: config.ModelsDir(*models), ortLib: *ortLib,
			inFlight: config.DefaultMaxInFlight, usgRate: app.DefaultUSGRate, cardiacConc: config.DefaultCardiacConcurrency,
			importDir: *importDir, learnPoll: *learnPoll, trainDir: *tdir, python: *python,
		}}
	return c, ExitOK, true
}

// newMainWindow opens the desktop window: titled with the app's name,
// showing the bundled icon.
func newMainWindow(a fyne.App) fyne.Window {
	a.SetIcon(assets.Icon())
	title := a.Metadata().Name
	if title == "" {
		title = "VetLens"
	}
	w := a.NewWindow(title)
	w.SetIcon(assets.Icon())
	w.Resize(fyne.NewSize(1280, 860))
	return w
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// GUI runs `vetlens gui`: the same app.Service as serve, the HTTPS API
// in-process when switched on (--serve, or as the Server tab left it),
// and the desktop window until it is closed or ctx ends.
func GUI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return GUIDriven(ctx, args, stdout, stderr, nil)
}

// Driver drives the window once the screens are up, as a clinician would
// (the screenshot tool, bench/screenshots: test tooling that is not part
// of the product binary). camera is the --camera source. The window closes
// when it returns; an error makes the exit status ExitInternal.
type Driver func(ctx context.Context, u *ui.UI, w fyne.Window, camera string, stdout io.Writer) error

// GUIDriven is GUI with a driver (nil: the window is the clinician's until
// it is closed). With a driver --camera is required, and the HTTPS API
// serves this computer on a free port (the Server tab then shows a live
// listener without taking the clinic's port).
func GUIDriven(ctx context.Context, args []string, stdout, stderr io.Writer, drive Driver) int {
	// A quiet terminal: complete what Fyne expects of the environment,
	// and turn its reports about the machine into one line each.
	cleanupEnv, err := prepareDesktopEnv()
	if err != nil {
		fmt.Fprintf(stderr, "vetlens gui: %v\n", err)
	}
	defer cleanupEnv()
	logFilter := newFyneLogFilter(stderr)
	prevLog := stdlog.Writer()
	stdlog.SetOutput(logFilter)
	defer func() { logFilter.Close(); stdlog.SetOutput(prevLog) }()

	// The app ID (preferences, storage) and icon are the application
	// metadata, from FyneApp.toml (set by package main).
	a := fyneapp.New()
	if a.Metadata().ID == "" {
		fmt.Fprintln(stderr, "vetlens gui: this binary carries no application metadata (FyneApp.toml)")
		return ExitInternal
	}
	c, code, ok := parseGUI(args, stderr, a.Preferences())
	if !ok {
		return code
	}
	if drive != nil && c.camera == "" {
		fmt.Fprintln(stderr, "vetlens gui: a driven run needs --camera")
		return ExitUsage
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "vetlens gui: data dir: %v\n", err)
		return ExitInternal
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The window opens at once with a loading screen; the store and the
	// models load off the UI goroutine, then the screens replace it.
	w := newMainWindow(a)
	w.SetContent(ui.LoadingScreen("Loading the models and the patient database...", true))
	var (
		mu       sync.Mutex
		status   = ExitOK
		closeAll = func() {}
	)
	fail := func(err error) {
		fmt.Fprintf(stderr, "vetlens gui: %v\n", err)
		mu.Lock()
		status = ExitInternal
		mu.Unlock()
	}
	go func() {
		svc, ls, closeSvc, err := openServices(ctx, c.serveConfig, log)
		if err != nil {
			fail(err)
			fyne.Do(func() {
				w.SetContent(ui.LoadingScreen("VetLens could not start: "+err.Error(), false))
				if drive != nil {
					a.Quit()
				}
			})
			return
		}
		listener := newAPIListener(ctx, svc, c.serveConfig, stdout, log)
		mu.Lock()
		closeAll = func() { listener.stop(); closeSvc() }
		mu.Unlock()
		addr := c.addr
		if drive != nil { // a driven run serves this computer on a free port
			c.serve, addr = true, "127.0.0.1:0"
		}
		if c.serve {
			if err := listener.start(addr); err != nil {
				log.Error("HTTPS API not started; switch it on from the Server tab", "addr", addr, "err", err)
			}
		}
		var u *ui.UI
		fyne.DoAndWait(func() {
			opts := ui.Options{Window: w, Listener: listener, Prefs: a.Preferences(), Printer: printing.System{}, ImportDir: c.importDir, Learn: ls, DataDir: c.dataDir, PACS: pacs.StoreSCU{}}
			addCamera(&opts)
			u = ui.New(svc, opts)
			if c.camera != "" {
				u.SetCaptureSource(c.camera)
			}
			w.SetContent(u.Content())
		})
		mu.Lock()
		closeAll = func() { u.StopImport(); listener.stop(); closeSvc() } // no import measured on a closed store
		mu.Unlock()
		if drive != nil {
			if err := drive(ctx, u, w, c.camera, stdout); err != nil {
				fail(fmt.Errorf("driven run: %w", err))
			}
			fyne.Do(a.Quit)
		} else if c.open != "" {
			openAtStart(u, c.open, log)
		}
	}()
	closed := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done(): // a signal: close the window
			fyne.Do(a.Quit)
		case <-closed:
		}
	}()
	w.ShowAndRun()
	close(closed)
	cancel()
	mu.Lock()
	defer mu.Unlock()
	closeAll()
	return status
}
