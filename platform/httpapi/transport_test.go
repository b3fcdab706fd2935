package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"vetlens/internal/clock"
)

// TestRedirectIgnoresHost: the HTTP to HTTPS redirect goes to the
// configured public host whatever Host the request carries (it echoed
// Host before: Host: evil.example.com gave Location: https://evil.example.com).
// A request with an x-api-key header gets 403 naming HTTPS instead of a
// redirect (issue 46), in the USG shape under /usg/.
func TestRedirectIgnoresHost(t *testing.T) {
	h := RedirectHandler("vetlens.clinic.lan", "8443")
	for _, tc := range []struct {
		name, host, target, want string
	}{
		{"forged Host", "evil.example.com", "/usg/v1/health?x=1", "https://vetlens.clinic.lan:8443/usg/v1/health?x=1"},
		{"forged Host with port", "evil.example.com:80", "/v3/health", "https://vetlens.clinic.lan:8443/v3/health"},
		{"no Host", "", "/", "https://vetlens.clinic.lan:8443/"},
		{"scheme-relative path", "evil.example.com", "//evil.example.com/x", "https://vetlens.clinic.lan:8443/evil.example.com/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://placeholder"+tc.target, nil)
			r.Host = tc.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusPermanentRedirect || w.Header().Get("Location") != tc.want {
				t.Fatalf("%d Location %q, want 308 %q", w.Code, w.Header().Get("Location"), tc.want)
			}
		})
	}
	// A request carrying a key is refused, naming HTTPS, never redirected.
	for _, tc := range []struct {
		name, method, target, key, want string
		usgShape                        bool
	}{
		{"cardiac predict with a key", "POST", "/v3/predict", "vl_12345678_secret", "https://vetlens.clinic.lan:8443/v3/predict", false},
		{"health with a key", "GET", "/v3/health?x=1", "vl_12345678_secret", "https://vetlens.clinic.lan:8443/v3/health?x=1", false},
		{"USG predict with a key", "POST", "/usg/v1/predict", "vl_12345678_secret", "https://vetlens.clinic.lan:8443/usg/v1/predict", true},
		{"an empty key header", "POST", "/v3/predict", "", "https://vetlens.clinic.lan:8443/v3/predict", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://vetlens.clinic.lan"+tc.target, strings.NewReader(`{"image":"..."}`))
			r.Header["X-Api-Key"] = []string{tc.key}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			body := w.Body.String()
			if w.Code != http.StatusForbidden || w.Header().Get("Location") != "" || !strings.Contains(body, "HTTPS") || !strings.Contains(body, tc.want) ||
				w.Header().Get("Connection") != "close" {
				t.Fatalf("%d Location %q Connection %q: %s; want 403 naming HTTPS and %s", w.Code, w.Header().Get("Location"), w.Header().Get("Connection"), body, tc.want)
			}
			if got := strings.Contains(body, `"code":"https_required"`); got != tc.usgShape {
				t.Errorf("USG error shape %v, want %v: %s", got, tc.usgShape, body)
			}
		})
	}
	if w := httptest.NewRecorder(); true {
		RedirectHandler("fe80::1", "8443").ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
		if loc := w.Header().Get("Location"); loc != "https://[fe80::1]:8443/x" {
			t.Fatalf("IPv6 public host: %q", loc)
		}
	}
}

// serveReal runs the API behind HTTPServer (its timeouts, ErrorLog and
// TLS configuration) on a loopback listener with its connection limits
// (Listener) until the test ends.
func serveReal(t *testing.T, a *api) (addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := a.h.HTTPServer(TLSConfig(a.srv.TLS.Certificates...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, a.h.Listener(ln), time.Second) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// TestTLSOnlyAEAD: TLS 1.2 offers only ECDHE AEAD suites; a client that
// offers only CBC-SHA1 suites (openssl s_client -tls1_2 -cipher
// AES256-SHA) cannot connect, an AEAD one and TLS 1.3 can.
func TestTLSOnlyAEAD(t *testing.T) {
	conf := TLSConfig()
	if conf.MinVersion != tls.VersionTLS12 || len(conf.CipherSuites) == 0 {
		t.Fatalf("%+v", conf)
	}
	secure := map[uint16]bool{}
	for _, cs := range tls.CipherSuites() {
		secure[cs.ID] = true
	}
	for _, id := range conf.CipherSuites {
		name := tls.CipherSuiteName(id)
		if !secure[id] || !strings.HasPrefix(name, "TLS_ECDHE_") || !(strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305")) {
			t.Errorf("suite %s is not an ECDHE AEAD suite", name)
		}
	}

	a := newAPI(t, apiOpts{})
	addr := serveReal(t, a)
	for _, tc := range []struct {
		name   string
		max    uint16
		suites []uint16
		ok     bool
	}{
		{"TLS 1.2 CBC-SHA1 (AES256-SHA)", tls.VersionTLS12, []uint16{tls.TLS_RSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA}, false},
		{"TLS 1.2 CBC-SHA256", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA256}, false},
		{"TLS 1.2 AES-GCM", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}, true},
		{"TLS 1.2 ChaCha20", tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256}, true},
		{"TLS 1.3", tls.VersionTLS13, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &net.Dialer{Timeout: 5 * time.Second}
			c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tc.max, CipherSuites: tc.suites})
			if err == nil {
				c.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("handshake error %v, want success %v", err, tc.ok)
			}
		})
	}
	if path, err := exec.LookPath("openssl"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, tc := range []struct {
			cipher string
			ok     bool
		}{{"AES256-SHA", false}, {"ECDHE-RSA-AES256-SHA", false}, {"ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384", true}} {
			out, err := exec.CommandContext(ctx, path, "s_client", "-connect", addr, "-tls1_2", "-cipher", tc.cipher).CombinedOutput()
			if (err == nil) != tc.ok {
				t.Fatalf("openssl s_client -tls1_2 -cipher %s: %v, want success %v:\n%s", tc.cipher, err, tc.ok, out)
			}
			t.Logf("openssl s_client -tls1_2 -cipher %s: error %v", tc.cipher, err)
		}
	}
}

