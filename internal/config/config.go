// Package config declares every setting of VetLens once: its flag, its
// environment variable, its default and its meaning (like ollama's
// envconfig). The commands register their flags from here, `vetlens help
// config` prints the table, and this is the only package of the product
// that reads the environment.
package config

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"vetlens/internal/lanaddr"
)

// Defaults that more than one package needs, declared once.
const (
	// DefaultAddr is where `vetlens serve` listens (the desktop's default
	// is this computer only: lanaddr.Local(lanaddr.DefaultPort)).
	DefaultAddr = "0.0.0.0:8443"
	// DefaultMaxInFlight is how many requests one API key may have in
	// flight before 429.
	DefaultMaxInFlight = 32
	// DefaultCardiacConcurrency is how many cardiac images are measured
	// at once across all requests (the engine uses every core per image,
	// one model per core).
	DefaultCardiacConcurrency = 1
	// DefaultMaxPoPSessions is how many PoP sessions one API key may have
	// open before 429.
	DefaultMaxPoPSessions = 8
	// DefaultUSGRateCents is the flat price of one USG prediction in US
	// cents ($0.50; the spec does not show the amount).
	DefaultUSGRateCents = 50
	// DefaultLearnPoll is how often serve and gui check the active cardiac
	// model version.
	DefaultLearnPoll = 3 * time.Second
	// DefaultCamera is `vetlens capture`'s frame source.
	DefaultCamera = "device:0"
)

// Free-space thresholds of the data directory's filesystem (the bbolt
// store), declared once; docs/security.md lists them.
const (
	// DiskWarnBytes: below this much free space health reports
	// "degraded" (the disk is running out; writes still work).
	DiskWarnBytes = 1 << 30 // 1 GiB
	// DiskWarnPercent: below this share of the filesystem free, health
	// reports "degraded" as well (whichever of the two comes first).
	DiskWarnPercent = 5
	// DiskRefuseBytes: below this much free space every request that
	// would write (billable cardiac and USG, PoP sessions, desktop saves)
	// is refused with 507 before any work or billing. 256 MiB leaves
	// bbolt room to grow its file and commit what is in flight.
	DiskRefuseBytes = 256 << 20 // 256 MiB
	// DiskCheckInterval is how long one free-space reading is reused.
	DiskCheckInterval = 2 * time.Second
)

// Setting is one configurable value as `vetlens help config` lists it.
type Setting struct {
	// Flag is the flag's name without dashes ("" for an environment-only
	// setting).
	Flag string
	// Env is the environment variable that sets it ("" for none).
	Env string
	// Default is the default in words.
	Default string
	// Commands are the commands that take the flag.
	Commands []string
	// Help is what it sets: the flag's usage text.
	Help string
}

