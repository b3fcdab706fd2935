package httpapi

import (
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"vetlens/api/usgv1"
	"vetlens/internal/clock"
)

// TLSConfig is the API's TLS configuration for certs: TLS 1.2 or 1.3,
// and under TLS 1.2 only forward-secret AEAD suites (ECDHE with AES-GCM or
// ChaCha20-Poly1305; no CBC, no SHA-1 MAC, no RSA key exchange). TLS 1.3
// suites are all AEAD and not configurable.
func TLSConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{
		Certificates: certs,
		MinVersion:   tls.VersionTLS12,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		NextProtos: []string{"h2", "http/1.1"},
	}
}

// RedirectHandler answers plain HTTP with 308 to the same path and query
// on https://publicHost:httpsPort. The target host is the configured
// one, never the request's Host header, so a forged Host cannot turn the
// redirect into one to another site.
//
// A request that carries an x-api-key header is refused instead (403,
// naming HTTPS and the address to use; the USG error shape, code
// https_required, under /usg/): a redirect would let a client set up with
// http:// keep working while it sends its key in clear text on every
// call. The connection is closed after the answer, the body unread.
func RedirectHandler(publicHost, httpsPort string) http.Handler {
	base := "https://" + net.JoinHostPort(publicHost, httpsPort)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.RequestURI()
		if !strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "//") {
			uri = "/" + strings.TrimLeft(uri, "/")
		}
		if len(r.Header.Values("x-api-key")) > 0 {
			msg := "API requests with a key must use HTTPS: send this one to " + base + uri +
				". Plain HTTP is refused because the key crosses the network in clear text; this key was sent so, so consider replacing it (vetlens keys create, then keys revoke)"
			w.Header().Set("Connection", "close")
			if strings.HasPrefix(uri, "/usg/") {
				usgError(w, usgv1.CodeHTTPSRequired, msg)
				return
			}
			v3Error(w, http.StatusForbidden, msg)
			return
		}
		http.Redirect(w, r, base+uri, http.StatusPermanentRedirect)
	})
}

// bodyReadTimeout is how long a route with this body limit may take to
// send its body: BodyReadBase plus the limit at MinBodyRate.
func (s *Server) bodyReadTimeout(limit int64) time.Duration {
	return s.cfg.BodyReadBase + time.Duration(limit*int64(time.Second)/s.cfg.MinBodyRate)
}

// startBody sets the read deadline for a route's body (bodyReadTimeout).
func (s *Server) startBody(w http.ResponseWriter, limit int64) {
	http.NewResponseController(w).SetReadDeadline(s.cfg.Clock.Now().Add(s.bodyReadTimeout(limit)))
}

// bodyDone moves the read deadline past the request's work once its body
// is read: net/http cancels a request whose connection hits its read
// deadline.
func (s *Server) bodyDone(w http.ResponseWriter) {
	http.NewResponseController(w).SetReadDeadline(s.cfg.Clock.Now().Add(s.cfg.RequestTimeout + 10*time.Second))
}

// timedWriter sets the connection's (or HTTP/2 stream's) write deadline
// to timeout from the moment a response starts, and renews it at every
// write and flush, so a response must be delivered within timeout and a
// stream must keep moving (its events and heartbeats renew it).
//
// A response that starts before an HTTP/1.x request's body was read to
// its end (a missing or wrong key, a body past its read deadline, too
// large, or refused part-way) closes the connection after it
// (Connection: close). Otherwise net/http would read the rest of the body
// first, to reuse the connection: a client that sends a Content-Length
// and then nothing, or a byte a second, would hold the connection (and
// the answer) until the server's backstop read deadline, 310 s.
type timedWriter struct {
	http.ResponseWriter
	rc      deadliner
	clock   clock.Clock
	timeout time.Duration
	body    *trackedBody // nil: no body to track
	started bool
}

// deadliner is what timedWriter uses of *http.ResponseController.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
	Flush() error
}