// TestHSTS: every HTTPS response carries Strict-Transport-Security.
func TestHSTS(t *testing.T) {
	a := newAPI(t, apiOpts{})
	for _, path := range []string{"/v3/health", "/usg/v1/health", "/v3/nope", "/eu/predict"} {
		resp, _ := a.do("GET", path, a.key, nil)
		if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
			t.Errorf("%s: Strict-Transport-Security %q", path, got)
		}
	}
}

// bigRectify is the fake PoP pipeline with a 24 MB rectified image: a
// response much larger than the loopback socket buffers.
type bigRectify struct{ *fakePoP }

func (bigRectify) Rectify(ctx context.Context, b []byte, c [4][2]float64) ([]byte, int, int, error) {
	return bytes.Repeat([]byte{0xff}, 24<<20), 4000, 3000, nil
}

// TestUnreadResponseFreesHandler: clients that send /v3/rectify and never
// read the (large) answer do not hold their handlers (they were held more
// than 60 s before), over HTTP/1.1 and HTTP/2; a client that reads gets
// the whole answer. That the deadline is the write timeout from the last
// write is TestTimedWriterDeadlines's, on a fake clock; here net/http
// enforces it on the wall clock, and the test only waits for the handlers.
func TestUnreadResponseFreesHandler(t *testing.T) {
	// The reading client must get its 32 MB within the timeout between
	// writes, which the race detector's slower encoding would exceed.
	const writeTimeout = raceSlowdown * 500 * time.Millisecond
	a := newAPI(t, apiOpts{pop: bigRectify{&fakePoP{sessions: map[string]*fakeSession{}}}, cfg: Config{WriteTimeout: writeTimeout}})
	body := `{"image":"` + b64(grayPNG(t, 1, 640, 480)) + `","corners":[[1,1],[600,1],[600,400],[1,400]]}`

	resp, b := a.do("POST", "/v3/rectify", a.key, body)
	if resp.StatusCode != 200 || len(b) < 32<<20 {
		t.Fatalf("reading client: %d, %d bytes", resp.StatusCode, len(b))
	}

	start := time.Now()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(a.srv.URL, "https://"))
	var conns []net.Conn
	for range 3 { // HTTP/1.1, raw: send the request, never read
		c, err := tls.Dial("tcp", net.JoinHostPort(host, port), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v3/rectify HTTP/1.1\r\nHost: x\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", a.key, len(body), body)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var h2 []*http.Response
	for range 3 { // HTTP/2: headers read, body never
		req, _ := http.NewRequest("POST", a.srv.URL+"/v3/rectify", strings.NewReader(body))
		req.Header.Set("x-api-key", a.key)
		resp, err := a.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("protocol %s", resp.Proto)
		}
		h2 = append(h2, resp)
	}
	defer func() {
		for _, r := range h2 {
			r.Body.Close()
		}
	}()
	// All six handlers are in flight, then freed by the write timeout.
	// The guard is a hang's, not a speed bound.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		a.h.mu.Lock()
		left := 0
		for _, v := range a.h.inFlight {
			left += v
		}
		a.h.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers still blocked a minute after the unread responses (write timeout %v)", left, writeTimeout)
		}
	}
	t.Logf("6 unread 32 MB responses: handlers freed %v after the requests (write timeout %v)", time.Since(start), writeTimeout)
}

