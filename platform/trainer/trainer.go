// Package trainer runs the Python fine-tuning trainer
// (models/train/cardiac/learn.py, `python3 -m cardiac.learn`) as a
// subprocess: the learn.Trainer port. It
// passes the job as flags, reads the trainer's JSON lines from stdout as
// progress, and turns a cancelled context into SIGTERM for the trainer's
// whole process group (SIGKILL if it has not exited after KillAfter).
package trainer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"vetlens/app/learn"
)

// DefaultPython is Debian's interpreter, the one with python3-torch.
const DefaultPython = "/usr/bin/python3"

// The trainer's modules, run as `python3 -m MODULE` with Dir, their
// package root, on PYTHONPATH.
const (
	LearnModule   = "cardiac.learn" // cardiac/learn.py: --check and the fine-tuning job
	HeldoutModule = "sim.heldout"   // sim/heldout.py: the held-out phantom regression set
)

// Python runs the trainer modules under Dir with the interpreter Python.
type Python struct {
	// Python is the interpreter ("": DefaultPython).
	Python string
	// Dir is the trainer's package root (models/train), holding
	// cardiac/learn.py and sim/heldout.py.
	Dir string
	// Log receives the trainer's stderr (nil: discarded; its last lines
	// are in errors either way).
	Log io.Writer
	// KillAfter is how long a cancelled trainer has after SIGTERM before
	// SIGKILL (0: 15 s).
	KillAfter time.Duration
}

var _ learn.Trainer = Python{}

func (p Python) python() string {
	if p.Python == "" {
		return DefaultPython
	}
	return p.Python
}

// event is one JSON line of the trainer.
type event struct {
	Event    string  `json:"event"`
	Torch    string  `json:"torch"`
	Code     string  `json:"code"`
	Message  string  `json:"message"`
	Stage    string  `json:"stage"`
	Member   int     `json:"member"`
	Step     int     `json:"step"`
	Steps    int     `json:"steps"`
	Fraction float64 `json:"fraction"`
	Loss     float64 `json:"loss"`
	ETA      float64 `json:"eta_s"`
	Cases    int     `json:"cases"`
	// Synthetic is the start line's count of synthetic images.
	Synthetic int     `json:"synthetic"`
	Out       string  `json:"out"`
	Seconds   float64 `json:"seconds"`
}

// Check runs `cardiac.learn --check`: the torch version, or a
// *learn.TrainerError (code missing_torch says what to install).
func (p Python) Check(ctx context.Context) (string, error) {
	var torch string
	err := p.run(ctx, []string{"--check"}, func(e event) {
		if e.Event == "ok" {
			torch = e.Torch
		}
	})
	if err != nil {
		return "", err
	}
	return torch, nil
}

// Train runs one fine-tuning job.
func (p Python) Train(ctx context.Context, s learn.TrainSpec, progress func(learn.Progress)) error {
	args := []string{"--pool", s.Pool, "--train-cases", s.CasesFile, "--base", s.Base, "--out", s.Out, "--version", s.Version}
	if s.Steps > 0 {
		args = append(args, "--steps", strconv.Itoa(s.Steps))
	} else if s.Minutes > 0 {
		args = append(args, "--minutes", strconv.FormatFloat(s.Minutes, 'f', -1, 64))
	}
	if s.Synthetic != "" {
		args = append(args, "--synthetic", s.Synthetic)
	}
	if s.SyntheticN > 0 {
		args = append(args, "--synthetic-n", strconv.Itoa(s.SyntheticN))
	}
	args = append(args, "--seed", strconv.FormatInt(s.Seed, 10))
	if s.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(s.Threads))
	}
	if s.ShuffleLabels {
		args = append(args, "--shuffle-labels")
	}
	if s.EvalCasesFile != "" {
		args = append(args, "--eval-cases", s.EvalCasesFile)
	}
	done := false
	err := p.run(ctx, args, func(e event) {
		switch e.Event {
		case "start":
			progress(learn.Progress{Stage: "train", Steps: e.Steps,
				Message: fmt.Sprintf("training on %d clinic cases and %d synthetic images", e.Cases, e.Synthetic)})
		case "progress":
			progress(learn.Progress{Stage: e.Stage, Member: e.Member, Step: e.Step, Steps: e.Steps, Fraction: e.Fraction,
				Loss: e.Loss, ETA: time.Duration(e.ETA * float64(time.Second))})
		case "done":
			done = true
		}
	})
	if err != nil {
		return err
	}
	if !done {
		return errors.New("trainer: exited without its done line")
	}
	if _, err := os.Stat(s.Out); err != nil {
		return fmt.Errorf("trainer: reported done but wrote no %s", s.Out)
	}
	return nil
}

