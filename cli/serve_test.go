package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/internal/adminsock"
)

// syncBuf is a goroutine-safe output buffer.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestKeysWithoutServer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := Keys(ctx, []string{"create", "--data-dir", dir, "--customer", "Clinic A"}, &out, &errb); code != 0 {
		t.Fatalf("create: %d %s", code, errb.String())
	}
	key := lastLine(out.String())
	if !strings.HasPrefix(key, "vl_") || len(key) < 40 {
		t.Fatalf("last line %q", key)
	}
	out.Reset()
	Keys(ctx, []string{"list", "--data-dir", dir}, &out, &errb)
	prefix := key[3:11]
	if !strings.Contains(out.String(), prefix) || !strings.Contains(out.String(), "active") || strings.Contains(out.String(), key[12:]) {
		t.Fatalf("list: %s", out.String())
	}
	// Two more keys, revoked by the key's own beginning and by the whole key.
	var more []string
	for range 2 {
		out.Reset()
		Keys(ctx, []string{"create", "--data-dir", dir, "--customer", "Clinic A"}, &out, &errb)
		more = append(more, lastLine(out.String()))
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"revoke", "--data-dir", dir, prefix}, 0},
		{[]string{"revoke", "--data-dir", dir, more[0][:11]}, 0},
		{[]string{"revoke", "--data-dir", dir, more[1]}, 0},
		{[]string{"revoke", "--data-dir", dir, "vl_ffffffff"}, ExitRejected},
		{[]string{"revoke", "--data-dir", dir, "zz"}, ExitRejected},
		{[]string{"revoke", "--data-dir", dir, "ffffffff"}, ExitRejected},
		{[]string{"create", "--data-dir", dir}, ExitUsage},
		{[]string{"create", "--data-dir", dir, "--customer", "x", "--tier", "gold"}, ExitRejected},
		{[]string{"frob", "--data-dir", dir}, ExitUsage},
		{[]string{}, ExitUsage},
	} {
		if code := Keys(ctx, tc.args, io.Discard, io.Discard); code != tc.code {
			t.Errorf("keys %v: %d, want %d", tc.args, code, tc.code)
		}
	}
	out.Reset()
	Keys(ctx, []string{"list", "--data-dir", dir}, &out, &errb)
	if strings.Count(out.String(), "revoked") != 3 || strings.Contains(out.String(), "active") {
		t.Fatalf("after revoke: %s", out.String())
	}
}

// TestServeAndKeysThroughSocket starts `vetlens serve` on a loopback port,
// creates a key with `vetlens keys` through the admin socket (the server
// holds the database), calls the API over HTTPS pinned to the printed
// fingerprint, checks the redirect, revokes the key, and shuts down; the
// admin socket's file is gone after. Both admin transports run, the
// Windows one (loopback TCP and DIR/admin.token) included.
func TestServeAndKeysThroughSocket(t *testing.T) {
	for _, kind := range []adminsock.Kind{adminsock.KindUnix, adminsock.KindLoopback} {
		t.Run(kind.String(), func(t *testing.T) {
			if kind != adminsock.Native && adminsock.Native != adminsock.KindUnix {
				t.Skip("unix sockets are not this system's admin transport")
			}
			defer func(k adminsock.Kind) { adminKind = k }(adminKind)
			adminKind = kind
			testServeAndKeys(t)
		})
	}
}