// TestStreamOutlivesWriteTimeout: a stream longer than the write timeout
// (each image takes 300 ms, the timeout is 200 ms) is not cut while its
// events and heartbeats flow: every photo arrives, then the billing.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	a := newAPI(t, apiOpts{cardiac: slowCardiac{}, cfg: Config{WriteTimeout: 200 * time.Millisecond, HeartbeatInterval: 50 * time.Millisecond}})
	imgs := []string{}
	for range 4 { // 4 x 300 ms
		imgs = append(imgs, b64(grayPNG(t, 1, 64, 64)))
	}
	resp := a.stream(context.Background(), map[string]any{"images": imgs})
	defer resp.Body.Close()
	evs, beats := readSSE(t, resp)
	photos := 0
	for _, e := range evs {
		if e.name == "photo" {
			photos++
		}
	}
	if photos != len(imgs) || evs[len(evs)-1].name != "billing" || beats == 0 {
		t.Fatalf("stream ended with %d photos of %d, %d heartbeats: %+v", photos, len(imgs), beats, evs)
	}
}

// deadlines records the deadlines a timedWriter sets.
type deadlines struct {
	read, write []time.Time
	flushes     int
}

func (d *deadlines) SetReadDeadline(t time.Time) error  { d.read = append(d.read, t); return nil }
func (d *deadlines) SetWriteDeadline(t time.Time) error { d.write = append(d.write, t); return nil }
func (d *deadlines) Flush() error                       { d.flushes++; return nil }

// TestTimedWriterDeadlines: on the server's clock, a response's write
// deadline is the write timeout from its start and from every later write
// and flush (a stream that keeps moving is never cut), and a response to a
// body not read to its end ends the read deadline when the handler returns
// and closes the connection.
func TestTimedWriterDeadlines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const timeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name      string
		body      string
		read      int // bytes of the body the handler reads
		wantClose bool
	}{
		{"no body", "", 0, false},
		{"body read", "0123456789", 10, false},
		{"body not read to its end", "0123456789", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			rec := httptest.NewRecorder()
			d := &deadlines{}
			tw := newTimedWriter(rec, timeout, clk)
			tw.rc = d
			r := httptest.NewRequest("POST", "/v3/predict", strings.NewReader(tc.body))
			tw.trackBody(r)
			r.Body.Read(make([]byte, tc.read))
			tw.WriteHeader(200)
			clk.Advance(150 * time.Millisecond)
			tw.Write([]byte("event"))
			clk.Advance(150 * time.Millisecond)
			tw.Flush()
			tw.finish()
			want := []time.Time{t0.Add(timeout), t0.Add(150*time.Millisecond + timeout), t0.Add(300*time.Millisecond + timeout)}
			if !slices.Equal(d.write, want) || d.flushes != 1 {
				t.Fatalf("write deadlines %v, %d flushes; want %v, 1", d.write, d.flushes, want)
			}
			var wantRead []time.Time
			if tc.wantClose {
				wantRead = []time.Time{t0.Add(300 * time.Millisecond)}
			}
			if !slices.Equal(d.read, wantRead) || (rec.Header().Get("Connection") == "close") != tc.wantClose {
				t.Fatalf("read deadlines %v, Connection %q; want %v, close %v", d.read, rec.Header().Get("Connection"), wantRead, tc.wantClose)
			}
		})
	}
}

// TestHandshakeErrorsRateLimited: failed TLS handshakes (a port scan)
// are logged at most HandshakeLogsPerMinute times a minute; the rest are
// counted in one line (each one was logged before: 20,000 lines from one
// scan).
func TestHandshakeErrorsRateLimited(t *testing.T) {
	now := time.Unix(0, 0)
	var buf bytes.Buffer
	el := newErrorLog(slog.New(slog.NewTextHandler(&buf, nil)), 10, time.Minute, func() time.Time { return now })
	for i := range 20000 {
		el.Printf("http: TLS handshake error from 10.0.0.%d:5000: EOF", i%250)
	}
	el.Printf("http: some other server error")
	now = now.Add(time.Minute)
	el.Printf("http: TLS handshake error from 10.0.0.1:5000: EOF")
	out := buf.String()
	if n := strings.Count(out, "TLS handshake failed"); n != 11 {
		t.Fatalf("%d handshake lines, want 10 + 1:\n%s", n, out)
	}
	if !strings.Contains(out, "count=19990") || !strings.Contains(out, "some other server error") {
		t.Fatalf("summary or other errors missing:\n%s", out)
	}

	// The real server: 40 probes that send a bad record and stop. Each
	// probe reads until the server closes the connection, which it does
	// after logging (or counting) the failed handshake, so all 40 have
	// been through the limiter when the lines are counted.
	var logs syncBuffer
	a := newAPI(t, apiOpts{cfg: Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), HandshakeLogsPerMinute: 5}})
	addr := serveReal(t, a)
	for range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("\x16\x03\x01\x00\x05hello"))
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard, not a speed bound
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("probe: the server did not close the connection: %v", err)
		}
		c.Close()
	}
	if n := strings.Count(logs.String(), "TLS handshake failed"); n != 5 {
		t.Fatalf("%d handshake lines for 40 probes, want 5:\n%s", n, logs.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
