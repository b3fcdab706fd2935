package cli

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/platform/store"
)

// newBareService is a service without engines on a store in dir.
func newBareService(t *testing.T, dir string) *app.Service {
	t.Helper()
	st, err := store.Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := app.New(app.Deps{Repos: st.Repos()}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestAPIListenerOnOff(t *testing.T) {
	dir := t.TempDir()
	svc := newBareService(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := newAPIListener(ctx, svc, serveConfig{dataDir: dir, inFlight: 4}, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s := l.Status(); s.Running {
		t.Fatal("running before Start")
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	health := func(addr string) error {
		resp, err := client.Get("https://" + addr + "/v3/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	for round := 0; round < 2; round++ { // on, off, and on again
		if err := l.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		s := l.Status()
		if !s.Running || s.Addr == "" || len(s.Fingerprint) != 95 {
			t.Fatalf("round %d: status %+v", round, s)
		}
		if err := health(s.Addr); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := l.Stop(); err != nil {
			t.Fatal(err)
		}
		if l.Status().Running {
			t.Fatal("running after Stop")
		}
		if err := health(s.Addr); err == nil {
			t.Fatalf("round %d: still serving after Stop", round)
		}
	}
	// An address in use is reported by Start, and nothing runs.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := l.Start(busy.Addr().String()); err == nil {
		t.Fatal("started on an address in use")
	}
	if st := l.Status(); st.Running || st.Err == nil || !strings.Contains(st.Err.Error(), "in use") {
		t.Fatalf("after a failed start: %+v", st)
	}
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
}
