// Package filelock takes an exclusive lock on a file without waiting, one
// the operating system releases when the process dies, so a crash never
// leaves it held: flock on Unix (lock_unix.go), LockFileEx on Windows
// (lock_windows.go).
package filelock

import (
	"errors"
	"fmt"
	"os"
)

// ErrHeld means another open of the file, in this or another process,
// holds the lock.
var ErrHeld = errors.New("filelock: held elsewhere")

// Lock is a held lock.
type Lock struct{ f *os.File }

// TryLock creates the file at path if needed and locks it, or returns
// ErrHeld at once when it is held.
func TryLock(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		if errors.Is(err, ErrHeld) {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f}, nil
}

// Unlock releases the lock and closes the file.
func (l *Lock) Unlock() error {
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
