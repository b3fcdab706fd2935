package learn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"vetlens/internal/filelock"
)

// ErrBusy means another learning run (in this or another process) holds
// the learning lock.
var ErrBusy = errors.New("another learning run is in progress")

// tryLock takes the learning lock at path without waiting (internal/filelock:
// flock on Unix, LockFileEx on Windows; the system frees it when the process
// dies, so a crash never leaves it held): ErrBusy when it is held.
func tryLock(path string) (*filelock.Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("learning lock: %w", err)
	}
	l, err := filelock.TryLock(path)
	if errors.Is(err, filelock.ErrHeld) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, fmt.Errorf("learning lock: %w", err)
	}
	return l, nil
}
