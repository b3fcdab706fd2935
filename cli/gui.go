package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"vetlens/app"
	"vetlens/ui"
)

// GUIAppID is the Fyne application id (preferences, storage).
const GUIAppID = "com.vetlens.desktop"

// guiConfig is the parsed `vetlens gui` command line.
type guiConfig struct {
	serveConfig
	serve bool // run the HTTPS API in-process
}

// parseGUI parses `vetlens gui` flags; ok is false with the exit status
// when the command should stop (help or a bad command line).
func parseGUI(args []string, stderr io.Writer) (c guiConfig, code int, ok bool) {
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "", "data directory: database, certificate (default: the user config dir's vetlens folder)")
	addr := fs.String("addr", "0.0.0.0:8443", "HTTPS listen address HOST:PORT, with --serve")
	serve := fs.Bool("serve", false, "also serve the LAN API over HTTPS from this process")
	models := fs.String("models", "", "models directory (default $"+ModelsEnv+", then models beside the executable, then ./models)")
	ortLib := fs.String("ort-lib", "", "ONNX Runtime shared library (default: search)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, ExitOK, false
		}
		return c, ExitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: vetlens gui [--data-dir DIR] [--serve [--addr HOST:PORT]]")
		return c, ExitUsage, false
	}
	dir := *dataDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			fmt.Fprintf(stderr, "vetlens gui: no --data-dir and no user config dir: %v\n", err)
			return c, ExitUsage, false
		}
		dir = filepath.Join(base, "vetlens")
	}
	c = guiConfig{serve: *serve, serveConfig: serveConfig{
		dataDir: dir, addr: *addr, models: ModelsDir(*models), ortLib: *ortLib,
		inFlight: 32, usgRate: app.DefaultUSGRate, cardiacConc: 1,
	}}
	return c, ExitOK, true
}

// GUI runs `vetlens gui`: the same app.Service as serve, optionally the
// HTTPS API in-process (--serve), and the desktop window until it is
// closed or ctx ends.
func GUI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, code, ok := parseGUI(args, stderr)
	if !ok {
		return code
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "vetlens gui: data dir: %v\n", err)
		return ExitInternal
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	svc, closeSvc, err := openService(ctx, c.serveConfig, log)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens gui: %v\n", err)
		return ExitInternal
	}
	defer closeSvc()

	a := fyneapp.NewWithID(GUIAppID)
	info := ""
	var served chan error // nil (never ready) without --serve
	if c.serve {
		info = "The HTTPS API is served from this process at " + c.addr + " (the certificate fingerprint is printed in the terminal)."
		served = make(chan error, 1)
		go func() { served <- serveAPI(ctx, svc, c.serveConfig, stdout, log) }()
	}
	w := a.NewWindow("VetLens")
	u := ui.New(svc, ui.Options{Window: w, ServerInfo: info})
	w.SetContent(u.Content())
	w.Resize(fyne.NewSize(1200, 800))
	go func() {
		select {
		case <-ctx.Done():
			fyne.Do(a.Quit)
		case err := <-served:
			if err != nil {
				log.Error("HTTPS API stopped; the window stays open", "err", err)
			}
			served <- err // for the exit status below
		}
	}()
	w.ShowAndRun()
	cancel()
	if served == nil {
		return ExitOK
	}
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "vetlens gui: API: %v\n", err)
		return ExitInternal
	}
	return ExitOK
}