func newTimedWriter(w http.ResponseWriter, timeout time.Duration, c clock.Clock) *timedWriter {
	return &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), clock: c, timeout: timeout}
}

// trackBody tracks r's HTTP/1.x body (when it has one) for the response.
func (t *timedWriter) trackBody(r *http.Request) {
	if r.ProtoMajor != 1 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	t.body = &trackedBody{ReadCloser: r.Body, length: r.ContentLength}
	r.Body = t.body
}

// start marks the response started: it closes the connection after the
// response when the body was not read to its end.
func (t *timedWriter) start() {
	if t.started {
		return
	}
	t.started = true
	if t.body != nil && !t.body.complete() {
		t.Header().Set("Connection", "close")
	}
}

// finish runs when the handler returns. When the body was not read to its
// end it ends the connection's read deadline now: net/http's own close of
// the body would otherwise read (discard) up to 256 KiB of what is left
// before it closes the connection, at the client's pace.
func (t *timedWriter) finish() {
	if t.body != nil && !t.body.complete() {
		t.rc.SetReadDeadline(t.clock.Now())
	}
}

func (t *timedWriter) renew() { t.rc.SetWriteDeadline(t.clock.Now().Add(t.timeout)) }

// WriteHeader starts the write timeout and writes the header.
func (t *timedWriter) WriteHeader(code int) {
	t.start()
	t.renew()
	t.ResponseWriter.WriteHeader(code)
}

// Write renews the write timeout and writes.
func (t *timedWriter) Write(b []byte) (int, error) {
	t.start()
	t.renew()
	return t.ResponseWriter.Write(b)
}

// Flush renews the write timeout and flushes (SSE events, heartbeats).
func (t *timedWriter) Flush() {
	t.start()
	t.renew()
	t.rc.Flush()
}

// FlushError is Flush reporting the error (http.ResponseController uses it).
func (t *timedWriter) FlushError() error {
	t.start()
	t.renew()
	return t.rc.Flush()
}

// trackedBody is a request body that knows whether it was read to its
// end: io.EOF, or all of a declared Content-Length.
type trackedBody struct {
	io.ReadCloser
	length int64 // Content-Length; -1 unknown (chunked)
	mu     sync.Mutex
	read   int64
	eof    bool
}

// Read reads and counts.
func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.read += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	b.mu.Unlock()
	return n, err
}

// complete reports whether the body was read to its end.
func (b *trackedBody) complete() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eof || (b.length >= 0 && b.read >= b.length)
}

// Unwrap gives http.ResponseController the underlying writer.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// errorLog is the http.Server's ErrorLog. A failed TLS handshake (one per
// port scanner probe) is logged at most perInterval times per interval;
// the rest are counted and reported in one line when the next interval
// starts. Other server errors pass through.
type errorLog struct {
	log         *slog.Logger
	perInterval int
	interval    time.Duration
	now         func() time.Time

	mu         sync.Mutex
	start      time.Time
	logged     int
	suppressed int
}

func newErrorLog(l *slog.Logger, perInterval int, interval time.Duration, now func() time.Time) *log.Logger {
	return log.New(&errorLog{log: l, perInterval: perInterval, interval: interval, now: now}, "", 0)
}

// Write logs one line of net/http's error log.
func (e *errorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if !strings.Contains(msg, "TLS handshake error") {
		e.log.Warn("http server", "msg", msg)
		return len(p), nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := e.now(); now.Sub(e.start) >= e.interval {
		if e.suppressed > 0 {
			e.log.Warn("TLS handshake errors not logged", "count", e.suppressed, "interval", e.interval)
		}
		e.start, e.logged, e.suppressed = now, 0, 0
	}
	if e.logged >= e.perInterval {
		e.suppressed++
		return len(p), nil
	}
	e.logged++
	e.log.Warn("TLS handshake failed", "msg", msg)
	return len(p), nil
}
