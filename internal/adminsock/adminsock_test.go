package adminsock

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// serve runs an admin server of kind in dir answering "ok", stopped at
// the test's end.
func serve(t *testing.T, kind Kind, dir string) *Listener {
	t.Helper()
	ln, err := Listen(kind, dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ln.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln
}

// get sends GET /keys through rt and returns the status and body.
func get(t *testing.T, rt http.RoundTripper) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Transport: rt}).Get("http://admin/keys")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTransports: each transport, the Windows one included, carries a
// request from Transport to Listen's server; the file is the owner's
// alone and goes away on Close.
func TestTransports(t *testing.T) {
	for _, kind := range []Kind{KindUnix, KindLoopback} {
		t.Run(kind.String(), func(t *testing.T) {
			if kind == KindUnix && runtime.GOOS == "windows" {
				t.Skip("unix sockets are not the Windows transport")
			}
			dir := t.TempDir()
			ln := serve(t, kind, dir)
			path := filepath.Join(dir, kind.String())
			if st, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
				t.Fatalf("%s: %v %v, want mode 0600", path, st, err)
			}
			rt, err := Transport(kind, dir)
			if err != nil {
				t.Fatal(err)
			}
			if code, body := get(t, rt); code != http.StatusOK || body != "ok" {
				t.Fatalf("GET = %d %q", code, body)
			}
			rt.CloseIdleConnections()
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("%s after Close: %v", path, err)
			}
			if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
				t.Fatalf("temporary token file left: %v", err)
			}
		})
	}
}

// TestLoopbackToken: the loopback server listens on 127.0.0.1 only and
// refuses a request without the token or with another one; a fresh
// Listen has a fresh token; a token file naming a non-loopback address
// is refused by the client, so the token never leaves the computer.
func TestLoopbackToken(t *testing.T) {
	dir := t.TempDir()
	ln := serve(t, KindLoopback, dir)
	var e Endpoint
	b, err := os.ReadFile(filepath.Join(dir, TokenFile))
	if err != nil || json.Unmarshal(b, &e) != nil || len(e.Token) != 64 {
		t.Fatalf("token file %q: %v", b, err)
	}
	if host, _, _ := net.SplitHostPort(e.Addr); host != "127.0.0.1" || e.Addr != ln.Addr().String() {
		t.Fatalf("endpoint %s, listener %s: want 127.0.0.1", e.Addr, ln.Addr())
	}
	plain := &http.Transport{}
	defer plain.CloseIdleConnections()
	for _, tc := range []struct{ name, auth string }{
		{"no token", ""},
		{"wrong token", "Bearer " + strings.Repeat("0", 64)},
		{"token without scheme", e.Token},
		{"token prefix", "Bearer " + e.Token[:63]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "http://"+e.Addr+"/keys", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := plain.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"error"`) {
				t.Fatalf("%d %s, want 401 with an error", resp.StatusCode, body)
			}
		})
	}

	dir2 := t.TempDir()
	serve(t, KindLoopback, dir2)
	var e2 Endpoint
	b, _ = os.ReadFile(filepath.Join(dir2, TokenFile))
	if json.Unmarshal(b, &e2) != nil || e2.Token == e.Token {
		t.Fatalf("second token %q equals the first", e2.Token)
	}

	for _, bad := range []string{`{"addr":"192.0.2.1:8443","token":"x"}`, `{"addr":"127.0.0.1:1"}`, `not json`} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, TokenFile), []byte(bad), 0o600)
		if _, err := Transport(KindLoopback, d); err == nil {
			t.Errorf("Transport accepted token file %s", bad)
		}
	}
	if _, err := Transport(KindLoopback, t.TempDir()); err == nil {
		t.Error("Transport without a token file: no error")
	}
}

// TestListenReplacesStale: a file left by a crashed server (socket or
// token, and a half-written temporary token) does not stop the next
// start.
func TestListenReplacesStale(t *testing.T) {
	for _, kind := range []Kind{KindUnix, KindLoopback} {
		if kind == KindUnix && runtime.GOOS == "windows" {
			continue
		}
		dir := t.TempDir()
		for _, f := range []string{kind.String(), kind.String() + ".tmp"} {
			os.WriteFile(filepath.Join(dir, f), []byte("stale"), 0o644)
		}
		ln := serve(t, kind, dir)
		rt, err := Transport(kind, dir)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if code, _ := get(t, rt); code != http.StatusOK {
			t.Fatalf("%s: GET %d", kind, code)
		}
		rt.CloseIdleConnections()
		ln.Close()
	}
}