// The settings. Register a flag with the Setting's String, Int, ... so its
// name and help are the table's.
var (
	DataDir = Setting{Flag: "data-dir", Commands: []string{"gui", "serve", "keys", "store", "dataset", "learn", "models"},
		Default: "serve, keys, dataset: required; gui: the saved setting, then the user config dir's vetlens folder",
		Help:    "data directory: database, certificate, admin socket, the learning pool (learn/)"}
	Store = Setting{Flag: "store", Env: "VETLENS_STORE", Commands: []string{"gui", "serve", "keys", "store", "dataset", "learn", "models"},
		Default: "bbolt: the embedded database in the data dir",
		Help:    "storage: bbolt, or a postgres:// URL of a database several servers share (docs/storage.md)"}
	Addr = Setting{Flag: "addr", Commands: []string{"gui", "serve"},
		Default: "serve: " + DefaultAddr + "; gui: as the Server tab left it in the data dir, then " + lanaddr.Local(lanaddr.DefaultPort),
		Help:    "HTTPS listen address HOST:PORT (127.0.0.1:PORT this computer only, 0.0.0.0:PORT the clinic network; gui: for this run, not saved)"}
	Serve = Setting{Flag: "serve", Commands: []string{"gui"}, Default: "as the Server tab left it in the data dir, then on",
		Help: "serve the HTTPS API from the desktop process at start; --serve=false: do not"}
	Cert = Setting{Flag: "cert", Commands: []string{"serve"}, Default: "self-signed, generated into the data dir",
		Help: "TLS certificate PEM"}
	Key          = Setting{Flag: "key", Commands: []string{"serve"}, Default: "with --cert", Help: "TLS private key PEM"}
	RedirectAddr = Setting{Flag: "redirect-addr", Commands: []string{"serve"}, Default: "none",
		Help: "also serve plain HTTP here, redirecting to HTTPS"}
	PublicHost = Setting{Flag: "public-host", Commands: []string{"serve"},
		Default: "the --addr host, or the machine's host name for 0.0.0.0",
		Help:    "host name or address clients use, the HTTP redirect's target"}
	Models = Setting{Flag: "models", Env: "VETLENS_MODELS", Commands: []string{"gui", "serve", "predict", "usg", "capture", "learn", "models"},
		Default: "models/ beside the executable, else ../share/vetlens/models from the executable's folder (the Debian package), else ./models; the first holding manifest.json",
		Help:    "models directory"}
	ORTLib = Setting{Flag: "ort-lib", Env: "VETLENS_ORT_LIB", Commands: []string{"gui", "serve", "predict", "usg", "capture", "learn", "models"},
		Default: "$ONNXRUNTIME_SHARED_LIBRARY_PATH, lib/ or the folder of the executable, ../lib/vetlens from the executable's folder (the Debian package), " + SystemORTDir + " (make deps)",
		Help:    "ONNX Runtime shared library"}
	ORTLibCompat = Setting{Env: "ONNXRUNTIME_SHARED_LIBRARY_PATH", Default: "none",
		Help: "ONNX Runtime shared library, searched after $VETLENS_ORT_LIB (onnxruntime_go's variable)"}
	Camera = Setting{Flag: "camera", Commands: []string{"gui", "capture"},
		Default: "capture: " + DefaultCamera + "; gui: the saved setting",
		Help:    "frame source: device:N, a video file, an image folder or an image file"}
	ImportDir = Setting{Flag: "import-dir", Commands: []string{"gui", "serve"}, Default: "gui: the saved setting (Import tab); serve: none",
		Help: "watched import folder: new DICOM, JPEG and PNG files are measured (gui: listed on the Import tab; serve: logged) (docs/dicom.md)"}
	Open = Setting{Flag: "open", Commands: []string{"gui"}, Default: "none",
		Help: "a radiograph (JPEG, PNG or DICOM) to open on Review at start"}
	MaxInFlight = Setting{Flag: "max-in-flight", Commands: []string{"serve"}, Default: strconv.Itoa(DefaultMaxInFlight),
		Help: "requests in flight per API key before 429"}
	USGRate = Setting{Flag: "usg-rate", Commands: []string{"serve"},
		Default: fmt.Sprintf("%d.%02d", DefaultUSGRateCents/100, DefaultUSGRateCents%100),
		Help:    "flat price of one USG prediction, dollars with at most 2 decimals"}
	CardiacConcurrency = Setting{Flag: "cardiac-concurrency", Commands: []string{"serve"},
		Default: strconv.Itoa(DefaultCardiacConcurrency), Help: "cardiac images measured at once across all requests"}
	PixelBudgetMB = Setting{Flag: "pixel-budget-mb", Commands: []string{"serve"}, Default: "0: total memory / 16, within 256-4096",
		Help: "memory budget for decoded image pixels across all requests, MiB"}
	PixelWait = Setting{Flag: "pixel-wait", Commands: []string{"serve"}, Default: "0: 2s",
		Help: "how long an image waits for room in the pixel budget before 503"}
	MaxPoPSessions = Setting{Flag: "max-pop-sessions", Commands: []string{"serve"}, Default: strconv.Itoa(DefaultMaxPoPSessions),
		Help: "open PoP capture sessions per API key before 429"}
	MaxFreeRechecks = Setting{Flag: "max-free-rechecks", Commands: []string{"serve"}, Default: "0: no cap (the spec)",
		Help: "free recheck_24h answers per patient uuid within its 24 h window; the next one is billed and starts a new window"}
	TrainDir = Setting{Flag: "train-dir", Env: "VETLENS_TRAIN_DIR", Commands: []string{"gui", "learn"},
		Default: "train/ in the models directory",
		Help:    "the fine-tuning trainer's package root, holding cardiac/learn.py and sim/heldout.py (docs/learning.md)"}
	Python = Setting{Flag: "python", Env: "VETLENS_PYTHON", Commands: []string{"gui", "learn"}, Default: "/usr/bin/python3",
		Help: "Python interpreter with Debian's python3-torch, python3-scipy and python3-onnx, for the trainer"}
	LearnPoll = Setting{Flag: "learn-poll", Commands: []string{"gui", "serve"}, Default: DefaultLearnPoll.String(),
		Help: "how often the active cardiac model version is checked, so a promotion or rollback made elsewhere is served"}
	Steps = Setting{Flag: "steps", Commands: []string{"learn"}, Default: "0: the trainer's default",
		Help: "training steps per ensemble member"}
	Minutes = Setting{Flag: "minutes", Commands: []string{"learn"}, Default: "0: the trainer's default",
		Help: "training time budget in minutes (when --steps is 0)"}
	NoPromote = Setting{Flag: "no-promote", Commands: []string{"learn"}, Default: "false",
		Help: "evaluate the candidate without promoting it (the Learning panel's Promote can follow)"}
	Seed = Setting{Flag: "seed", Commands: []string{"learn"}, Default: "1",
		Help: "seed of the held-out split, the trainer and the bootstrap"}
	Threads = Setting{Flag: "threads", Commands: []string{"learn"}, Default: "0: the trainer's default",
		Help: "trainer threads"}
	SyntheticN = Setting{Flag: "synthetic-n", Commands: []string{"learn"}, Default: "0: the trainer's default",
		Help: "size of the cached synthetic mix when it is first created"}
	Phantoms = Setting{Flag: "phantoms", Commands: []string{"learn"}, Default: "60",
		Help: "size of the held-out phantom regression set when it is first created"}
	ShuffleLabels = Setting{Flag: "shuffle-labels", Commands: []string{"learn"}, Default: "false",
		Help: "tests only: train on labels permuted between cases (such a run must be refused promotion)"}
	XDGRuntimeDir = Setting{Env: "XDG_RUNTIME_DIR", Default: "gui: a private temporary directory for the run when unset or not a directory",
		Help: "the desktop session's runtime directory (Wayland, D-Bus), read by the window's libraries"}
	TestPostgres = Setting{Env: "VETLENS_TEST_POSTGRES", Default: "unset: the PostgreSQL tests skip (make test starts a throwaway cluster and sets it)",
		Help: "tests only: DSN of a PostgreSQL cluster the storage tests make their schemas in"}
	TestModels = Setting{Env: "VETLENS_TEST_MODELS", Default: "the shipped models/",
		Help: "tests only: the models directory the model-backed tests load (e.g. a test double)"}
)