func testServeAndKeys(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &syncBuf{}, &syncBuf{}
	done := make(chan int, 1)
	go func() {
		done <- Serve(ctx, []string{"--data-dir", dir, "--addr", "127.0.0.1:0", "--redirect-addr", "127.0.0.1:0", "--models", filepath.Join("..", "models")}, out, errb)
	}()
	var addr, fp, redir string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && redir == ""; time.Sleep(20 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			l := sc.Text()
			if a, ok := strings.CutPrefix(l, "vetlens: serving https://"); ok {
				addr = a
			}
			if f, ok := strings.CutPrefix(l, "certificate SHA-256 fingerprint: "); ok {
				fp = f
			}
			if r, ok := strings.CutPrefix(l, "vetlens: redirecting http://"); ok {
				redir = strings.Fields(r)[0]
			}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, errb.String())
		default:
		}
	}
	if addr == "" || fp == "" || redir == "" {
		t.Fatalf("no address/fingerprint: %s %s", out.String(), errb.String())
	}
	if st, err := os.Stat(filepath.Join(dir, adminKind.String())); err != nil || adminKind == adminsock.KindUnix && st.Mode().Perm() != 0o600 {
		t.Fatalf("admin socket: %v %v", st, err)
	}
	var kout, kerr bytes.Buffer
	if code := Keys(ctx, []string{"create", "--data-dir", dir, "--customer", "Clinic B"}, &kout, &kerr); code != 0 {
		t.Fatalf("keys create via socket: %d %s", code, kerr.String())
	}
	key := lastLine(kout.String())
	// Pin the certificate to the printed fingerprint.
	want := strings.ReplaceAll(fp, ":", "")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			sum := sha256.Sum256(raw[0])
			if !strings.EqualFold(hex.EncodeToString(sum[:]), want) {
				t.Errorf("certificate fingerprint differs from the printed one")
			}
			return nil
		},
	}}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(k string) int {
		req, _ := http.NewRequest("POST", "https://"+addr+"/usg/v1/predict", strings.NewReader(`{"BUN":27,"CREATININE":1.2,"HGB":15.1,"ABSOLUTE LYMPHOCYTES":1435,"age_months":14}`))
		req.Header.Set("x-api-key", k)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(key); code != 200 {
		t.Fatalf("predict with new key: %d", code)
	}
	resp, err := client.Get("http://" + redir + "/usg/v1/health?x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusPermanentRedirect || !strings.HasPrefix(loc, "https://127.0.0.1:") || !strings.HasSuffix(loc, "/usg/v1/health?x=1") {
		t.Fatalf("redirect %d %s", resp.StatusCode, loc)
	}
	forged, _ := http.NewRequest("GET", "http://"+redir+"/v3/health", nil)
	forged.Host = "evil.example.com"
	if resp, err = client.Do(forged); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, "https://127.0.0.1:") {
		t.Fatalf("redirect with a forged Host: %s", loc)
	}
	// A request with a key over plain HTTP is refused, naming HTTPS.
	keyed, _ := http.NewRequest("POST", "http://"+redir+"/v3/predict", strings.NewReader(`{}`))
	keyed.Header.Set("x-api-key", key)
	if resp, err = client.Do(keyed); err != nil {
		t.Fatal(err)
	}
	kb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" || !strings.Contains(string(kb), "must use HTTPS") {
		t.Fatalf("plain HTTP with a key: %d %s", resp.StatusCode, kb)
	}
	kout.Reset()
	Keys(ctx, []string{"list", "--data-dir", dir}, &kout, &kerr)
	if !strings.Contains(kout.String(), "Clinic B") {
		t.Fatalf("list via socket: %s %s", kout.String(), kerr.String())
	}
	// Through the socket too, a reference that fits no key is refused, and
	// the whole key revokes it.
	if code := Keys(ctx, []string{"revoke", "--data-dir", dir, "vl_" + strings.Repeat("f", 8)}, io.Discard, io.Discard); code != ExitRejected {
		t.Fatalf("revoke of an unknown key via socket: exit %d", code)
	}
	if code := Keys(ctx, []string{"revoke", "--data-dir", dir, key}, io.Discard, &kerr); code != 0 {
		t.Fatalf("revoke via socket: %s", kerr.String())
	}
	if code := post(key); code != 403 {
		t.Fatalf("revoked key: %d, want 403 at once", code)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down")
	}
	if _, err := os.Stat(filepath.Join(dir, adminKind.String())); !os.IsNotExist(err) {
		t.Fatalf("%s after shutdown: %v", adminKind, err)
	}
	// The certificate is reused on the next start.
	if _, created, err := loadOrCreateCert(dir, "", ""); err != nil || created {
		t.Fatalf("second start regenerates the certificate: %v %v", created, err)
	}
}

// TestPublicHost: the redirect's target host is the configured one, else
// a specific listen address, else the machine's host name; never a
// request's Host (httpapi.RedirectHandler).
func TestPublicHost(t *testing.T) {
	name, _ := os.Hostname()
	if name == "" {
		name = "localhost"
	}
	for _, tc := range []struct{ configured, listen, want string }{
		{"vetlens.clinic.lan", "0.0.0.0", "vetlens.clinic.lan"},
		{"", "192.168.1.20", "192.168.1.20"},
		{"", "127.0.0.1", "127.0.0.1"},
		{"", "0.0.0.0", name},
		{"", "::", name},
		{"", "", name},
	} {
		if got := publicHost(tc.configured, tc.listen); got != tc.want {
			t.Errorf("publicHost(%q, %q) = %q, want %q", tc.configured, tc.listen, got, tc.want)
		}
	}
}

// TestServeUSGRateFlag: --usg-rate takes dollars with at most two
// decimals; anything else is a usage error before the server starts.
func TestServeUSGRateFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want app.Cents
		ok   bool
	}{{"0.75", 75, true}, {"2", 200, true}, {"$1.10", 110, true}, {"0.505", 0, false}, {"-1", 0, false}, {"abc", 0, false}} {
		d := dollarsFlag(app.DefaultUSGRate)
		err := d.Set(tc.in)
		if tc.ok != (err == nil) || tc.ok && app.Cents(d) != tc.want {
			t.Errorf("--usg-rate %s: %d cents, %v", tc.in, d, err)
		}
	}
	if d := dollarsFlag(app.DefaultUSGRate); d.String() != "0.50" {
		t.Errorf("default shown as %q", d.String())
	}
	var errb bytes.Buffer
	if code := Serve(context.Background(), []string{"--data-dir", t.TempDir(), "--usg-rate", "0.505"}, io.Discard, &errb); code != ExitUsage || !strings.Contains(errb.String(), "at most 2 decimals") {
		t.Fatalf("--usg-rate 0.505: exit %d, %s", code, errb.String())
	}
}
