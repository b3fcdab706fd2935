package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"vetlens/internal/config"
)

// prepareDesktopEnv completes the environment Fyne and its libraries
// expect on a bare machine (an Xvfb session, a fresh user), so the
// terminal does not fill with their warnings:
//   - XDG_RUNTIME_DIR missing or not a directory (libwayland prints
//     "error: XDG_RUNTIME_DIR is invalid or not set"): a private (0700)
//     temporary one for this run, removed by cleanup;
//   - the user cache directory missing (Fyne then fails to create its
//     cache space): created.
//
// What cannot be fixed from here goes through fyneLogFilter.
func prepareDesktopEnv() (cleanup func(), err error) {
	cleanup = func() {}
	if d := config.XDGRuntimeDir.FromEnv(); d == "" || !isDir(d) {
		tmp, err := os.MkdirTemp("", "vetlens-runtime-")
		if err != nil {
			return cleanup, fmt.Errorf("runtime dir: %w", err)
		}
		if err := os.Chmod(tmp, 0o700); err != nil {
			os.RemoveAll(tmp)
			return cleanup, fmt.Errorf("runtime dir: %w", err)
		}
		if err := config.XDGRuntimeDir.SetEnv(tmp); err != nil {
			os.RemoveAll(tmp)
			return cleanup, fmt.Errorf("runtime dir: %w", err)
		}
		cleanup = func() { os.RemoveAll(tmp) }
	}
	if d, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return cleanup, fmt.Errorf("cache dir: %w", err)
		}
	}
	return cleanup, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// fyneNotices are the Fyne errors that describe the machine rather than
// VetLens, each with the one line said instead (once per run).
var fyneNotices = []struct{ match, say string }{
	{"failed to watch theme settings", "no desktop session bus (D-Bus): the window uses its default theme and does not follow the desktop's dark-mode setting"},
	{"Preferences load error", "the window's saved preferences were empty or damaged (an earlier run ended abruptly): they start afresh"},
	{"cache space", "no writable cache directory: images are not cached between runs"},
}

// fyneLogFilter is the standard logger's output while the window runs.
// Fyne reports an error as a block of lines ("Fyne error:  REASON",
// "  Cause: ...", "  At: file:line"); a block whose reason is in
// fyneNotices becomes its one explanatory line, said once. Everything
// else passes through unchanged.
type fyneLogFilter struct {
	out io.Writer

	mu    sync.Mutex
	block [][]byte // the lines of the block being read
	said  map[string]bool
}

func newFyneLogFilter(out io.Writer) *fyneLogFilter {
	return &fyneLogFilter{out: out, said: map[string]bool{}}
}

// Write takes one log line (the log package writes each line whole).
func (f *fyneLogFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := append([]byte(nil), p...)
	switch {
	case bytes.Contains(line, []byte("Fyne error: ")):
		f.flush()
		f.block = [][]byte{line}
	case len(f.block) > 0 && bytes.Contains(line, []byte("  Cause: ")):
		f.block = append(f.block, line)
	case len(f.block) > 0 && bytes.Contains(line, []byte("  At: ")):
		f.block = append(f.block, line)
		f.flush()
	default:
		f.flush()
		if _, err := f.out.Write(line); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flush writes the held block: its notice once, or the lines as they were.
func (f *fyneLogFilter) flush() {
	if len(f.block) == 0 {
		return
	}
	block := f.block
	f.block = nil
	reason := string(block[0])
	for _, n := range fyneNotices {
		if strings.Contains(reason, n.match) {
			if !f.said[n.say] {
				f.said[n.say] = true
				fmt.Fprintf(f.out, "vetlens gui: note: %s\n", n.say)
			}
			return
		}
	}
	for _, l := range block {
		f.out.Write(l)
	}
}

// Close writes a block still held.
func (f *fyneLogFilter) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flush()
	return nil
}
