package cli

import (
	"io"
	"path/filepath"
	"testing"
)

func TestParseGUI(t *testing.T) {
	for _, c := range []struct {
		name      string
		args      []string
		ok        bool
		code      int
		serve     bool
		addr, dir string
	}{
		{name: "defaults", ok: true, addr: "0.0.0.0:8443"},
		{name: "data dir and serve", args: []string{"--data-dir", "/tmp/vl", "--serve", "--addr", "127.0.0.1:9443"}, ok: true, serve: true, addr: "127.0.0.1:9443", dir: "/tmp/vl"},
		{name: "help", args: []string{"-h"}, code: ExitOK},
		{name: "unknown flag", args: []string{"--nope"}, code: ExitUsage},
		{name: "stray argument", args: []string{"x.jpg"}, code: ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", "/cfg")
			t.Setenv("HOME", "/home/u")
			g, code, ok := parseGUI(c.args, io.Discard, nil)
			if ok != c.ok || code != c.code {
				t.Fatalf("ok %v code %d, want %v %d", ok, code, c.ok, c.code)
			}
			if !ok {
				return
			}
			want := c.dir
			if want == "" {
				want = filepath.Join("/cfg", "vetlens")
			}
			if g.serve != c.serve || g.addr != c.addr || g.dataDir != want || g.models == "" || g.inFlight <= 0 || g.cardiacConc != 1 {
				t.Fatalf("config %+v", g)
			}
		})
	}
}
