package httpapi

import (
	"crypto/tls"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
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
func RedirectHandler(publicHost, httpsPort string) http.Handler {
	base := "https://" + net.JoinHostPort(publicHost, httpsPort)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.RequestURI()
		if !strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "//") {
			uri = "/" + strings.TrimLeft(uri, "/")
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
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyReadTimeout(limit)))
}

// bodyDone moves the read deadline past the request's work once its body
// is read: net/http cancels a request whose connection hits its read
// deadline.
func (s *Server) bodyDone(w http.ResponseWriter) {
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout + 10*time.Second))
}

// timedWriter sets the connection's (or HTTP/2 stream's) write deadline
// to timeout from the moment a response starts, and renews it at every
// write and flush, so a response must be delivered within timeout and a
// stream must keep moving (its events and heartbeats renew it).
type timedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newTimedWriter(w http.ResponseWriter, timeout time.Duration) *timedWriter {
	return &timedWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (t *timedWriter) renew() { t.rc.SetWriteDeadline(time.Now().Add(t.timeout)) }

// WriteHeader starts the write timeout and writes the header.
func (t *timedWriter) WriteHeader(code int) {
	t.renew()
	t.ResponseWriter.WriteHeader(code)
}

// Write renews the write timeout and writes.
func (t *timedWriter) Write(b []byte) (int, error) {
	t.renew()
	return t.ResponseWriter.Write(b)
}

// Flush renews the write timeout and flushes (SSE events, heartbeats).
func (t *timedWriter) Flush() {
	t.renew()
	t.rc.Flush()
}

// FlushError is Flush reporting the error (http.ResponseController uses it).
func (t *timedWriter) FlushError() error {
	t.renew()
	return t.rc.Flush()
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
