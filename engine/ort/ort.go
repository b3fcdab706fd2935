// Package ort owns the process's ONNX Runtime environment and wraps
// inference sessions with the settings VetLens needs on small CPUs.
//
// The environment is the one piece of process-global state VetLens keeps:
// ONNX Runtime allows a single environment per process. With it goes one
// process setting made at load: glibc's malloc keeps a single arena
// (malloc_glibc.go), so what the models' threads free is reused rather
// than kept resident per thread.
package ort

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	onnx "github.com/yalue/onnxruntime_go"

	"vetlens/engine/infer"
)

var (
	initMu   sync.Mutex
	initPath string
	initErr  error
	initDone bool
)

// Candidates returns the paths searched for the ONNX Runtime library, in
// order: an explicit override (--ort-lib), then the searched paths the
// caller gives (internal/config.ORTLibraryCandidates: the environment's,
// those beside the executable, the system-wide install; the one place the
// search order is decided).
func Candidates(override string, searched ...string) []string {
	var c []string
	for _, p := range append([]string{override}, searched...) {
		if p != "" {
			c = append(c, p)
		}
	}
	return c
}

// FindLibrary returns the first existing candidate library path.
func FindLibrary(override string, searched ...string) (string, error) {
	cands := Candidates(override, searched...)
	if override != "" {
		// An explicit choice is never silently replaced by another library.
		cands = cands[:1]
	}
	for _, p := range cands {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			abs, err := filepath.Abs(p)
			if err != nil {
				return "", fmt.Errorf("resolve onnxruntime library %s: %w", p, err)
			}
			return abs, nil
		}
	}
	return "", fmt.Errorf("onnxruntime library not found (looked in %v); run `make deps` or name it with --ort-lib or $VETLENS_ORT_LIB", cands)
}

// Init loads the ONNX Runtime library (the first of Candidates(override,
// searched...) that exists) and creates the environment. It is safe to call
// more than once; later calls return the first call's outcome. Any failure
// is reported as one line naming the library and the cause.
func Init(override string, searched ...string) error {
	initMu.Lock()
	defer initMu.Unlock()
	if initDone {
		return initErr
	}
	initDone = true
	path, err := FindLibrary(override, searched...)
	if err != nil {
		initErr = err
		return err
	}
	onnx.SetSharedLibraryPath(path)
	if err := onnx.InitializeEnvironment(onnx.WithLogLevelError()); err != nil {
		initErr = fmt.Errorf("onnxruntime library %s unusable (VetLens needs ONNX Runtime >= 1.29): %w%s", path, err, loadHint)
		return initErr
	}
	initPath = path
	return nil
}

// LibraryPath returns the library loaded by Init, or "" before a successful Init.
func LibraryPath() string {
	initMu.Lock()
	defer initMu.Unlock()
	return initPath
}

// Version returns the loaded ONNX Runtime version string.
func Version() string { return onnx.GetVersion() }

// Session is one loaded ONNX model with named float32 inputs and outputs.
// Run is safe for concurrent use.
type Session struct {
	name    string
	inputs  []string
	outputs []string
	s       *onnx.DynamicAdvancedSession
}

// Options tune a session.
type Options struct {
	// IntraOpThreads is the intra-op thread count; 0 lets ONNX Runtime decide.
	IntraOpThreads int
}

// NewSession loads the model at path. Thread pools do not spin, so several
// sessions can share two cores without fighting.
func NewSession(path string, inputs, outputs []string, o Options) (*Session, error) {
	if !onnx.IsInitialized() {
		return nil, errors.New("onnxruntime environment not initialized")
	}
	opts, err := onnx.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("session options for %s: %w", path, err)
	}
	defer opts.Destroy()
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return nil, fmt.Errorf("session options for %s: %w", path, err)
	}
	if err := opts.AddSessionConfigEntry("session.inter_op.allow_spinning", "0"); err != nil {
		return nil, fmt.Errorf("session options for %s: %w", path, err)
	}
	// No per-session memory arena: eleven sessions each holding the peak
	// of their own runs cost about 20 MB of resident memory in `vetlens
	// predict`, at no measured latency (BenchmarkPredict1024).
	if err := opts.SetCpuMemArena(false); err != nil {
		return nil, fmt.Errorf("session options for %s: %w", path, err)
	}
	if o.IntraOpThreads > 0 {
		if err := opts.SetIntraOpNumThreads(o.IntraOpThreads); err != nil {
			return nil, fmt.Errorf("session options for %s: %w", path, err)
		}
	}
	s, err := onnx.NewDynamicAdvancedSession(path, inputs, outputs, opts)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return &Session{name: filepath.Base(path), inputs: inputs, outputs: outputs, s: s}, nil
}

// Name is the model file's base name.
func (s *Session) Name() string { return s.name }

// Tensor is a float32 tensor in row-major order: infer.Tensor, the type
// the engines pass to any Session.
type Tensor = infer.Tensor

// A *Session is the infer.Session the engines run models through.
var _ infer.Session = (*Session)(nil)

// Opener returns an infer.Opener that loads models into ONNX Runtime
// sessions with o (NewSession).
func Opener(o Options) infer.Opener {
	return func(path string, inputs, outputs []string) (infer.Session, error) {
		s, err := NewSession(path, inputs, outputs, o)
		if err != nil {
			return nil, err // not a nil *Session in a non-nil interface
		}
		return s, nil
	}
}

// Run feeds one tensor per input name and returns one tensor per output
// name, copied out of ONNX Runtime memory.
func (s *Session) Run(ctx context.Context, in ...Tensor) ([]Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(in) != len(s.inputs) {
		return nil, fmt.Errorf("run %s: %d inputs given, model takes %d", s.name, len(in), len(s.inputs))
	}
	vals := make([]onnx.Value, len(in))
	defer func() {
		for _, v := range vals {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for i, t := range in {
		tt, err := onnx.NewTensor(onnx.NewShape(t.Shape...), t.Data)
		if err != nil {
			return nil, fmt.Errorf("run %s: input %s: %w", s.name, s.inputs[i], err)
		}
		vals[i] = tt
	}
	outs := make([]onnx.Value, len(s.outputs))
	defer func() {
		for _, v := range outs {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	if err := s.s.Run(vals, outs); err != nil {
		return nil, fmt.Errorf("run %s: %w", s.name, err)
	}
	res := make([]Tensor, len(outs))
	for i, v := range outs {
		t, ok := v.(*onnx.Tensor[float32])
		if !ok {
			return nil, fmt.Errorf("run %s: output %s is not a float32 tensor", s.name, s.outputs[i])
		}
		d := t.GetData()
		cp := make([]float32, len(d))
		copy(cp, d)
		res[i] = Tensor{Shape: []int64(t.GetShape()), Data: cp}
	}
	return res, nil
}

// Close releases the session.
func (s *Session) Close() error {
	if s == nil || s.s == nil {
		return nil
	}
	err := s.s.Destroy()
	s.s = nil
	return err
}
