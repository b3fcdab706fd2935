package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"vetlens/app"
	"vetlens/app/dogheart"
	"vetlens/app/learn"
	"vetlens/internal/config"
)

const datasetUsage = `usage: vetlens dataset export --data-dir DIR [--store bbolt|postgres://...] OUT
       vetlens dataset import --data-dir DIR SRC`

// PoolDir is the learning pool's folder under a data directory.
func PoolDir(dataDir string) string { return learn.Layout{Dir: filepath.Join(dataDir, "learn")}.Pool() }

// saltPath is where the patient-hash salt is kept (never exported).
func saltPath(dataDir string) string {
	return learn.Layout{Dir: filepath.Join(dataDir, "learn")}.Salt()
}

// Dataset runs `vetlens dataset export|import` (app.ExportDataset,
// app.ImportDataset; docs/dataset.md).
func Dataset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" && args[0] != "import" {
		fmt.Fprintln(stderr, datasetUsage)
		return ExitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("dataset "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *dataDir == "" || fs.NArg() != 1 {
		fmt.Fprintln(stderr, datasetUsage)
		return ExitUsage
	}
	dir := fs.Arg(0)
	if sub == "import" {
		sum, err := app.ImportDataset(ctx, dir, PoolDir(*dataDir))
		if err != nil {
			fmt.Fprintf(stderr, "vetlens dataset import: %v\n", err)
			return ExitRejected
		}
		fmt.Fprintf(stdout, "imported %d cases into %s (%d already in the pool, %d with a label that is not a MATLAB v5 file skipped)\n",
			sum.Written, PoolDir(*dataDir), sum.Duplicates, sum.Skipped)
		fmt.Fprintf(stdout, "vertebral span: %d of the %d imported labels counted with the image's own vertebral length; %d do not cover six vertebrae\n",
			sum.SpanCounted, sum.Written, len(sum.SpanNotSix))
		if n := len(sum.SpanNotSix); n > 0 {
			fmt.Fprintf(stdout, "  check that their E-F points mark T4's cranial and T9's caudal endplates (pool cases %s)\n", listCases(sum.SpanNotSix, 10))
		}
		return ExitOK
	}
	salt, err := dogheart.LoadOrCreateSalt(saltPath(*dataDir))
	if err != nil {
		fmt.Fprintf(stderr, "vetlens dataset export: %v\n", err)
		return ExitInternal
	}
	repos, closeStore, err := openRepos(ctx, storeSpec(*storeFlag), *dataDir, 2*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens dataset export: %v\n", err)
		return ExitInternal
	}
	defer closeStore()
	sum, err := app.ExportDataset(ctx, repos, dir, salt)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens dataset export: %v\n", err)
		return ExitRejected
	}
	fmt.Fprintf(stdout, "exported %d cases to %s (%d edited, %d manual; %d corrections without a kept image skipped)\n",
		sum.Written, dir, sum.Edited, sum.Manual, sum.Skipped)
	return ExitOK
}

// listCases joins the first limit names, saying how many more there are.
func listCases(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:limit], ", "), len(names)-limit)
}
