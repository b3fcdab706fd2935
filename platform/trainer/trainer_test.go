package trainer

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"vetlens/app/learn"
)

// fakeLearn is a stand-in cardiac/learn.py implementing the contract's wire
// behaviour: --check answers by $FAKE_MODE, a job prints JSON lines
// (with noise between them), "hang" waits for SIGTERM and exits 143
// after removing its partial output, "error" reports an error line.
const fakeLearn = `import json, os, signal, sys, time
mode = os.environ.get("FAKE_MODE", "ok")
def say(**k): print(json.dumps(k), flush=True)
if "--check" in sys.argv:
    if mode == "notorch":
        say(event="error", code="missing_torch", message="apt install python3-torch python3-scipy python3-onnx")
        sys.exit(3)
    say(event="ok", torch="1.13"); sys.exit(0)
a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
out = a["--out"]
with open(os.path.join(os.path.dirname(out), "argv.json"), "w") as f: json.dump(sys.argv[1:], f)
say(event="start", cases=3, synthetic=50, members=5, steps=4)
print("a library's chatter", flush=True)
if mode == "error":
    say(event="error", code="bad_pool", message="no cases"); sys.exit(1)
if mode == "hang":
    os.makedirs(out + ".partial")
    with open(out + ".pid", "w") as f: f.write(str(os.getpid()))
    def stop(*_):
        os.rmdir(out + ".partial"); sys.exit(143)
    signal.signal(signal.SIGTERM, stop)
    say(event="progress", stage="train", member=1, step=1, steps=4, fraction=0.1, loss=0.5, eta_s=30)
    time.sleep(60)
for i in range(4):
    say(event="progress", stage="train", member=i+1, step=i+1, steps=4, fraction=(i+1)/4, loss=1.0/(i+1), eta_s=3-i)
if mode != "nodir":
    os.makedirs(out)
say(event="done", out=out, version=a["--version"], cases=3, seconds=1.0)
`

func setup(t *testing.T, mode string) (Python, learn.TrainSpec) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cardiac"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cardiac", "__init__.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moduleFile(dir, LearnModule), []byte(fakeLearn), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_MODE", mode)
	work := t.TempDir()
	return Python{Python: "python3", Dir: dir, KillAfter: 5 * time.Second},
		learn.TrainSpec{Pool: "P", CasesFile: "C.json", EvalCasesFile: "H.json", Base: "B", Out: filepath.Join(work, "out"), Version: "v3.1.0-clinic.1",
			Steps: 40, Seed: 7, ShuffleLabels: true}
}

// TestTrain: flags go out as the contract names them, progress lines
// come back, the trainer's error line and missing torch are typed
// errors, a done line without OUTDIR is an error.
func TestTrain(t *testing.T) {
	tests := []struct {
		mode     string
		wantCode string // TrainerError code
		wantErr  string
	}{
		{"ok", "", ""},
		{"error", "bad_pool", ""},
		{"nodir", "", "wrote no"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			p, spec := setup(t, tc.mode)
			var got []learn.Progress
			err := p.Train(t.Context(), spec, func(pr learn.Progress) { got = append(got, pr) })
			var te *learn.TrainerError
			switch {
			case tc.wantCode != "":
				if !errors.As(err, &te) || te.Code != tc.wantCode {
					t.Fatalf("err %v, want code %s", err, tc.wantCode)
				}
				return
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if len(got) != 5 || got[4].Fraction != 1 || got[4].Member != 4 || got[1].Loss != 1 || got[1].ETA != 3*time.Second {
				t.Errorf("progress %+v", got)
			}
			argv, _ := os.ReadFile(filepath.Join(filepath.Dir(spec.Out), "argv.json"))
			for _, want := range []string{`"--steps", "40"`, `"--seed", "7"`, `"--shuffle-labels"`, `"--version", "v3.1.0-clinic.1"`, `"--train-cases", "C.json"`, `"--eval-cases", "H.json"`} {
				if !strings.Contains(string(argv), want) {
					t.Errorf("argv %s lacks %s", argv, want)
				}
			}
		})
	}
}

// TestCheck: torch present, missing (typed, with the install line), and
// no cardiac/learn.py at all.
func TestCheck(t *testing.T) {
	p, _ := setup(t, "ok")
	if v, err := p.Check(t.Context()); err != nil || v != "1.13" {
		t.Fatalf("check %q %v", v, err)
	}
	p, _ = setup(t, "notorch")
	_, err := p.Check(t.Context())
	if !learn.IsMissingTorch(err) || !strings.Contains(err.Error(), "apt install python3-torch") {
		t.Fatalf("missing torch: %v", err)
	}
	p.Dir = t.TempDir()
	if _, err := p.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "VETLENS_TRAIN_DIR") {
		t.Fatalf("no cardiac/learn.py: %v", err)
	}
}

// TestTrainCancel: cancelling sends SIGTERM, and the trainer stops on it:
// its SIGTERM handler removed the partial output (SIGKILL after KillAfter,
// the fallback, would leave it; and without a signal the fake trainer
// would finish and Train return nil).
func TestTrainCancel(t *testing.T) {
	p, spec := setup(t, "hang")
	ctx, cancel := context.WithCancel(t.Context())
	err := p.Train(ctx, spec, func(pr learn.Progress) {
		if pr.Stage == "train" && pr.Member == 1 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(spec.Out + ".partial"); err == nil {
		t.Error("partial output left")
	}
}

// crashChildEnv makes the test binary the VetLens process of
// TestTrainerDiesWithVetLens.
const crashChildEnv = "VETLENS_TRAINER_CRASH_CHILD"

// TestTrainerCrashChild is the process killed with SIGKILL mid-training.
func TestTrainerCrashChild(t *testing.T) {
	out := os.Getenv(crashChildEnv)
	if out == "" {
		t.Skip("the child of TestTrainerDiesWithVetLens")
	}
	p := Python{Python: "python3", Dir: os.Getenv("FAKE_DIR")}
	p.Train(context.Background(), learn.TrainSpec{Out: out, Version: "v"}, func(learn.Progress) {})
}

// TestTrainerDiesWithVetLens: when the VetLens process is killed with
// SIGKILL mid-training, the trainer gets SIGTERM (it stops and removes
// its partial output) instead of training on as an orphan.
func TestTrainerDiesWithVetLens(t *testing.T) {
	p, spec := setup(t, "hang")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTrainerCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+spec.Out, "FAKE_DIR="+p.Dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(spec.Out + ".pid"); err == nil && len(b) > 0 {
			pid, _ = strconv.Atoi(string(b))
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("the trainer did not start")
	}
	cmd.Process.Kill()
	cmd.Wait()
	gone := false
	for deadline := time.Now().Add(10 * time.Second); !gone && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		gone = syscall.Kill(pid, 0) != nil
	}
	if !gone {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the trainer outlived VetLens")
	}
	if _, err := os.Stat(spec.Out + ".partial"); err == nil {
		t.Error("the trainer left its partial output")
	}
}
