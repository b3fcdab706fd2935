// Command screenshots is the end-to-end GUI run of `make test-gui` and
// `make screenshots`: the real desktop app (cli.GUIDriven, the code of
// `vetlens gui`) under Xvfb, driven as a clinician would (a capture
// session on --camera, saving the result for a demo patient, a bloodwork
// screening, the patient's record), with a PNG of every screen written to
// --out. It is test tooling, kept out of the product binary with its XWD
// decoder.
//
//	screenshots --out DIR [--app-toml FyneApp.toml] [--open FILE] -- GUI FLAGS...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"vetlens/assets"
	"vetlens/cli"
	"vetlens/ui"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("screenshots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write a PNG of every screen into this folder (required)")
	toml := fs.String("app-toml", "FyneApp.toml", "the app metadata (app ID, name, icon) the product embeds")
	open := fs.String("open", "", "last, open this radiograph (a DICOM in make test-gui) with the patient field empty: it must be measured and a DICOM's patient must fill the field (NN-open.png); then again for the demo dog: Review must ask whose study it is (NN-mismatch.png); kept for the dog and saved, its report goes to a PACS outbox from the Patients tab (NN-outbox.png)")
	if err := fs.Parse(args); err != nil {
		return cli.ExitUsage
	}
	if *out == "" {
		fmt.Fprintln(stderr, "usage: screenshots --out DIR [--app-toml FILE] [--open FILE] -- [vetlens gui flags, with --camera]")
		return cli.ExitUsage
	}
	b, err := os.ReadFile(*toml)
	if err != nil {
		fmt.Fprintf(stderr, "screenshots: %v\n", err)
		return cli.ExitInternal
	}
	m, err := assets.Metadata(b)
	if err != nil {
		fmt.Fprintf(stderr, "screenshots: %v\n", err)
		return cli.ExitInternal
	}
	fyneapp.SetMetadata(m)
	return cli.GUIDriven(ctx, fs.Args(), stdout, stderr, func(ctx context.Context, u *ui.UI, w fyne.Window, camera string, stdout io.Writer) error {
		if err := screenshotRun(ctx, u, w, camera, *out, stdout); err != nil || *open == "" {
			return err
		}
		if err := screenshotOpen(ctx, u, w, *open, *out, len(u.Tabs())+1, stdout); err != nil {
			return err
		}
		if err := screenshotMismatch(ctx, u, w, *open, *out, len(u.Tabs())+2, stdout); err != nil {
			return err
		}
		return screenshotOutbox(ctx, u, w, *out, len(u.Tabs())+3, stdout)
	})
}