// MakePhantoms writes the held-out phantom regression set: n xraysim
// radiographs from held-out seeds (sim.heldout, no negatives).
func (p Python) MakePhantoms(ctx context.Context, dir string, n int) error {
	cmd := p.command(ctx, HeldoutModule,
		"--generator", "xraysim", "--out", dir, "--n", strconv.Itoa(n), "--negatives", "0", "--workers", "2")
	tail := &tailWriter{n: 4096}
	cmd.Stdout, cmd.Stderr = io.Discard, p.stderr(tail)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("trainer: %s: %w: %s", HeldoutModule, err, tail.String())
	}
	return nil
}

func (p Python) stderr(tail *tailWriter) io.Writer {
	if p.Log == nil {
		return tail
	}
	return io.MultiWriter(tail, p.Log)
}

// moduleFile is the file of a trainer module under dir
// (cardiac.learn: dir/cardiac/learn.py).
func moduleFile(dir, module string) string {
	return filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(module, ".", "/"))+".py")
}

// command builds `python -m module args` with Dir (absolute) first on
// PYTHONPATH, in its own process group, stopped on ctx's end (ownGroup:
// SIGTERM to the group on Unix), then killed after KillAfter. The working
// directory stays the caller's, so relative paths in args keep their
// meaning, and is not on Python's path (PYTHONSAFEPATH, Python 3.11+).
func (p Python) command(ctx context.Context, module string, args ...string) *exec.Cmd {
	root := p.Dir
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if v := os.Getenv("PYTHONPATH"); v != "" {
		root += string(os.PathListSeparator) + v
	}
	cmd := exec.CommandContext(ctx, p.python(), append([]string{"-m", module}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root, "PYTHONSAFEPATH=1")
	ownGroup(cmd) // procgroup_unix.go, procgroup_windows.go
	cmd.WaitDelay = p.KillAfter
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 15 * time.Second
	}
	return cmd
}

// run runs cardiac.learn with args, calling on for each JSON line; an
// error line becomes a *learn.TrainerError.
func (p Python) run(ctx context.Context, args []string, on func(event)) error {
	if _, err := os.Stat(moduleFile(p.Dir, LearnModule)); err != nil {
		return fmt.Errorf("trainer: %w (set VETLENS_TRAIN_DIR to the trainer's folder, models/train, holding cardiac/learn.py)", err)
	}
	cmd := p.command(ctx, LearnModule, args...)
	tail := &tailWriter{n: 4096}
	cmd.Stderr = p.stderr(tail)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("trainer: start %s: %w", p.python(), err)
	}
	var terr *learn.TrainerError
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue // not a JSON line (a library's print): ignored
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			continue
		}
		if e.Event == "error" {
			terr = &learn.TrainerError{Code: e.Code, Message: e.Message}
		}
		on(e)
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if terr != nil {
		return terr
	}
	if werr != nil {
		return fmt.Errorf("trainer: %w: %s", werr, strings.TrimSpace(tail.String()))
	}
	return nil
}

// tailWriter keeps the last n bytes written to it.
type tailWriter struct {
	mu sync.Mutex
	n  int
	b  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.n {
		t.b = t.b[len(t.b)-t.n:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