// All is every setting, in the order `vetlens help config` lists them.
func All() []Setting {
	return []Setting{DataDir, Store, Addr, Serve, Cert, Key, RedirectAddr, PublicHost, Models, ORTLib, ORTLibCompat, Camera,
		ImportDir, Open, MaxInFlight, USGRate, CardiacConcurrency, PixelBudgetMB, PixelWait, MaxPoPSessions, MaxFreeRechecks, TrainDir, Python, LearnPoll, Steps, Minutes, NoPromote, Seed, Threads, SyntheticN, Phantoms, ShuffleLabels,
		XDGRuntimeDir, TestModels, TestPostgres}
}

// FromEnv is the setting's environment variable's value ("" when it has
// none or it is unset).
func (s Setting) FromEnv() string {
	if s.Env == "" {
		return ""
	}
	return os.Getenv(s.Env)
}

// SetEnv sets the setting's environment variable for this process (for
// the libraries that read it themselves, such as XDG_RUNTIME_DIR).
func (s Setting) SetEnv(v string) error {
	if s.Env == "" {
		return fmt.Errorf("setting --%s has no environment variable", s.Flag)
	}
	if err := os.Setenv(s.Env, v); err != nil {
		return fmt.Errorf("set $%s: %w", s.Env, err)
	}
	return nil
}

// usage is the flag's usage text: the help, the default and the
// environment variable.
func (s Setting) usage() string {
	u := s.Help + " (default: " + s.Default
	if s.Env != "" {
		u += "; $" + s.Env + " when the flag is not given"
	}
	return u + ")"
}

// String registers the setting's flag as a string with the given value
// when not set.
func (s Setting) String(fs *flag.FlagSet, def string) *string {
	return fs.String(s.Flag, def, s.usage())
}

// Int registers the setting's flag as an int.
func (s Setting) Int(fs *flag.FlagSet, def int) *int { return fs.Int(s.Flag, def, s.usage()) }

// Int64 registers the setting's flag as an int64.
func (s Setting) Int64(fs *flag.FlagSet, def int64) *int64 { return fs.Int64(s.Flag, def, s.usage()) }

// Bool registers the setting's flag as a bool.
func (s Setting) Bool(fs *flag.FlagSet, def bool) *bool { return fs.Bool(s.Flag, def, s.usage()) }

// Float64 registers the setting as a float64 flag on fs.
func (s Setting) Float64(fs *flag.FlagSet, def float64) *float64 {
	return fs.Float64(s.Flag, def, s.usage())
}

// Uint64 registers the setting as a uint64 flag on fs.
func (s Setting) Uint64(fs *flag.FlagSet, def uint64) *uint64 {
	return fs.Uint64(s.Flag, def, s.usage())
}

// Duration registers the setting's flag as a duration.
func (s Setting) Duration(fs *flag.FlagSet, def time.Duration) *time.Duration {
	return fs.Duration(s.Flag, def, s.usage())
}

// Var registers the setting's flag with a custom value.
func (s Setting) Var(fs *flag.FlagSet, v flag.Value) { fs.Var(v, s.Flag, s.usage()) }

// Print writes the settings table: flag, environment variable, commands,
// default and meaning.
func Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tENVIRONMENT\tCOMMANDS\tDEFAULT\tMEANING")
	for _, s := range All() {
		f, e := "-", "-"
		if s.Flag != "" {
			f = "--" + s.Flag
		}
		if s.Env != "" {
			e = "$" + s.Env
		}
		cmds := strings.Join(s.Commands, ",")
		if cmds == "" {
			cmds = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f, e, cmds, s.Default, s.Help)
	}
	return tw.Flush()
}
