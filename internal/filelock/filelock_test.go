package filelock

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestTryLock: a held lock refuses a second holder at once, even in the
// same process; Unlock lets the next one in; a missing folder is an error
// other than ErrHeld.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "learn.lock")
	a, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := TryLock(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("second TryLock: %v, %v; want ErrHeld", b, err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	c, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	c.Unlock()
	if _, err := TryLock(filepath.Join(t.TempDir(), "no", "such", "x.lock")); err == nil || errors.Is(err, ErrHeld) {
		t.Fatalf("TryLock in a missing folder: %v", err)
	}
}
