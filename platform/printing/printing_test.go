package printing

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCmd writes an executable shell script named name into dir.
func fakeCmd(t *testing.T, dir, name, script string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLP(t *testing.T) {
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	lp := fakeCmd(t, dir, "lp", `echo "$@" > `+args+`; echo "request id is office-7 (1 file(s))"`)
	failing := fakeCmd(t, dir, "lp-fail", `echo "lp: The printer or class does not exist." >&2; exit 1`)
	withDefault := fakeCmd(t, dir, "lpstat-default", `echo "system default destination: office"`)
	noDefault := fakeCmd(t, dir, "lpstat-none", `echo "no system default destination"`)
	broken := fakeCmd(t, dir, "lpstat-broken", `echo "lpstat: Scheduler is not running." >&2; exit 1`)
	for _, tc := range []struct {
		name string
		p    LP
		ok   bool
		why  string
	}{
		{"default set", LP{LPPath: lp, LPStatPath: withDefault}, true, ""},
		{"no default", LP{LPPath: lp, LPStatPath: noDefault}, false, "no default printer is chosen"},
		{"scheduler down", LP{LPPath: lp, LPStatPath: broken}, false, "no default printer"},
		{"no lp", LP{LPPath: filepath.Join(dir, "missing"), LPStatPath: withDefault}, false, "printing is not set up on this computer"},
		{"named destination", LP{LPPath: lp, LPStatPath: withDefault, Destination: "office"}, true, ""},
		{"named destination missing", LP{LPPath: lp, LPStatPath: broken, Destination: "office"}, false, "printer office is not set up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := tc.p.Ready()
			if ok != tc.ok || !strings.Contains(why, tc.why) || tc.why == "" && why != "" {
				t.Fatalf("Ready() = %v %q, want %v %q", ok, why, tc.ok, tc.why)
			}
		})
	}
	job, err := LP{LPPath: lp, Destination: "office"}.Print(context.Background(), "/tmp/r.pdf")
	if err != nil || job != "request id is office-7 (1 file(s))" {
		t.Fatalf("print %q %v", job, err)
	}
	if b, _ := os.ReadFile(args); strings.TrimSpace(string(b)) != "-d office -- /tmp/r.pdf" {
		t.Fatalf("lp args %q", b)
	}
	if _, err := (LP{LPPath: failing}).Print(context.Background(), "/tmp/r.pdf"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("failing lp: %v", err)
	}
}
