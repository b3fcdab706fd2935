package learn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrBusy means another learning run (in this or another process) holds
// the learning lock.
var ErrBusy = errors.New("another learning run is in progress")

// fileLock is an exclusive flock on a file; the kernel releases it when
// the process dies, so a crash never leaves it held.
type fileLock struct{ f *os.File }

// tryLock takes the lock at path without waiting: ErrBusy when it is held.
func tryLock(path string) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("learning lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("learning lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("learning lock: %w", err)
	}
	return &fileLock{f}, nil
}

func (l *fileLock) unlock() { l.f.Close() }
