package cli

import (
	"bytes"
	"log"
	"os"
	"strings"
	"testing"
)

// TestFyneLogFilter: Fyne's reports about the machine become one line
// each, said once; other Fyne errors and other log lines pass unchanged.
func TestFyneLogFilter(t *testing.T) {
	var out bytes.Buffer
	f := newFyneLogFilter(&out)
	l := log.New(f, "", 0)
	report := func(reason, cause string) {
		l.Println("Fyne error: ", reason)
		if cause != "" {
			l.Println("  Cause:", cause)
		}
		l.Printf("  At: %s:%d", "app.go", 1)
	}
	report("failed to watch theme settings", `exec: "dbus-launch": executable file not found in $PATH`)
	report("Preferences load error:", "EOF")
	report("failed to watch theme settings", "again")
	l.Println("an ordinary line")
	report("Failed to create fyne cache space", "mkdir: no such file or directory")
	report("Failed to create app cache space", "mkdir: no such file or directory")
	report("Window creation error", "")
	f.Close()
	got := out.String()
	for _, c := range []struct {
		text  string
		count int
	}{
		{"vetlens gui: note: no desktop session bus (D-Bus)", 1},
		{"vetlens gui: note: the window's saved preferences were empty", 1},
		{"vetlens gui: note: no writable cache directory", 1},
		{"an ordinary line", 1},
		{"Fyne error:  Window creation error", 1},
		{"At: app.go:1", 1}, // the unknown error's block, whole
		{"dbus-launch", 0},
		{"EOF", 0},
	} {
		if n := strings.Count(got, c.text); n != c.count {
			t.Errorf("%q %d times, want %d, in:\n%s", c.text, n, c.count, got)
		}
	}
}

// TestPrepareDesktopEnv: a missing XDG_RUNTIME_DIR is replaced by a
// private directory for the run, removed afterwards; a valid one is kept.
func TestPrepareDesktopEnv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", home+"/cache/deep")
	for _, c := range []struct {
		name, runtime string
		keep          bool
	}{
		{name: "unset", runtime: ""},
		{name: "not a directory", runtime: home + "/nope"},
		{name: "valid", runtime: home, keep: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", c.runtime)
			cleanup, err := prepareDesktopEnv()
			if err != nil {
				t.Fatal(err)
			}
			d := os.Getenv("XDG_RUNTIME_DIR")
			st, err := os.Stat(d)
			if err != nil || !st.IsDir() || (c.keep != (d == c.runtime)) {
				t.Fatalf("XDG_RUNTIME_DIR %q: %v", d, err)
			}
			if !c.keep && st.Mode().Perm() != 0o700 {
				t.Fatalf("runtime dir mode %v", st.Mode().Perm())
			}
			if _, err := os.Stat(home + "/cache/deep"); err != nil {
				t.Fatalf("cache dir: %v", err)
			}
			cleanup()
			if _, err := os.Stat(d); c.keep != (err == nil) {
				t.Fatalf("after cleanup: %v", err)
			}
		})
	}
}
