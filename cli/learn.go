package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"vetlens/app/learn"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/ort"
	"vetlens/internal/config"
	"vetlens/platform/store/postgres"
	"vetlens/platform/trainer"
)

// learnConfig is what the learning service is opened with.
type learnConfig struct {
	dataDir, store, models, ortLib string
	// trainDir and python run the trainer ("": models/train and
	// trainer.DefaultPython).
	trainDir, python string
	phantoms         int
	// log receives the trainer's stderr (nil: discarded).
	log io.Writer
}

// LearnDir is the learning folder of a data directory.
func LearnDir(dataDir string) string { return filepath.Join(dataDir, "learn") }

// trainDir resolves the trainer folder: the flag, $VETLENS_TRAIN_DIR,
// then train/ in the models directory.
func trainDir(flagValue, models string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := config.TrainDir.FromEnv(); v != "" {
		return v
	}
	return filepath.Join(models, "train")
}

// openLearn builds the learning service: the registry the store implies
// (a file in DATA/learn for bbolt, the database for PostgreSQL), the
// Python trainer and the engine for evaluation (ONNX Runtime is
// initialised). closeAll releases the database.
func openLearn(ctx context.Context, c learnConfig) (*learn.Service, func(), error) {
	if err := ort.Init(c.ortLib, config.ORTLibraryCandidates()...); err != nil {
		return nil, nil, err
	}
	layout := learn.Layout{Dir: LearnDir(c.dataDir)}
	var reg learn.Registry = learn.FileRegistry{Path: layout.ActiveFile(), Versions: layout.Versions()}
	closeAll := func() {}
	if postgres.IsDSN(c.store) {
		dsn := c.store
		if !strings.Contains(dsn, "pool_max_conns") {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + "pool_max_conns=2"
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := postgres.Open(octx, dsn)
		if err != nil {
			return nil, nil, err
		}
		reg, closeAll = st.ModelRegistry(), func() { st.Close() }
	}
	python := c.python
	if python == "" {
		python = config.Python.FromEnv()
	}
	svc, err := learn.New(learn.Config{Layout: layout, Shipped: c.models, Registry: reg, Phantoms: c.phantoms,
		Models:  learn.EngineModels{Options: cardiac.DefaultOptions(), Load: cardiacort.Load, Runtime: ort.Opener(ort.Options{})},
		Trainer: trainer.Python{Python: python, Dir: trainDir(c.trainDir, c.models), Log: c.log}})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return svc, closeAll, nil
}

const learnUsage = `usage: vetlens learn --data-dir DIR [--store bbolt|postgres://...] [--steps N | --minutes M] [--no-promote] [--seed S]`

// Learn runs `vetlens learn`: fine-tunes the cardiac landmark models in
// use on the learning pool, prints progress lines and the before/after
// table, and promotes the candidate when the promotion rule holds
// (docs/learning.md). Exit ExitOK when the run finished (promoted, or
// --no-promote), ExitNotPromoted when the rule refused it, ExitRejected
// when the pool cannot be learned from, ExitInternal otherwise
// (torch missing, the trainer failed, cancelled).
func Learn(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("learn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	models := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	tdir := config.TrainDir.String(fs, "")
	python := config.Python.String(fs, "")
	steps := config.Steps.Int(fs, 0)
	minutes := config.Minutes.Float64(fs, 0)
	noPromote := config.NoPromote.Bool(fs, false)
	seed := config.Seed.Uint64(fs, 1)
	threads := config.Threads.Int(fs, 0)
	synthN := config.SyntheticN.Int(fs, 0)
	phantoms := config.Phantoms.Int(fs, learn.DefaultPhantoms)
	shuffle := config.ShuffleLabels.Bool(fs, false)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *dataDir == "" || fs.NArg() != 0 || *steps < 0 || *minutes < 0 {
		fmt.Fprintln(stderr, learnUsage)
		return ExitUsage
	}
	// The trainer's own messages (library warnings) go to a log file; an
	// error carries their last lines.
	if err := os.MkdirAll(LearnDir(*dataDir), 0o755); err != nil {
		fmt.Fprintf(stderr, "vetlens learn: %v\n", err)
		return ExitInternal
	}
	logf, err := os.OpenFile(filepath.Join(LearnDir(*dataDir), "trainer.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens learn: %v\n", err)
		return ExitInternal
	}
	defer logf.Close()
	svc, closeAll, err := openLearn(ctx, learnConfig{dataDir: *dataDir, store: storeSpec(*storeFlag), models: config.ModelsDir(*models),
		ortLib: *ortLib, trainDir: *tdir, python: *python, phantoms: *phantoms, log: logf})
	if err != nil {
		fmt.Fprintf(stderr, "vetlens learn: %v\n", err)
		return ExitInternal
	}
	defer closeAll()
	pool, err := svc.Pool(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens learn: %v\n", err)
		return ExitInternal
	}
	fmt.Fprintf(stdout, "pool: %d cases of %d patients %s\n", pool.Cases, pool.Patients, kinds(pool.ByKind))
	pl := &progressLines{w: stdout}
	run, err := svc.Learn(ctx, learn.Options{Steps: *steps, Minutes: *minutes, NoPromote: *noPromote, Seed: *seed,
		Threads: *threads, SyntheticN: *synthN, ShuffleLabels: *shuffle}, pl.show)
	switch {
	case learn.IsMissingTorch(err):
		var te *learn.TrainerError
		errors.As(err, &te)
		fmt.Fprintf(stderr, "vetlens learn: the trainer needs PyTorch, SciPy and ONNX for Debian's Python: %s\n", te.Message)
		return ExitInternal
	case err != nil && run.ID == "":
		fmt.Fprintf(stderr, "vetlens learn: %v\n", err)
		if errors.Is(err, learn.ErrPoolTooSmall) {
			return ExitRejected
		}
		return ExitInternal
	case err != nil:
		fmt.Fprintf(stderr, "vetlens learn: run %s %s: %v\n", run.ID, run.Status, err)
		return ExitInternal
	}
	printRun(stdout, run)
	if !run.Promotable {
		return ExitNotPromoted
	}
	return ExitOK
}

func kinds(m map[string]int) string {
	var parts []string
	for _, k := range []string{"edited", "manual", "dogheart"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// progressLines prints a run's progress: every stage change and message,
// and training progress at most every 5 seconds.
type progressLines struct {
	w         io.Writer
	last      time.Time
	lastStage string
}

func (p *progressLines) show(pr learn.Progress) {
	now := time.Now()
	if pr.Message == "" && pr.Stage == p.lastStage && now.Sub(p.last) < 5*time.Second && pr.Fraction < 1 {
		return
	}
	p.last, p.lastStage = now, pr.Stage
	line := fmt.Sprintf("[%3.0f%%] %-9s", 100*pr.Fraction, pr.Stage)
	if pr.Member > 0 {
		line += fmt.Sprintf(" member %d step %d/%d loss %.4g", pr.Member, pr.Step, pr.Steps, pr.Loss)
	}
	if pr.ETA > 0 {
		line += fmt.Sprintf(" eta %s", pr.ETA.Round(time.Second))
	}
	if pr.Message != "" {
		line += " " + pr.Message
	}
	fmt.Fprintln(p.w, strings.TrimRight(line, " "))
}

// printRun prints a finished run's table, interval, rules and outcome.
func printRun(w io.Writer, r learn.Run) {
	fmt.Fprintf(w, "\nrun %s: %s -> %s, trained on %d cases in %.0f s (%.0f s per 100 cases), %d held out (grouped by patient)\n",
		r.ID, r.Base, r.Candidate, r.Train, r.TrainSeconds, 100*r.TrainSeconds/float64(max(r.Train, 1)), r.HeldOut)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tbefore\tafter")
	for _, row := range r.Table() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row.Metric, row.Before, row.After)
	}
	tw.Flush()
	if c := r.Column; c != nil {
		fmt.Fprintf(w, "column factor (v over the column's period): %s\n", c.Summary())
	}
	if b := r.Bootstrap; b != nil {
		fmt.Fprintf(w, "per-case |VHS error| after - before: mean %+.3f v, 95 %% paired bootstrap interval [%+.3f, %+.3f] (%d resamples, seed %d)\n",
			b.Mean, b.Lo, b.Hi, b.Resamples, b.Seed)
	}
	for _, x := range r.Rules {
		mark := "ok  "
		if !x.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, x.Name, x.Detail)
	}
	switch {
	case r.Promoted:
		fmt.Fprintf(w, "promoted %s: it is now in use (roll back: vetlens models use %s)\n", r.Candidate, r.Base)
	case r.Promotable:
		fmt.Fprintf(w, "%s meets the promotion rule; not promoted (--no-promote)\n", r.Candidate)
	default:
		fmt.Fprintf(w, "refused promotion of %s; the models in use (%s) stay\n", r.Candidate, r.Base)
	}
}

const modelsUsage = `usage: vetlens models list --data-dir DIR [--store bbolt|postgres://...]
       vetlens models use --data-dir DIR [--store ...] VERSION   (VERSION "shipped" for the shipped models)`

// ModelsCmd runs `vetlens models list|use`: the cardiac model versions
// (shipped and promoted, the active one marked) and switching the
// active one (a rollback, or back to a later version). Servers on the
// same data directory or database follow within --learn-poll.
func ModelsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "list" && args[0] != "use" {
		fmt.Fprintln(stderr, modelsUsage)
		return ExitUsage
	}
	sub := args[0]
	fs := flag.NewFlagSet("models "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := config.DataDir.String(fs, "")
	storeFlag := config.Store.String(fs, "")
	models := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if *dataDir == "" || sub == "list" && fs.NArg() != 0 || sub == "use" && fs.NArg() != 1 {
		fmt.Fprintln(stderr, modelsUsage)
		return ExitUsage
	}
	svc, closeAll, err := openLearn(ctx, learnConfig{dataDir: *dataDir, store: storeSpec(*storeFlag), models: config.ModelsDir(*models), ortLib: *ortLib})
	if err != nil {
		fmt.Fprintf(stderr, "vetlens models: %v\n", err)
		return ExitInternal
	}
	defer closeAll()
	if sub == "use" {
		v, err := svc.Use(ctx, fs.Arg(0))
		if errors.Is(err, learn.ErrUnknownVersion) {
			fmt.Fprintf(stderr, "vetlens models use: %v (vetlens models list shows them)\n", err)
			return ExitRejected
		}
		if err != nil {
			fmt.Fprintf(stderr, "vetlens models use: %v\n", err)
			return ExitInternal
		}
		fmt.Fprintf(stdout, "%s is now in use\n", v.Name)
		return ExitOK
	}
	vs, err := svc.Versions(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "vetlens models list: %v\n", err)
		return ExitInternal
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, v := range vs {
		mark, what := " ", "promoted "+v.Created.Format(time.DateOnly)
		if v.Active {
			mark = "*"
		}
		if v.Shipped {
			what = "shipped"
		} else if v.Dir == "" {
			what = "in the database (fetched when used)"
		}
		fmt.Fprintf(tw, "%s %s\t%s\n", mark, v.Name, what)
	}
	tw.Flush()
	return ExitOK
}
