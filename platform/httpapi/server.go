// Package httpapi serves VetLens's LAN API: the cardiac service under /v3/
// (spec cardiac-v3) and the USG service under /usg/v1/ (spec usg-v1) on
// one listener, with each service's own error shape. Handlers only
// translate HTTP to the use cases in package app and back.
package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"vetlens/api/cardiacv3"
	"vetlens/app"
	"vetlens/internal/clock"
	"vetlens/internal/config"
)

// Body limits, applied with http.MaxBytesReader before anything is read.
// They follow from the spec's limits (cardiacv3's MaxImageBytes and
// MaxBatchImages); docs/security.md lists them.
const (
	// MaxPredictBody bounds /v3/predict and /v3/predict/stream:
	// cardiacv3.MaxCardiacBody, 10 images of 10 MiB in base64 plus 1 MiB for the
	// JSON around them (about 143 MB). The body is read as a stream that
	// stops at the first rule broken (cardiacv3.ReadCardiacRequest).
	MaxPredictBody = cardiacv3.MaxCardiacBody
	// MaxImageBody bounds the one-image endpoints (pop-session, corners,
	// rectify, preprocess): one image of 10 MiB in base64
	// (cardiacv3.MaxImageBase64) plus 64 KiB for the other fields.
	MaxImageBody = cardiacv3.MaxImageBase64 + 64<<10
	// MaxSmallBody bounds /v3/pop-session/start and /usg/v1/predict.
	MaxSmallBody = 64 << 10
)

// Config tunes the server.
type Config struct {
	// MaxInFlightPerKey is the most concurrent requests one API key may
	// have; more get 429 with Retry-After. Default 32.
	MaxInFlightPerKey int
	// RequestTimeout bounds each request's work. Default 300 s.
	RequestTimeout time.Duration
	// HeartbeatInterval is the SSE keep-alive comment period. Default 15 s.
	HeartbeatInterval time.Duration
	// DocsURL is the migration guide named in /eu/predict's Link header.
	DocsURL string
	// Logger receives request errors; nil discards them.
	Logger *slog.Logger

	// Transport timeouts (docs/security.md); zero values take the defaults.

	// ReadHeaderTimeout bounds reading a request's headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// BodyReadBase and MinBodyRate set each route's body read timeout:
	// BodyReadBase plus the route's body limit at MinBodyRate bytes per
	// second (defaults 10 s and 1 MB/s: 10 s for 64 KiB bodies, 24 s for
	// one image, 153 s for a full batch).
	BodyReadBase time.Duration
	MinBodyRate  int64
	// WriteTimeout bounds writing a response once the handler starts it,
	// so a client that does not read frees its handler. A stream's
	// deadline is renewed at each event and heartbeat instead (a live
	// stream can last the whole request timeout). Default 30 s.
	WriteTimeout time.Duration
	// Clock sets the connections' read and write deadlines (the time
	// they are counted from); nil is the wall clock. net/http enforces
	// them on the wall clock: tests inject a fake one to check the
	// deadlines set, not to speed them up.
	Clock clock.Clock
	// IdleTimeout closes keep-alive connections idle this long. Default
	// 2 min.
	IdleTimeout time.Duration
	// HSTSMaxAge is the Strict-Transport-Security max-age sent on every
	// HTTPS response. Default 365 days; negative: no header.
	HSTSMaxAge time.Duration
	// HandshakeLogsPerMinute is how many failed TLS handshakes are logged
	// per minute; the rest are counted and reported in one line. Default 10.
	HandshakeLogsPerMinute int
	// MaxConns is the most connections open at once on a listener wrapped
	// by Listener; more are closed as soon as they are accepted. Default
	// DefaultMaxConns: 4096, or half the open file limit when that is
	// lower, so the store, the models and the logs keep their descriptors.
	MaxConns int
	// MaxConnsPerAddr is the most connections open at once from one
	// remote IP address. Default DefaultMaxConnsPerAddr (256), at most
	// MaxConns.
	MaxConnsPerAddr int
}

// Connection limit defaults (docs/security.md).
const (
	// DefaultMaxConns bounds the open connections where the open file
	// limit allows more than twice as many.
	DefaultMaxConns = 4096
	// DefaultMaxConnsPerAddr bounds the open connections from one remote
	// IP address: a clinic machine needs a few (one per request in flight
	// with HTTP/1.1, up to MaxInFlightPerKey per key, and idle keep-alives).
	DefaultMaxConnsPerAddr = 256
)

// defaultMaxConns is DefaultMaxConns within half of the open file limit.
func defaultMaxConns() int {
	if n := openFileLimit(); n > 0 && n/2 < DefaultMaxConns {
		return max(n/2, 16)
	}
	return DefaultMaxConns
}

func (c *Config) defaults() {
	if c.MaxInFlightPerKey <= 0 {
		c.MaxInFlightPerKey = config.DefaultMaxInFlight
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 300 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 15 * time.Second
	}
	if c.DocsURL == "" {
		c.DocsURL = "https://docs.vetlens.local/v3/migration"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.BodyReadBase <= 0 {
		c.BodyReadBase = 10 * time.Second
	}
	if c.MinBodyRate <= 0 {
		c.MinBodyRate = 1_000_000
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	c.Clock = clock.Or(c.Clock)
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 2 * time.Minute
	}
	if c.HSTSMaxAge == 0 {
		c.HSTSMaxAge = 365 * 24 * time.Hour
	}
	if c.HandshakeLogsPerMinute <= 0 {
		c.HandshakeLogsPerMinute = 10
	}
	if c.MaxConns <= 0 {
		c.MaxConns = defaultMaxConns()
	}
	if c.MaxConnsPerAddr <= 0 {
		c.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	c.MaxConnsPerAddr = min(c.MaxConnsPerAddr, c.MaxConns)
}

// Server is the HTTP API over one app.Service.
type Server struct {
	svc *app.Service
	cfg Config
	mux *http.ServeMux

	mu       sync.Mutex
	inFlight map[string]int // key prefix -> requests in flight
}

// New builds the API handler.
func New(svc *app.Service, cfg Config) *Server {
	cfg.defaults()
	s := &Server{svc: svc, cfg: cfg, mux: http.NewServeMux(), inFlight: map[string]int{}}
	s.routes()
	return s
}

// ServeHTTP implements http.Handler: HSTS on HTTPS responses, the write
// timeout on every response and the connection closed after a response
// to a body not read to its end (timedWriter), then the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS != nil && s.cfg.HSTSMaxAge > 0 {
		w.Header().Set("Strict-Transport-Security", "max-age="+strconv.FormatInt(int64(s.cfg.HSTSMaxAge/time.Second), 10))
	}
	tw := newTimedWriter(w, s.cfg.WriteTimeout, s.cfg.Clock)
	tw.trackBody(r)
	s.mux.ServeHTTP(tw, r)
	tw.finish()
}

func (s *Server) routes() {
	v3 := func(pattern string, limit int64, h keyedHandler) {
		s.mux.Handle(pattern, s.v3(limit, h))
	}
	v3("GET /v3/health", 0, s.health)
	// The prediction bodies are read by their handlers as a stream.
	s.mux.Handle("POST /v3/predict", s.v3Stream(MaxPredictBody, s.predict))
	s.mux.Handle("POST /v3/predict/stream", s.v3Stream(MaxPredictBody, s.predictStream))
	v3("POST /v3/pop-session/start", MaxSmallBody, s.sessionStart)
	v3("POST /v3/pop-session", MaxImageBody, s.sessionFrame)
	v3("POST /v3/corners", MaxImageBody, s.corners)
	v3("POST /v3/rectify", MaxImageBody, s.rectify)
	v3("POST /v3/preprocess", MaxImageBody, s.preprocess)
	v3("/v3/", 0, s.v3NotFound)
	s.mux.HandleFunc("GET /v3/openapi.json", s.openAPI)
	s.mux.HandleFunc("/eu/predict", s.euPredict)
	s.mux.HandleFunc("/eu/", s.euPredict)

	s.mux.Handle("GET /usg/v1/health", s.cors(http.HandlerFunc(s.usgHealth)))
	s.mux.Handle("GET /usg/v1/version", s.cors(http.HandlerFunc(s.usgVersion)))
	s.mux.Handle("POST /usg/v1/predict", s.cors(s.guard(usgErrors{}, MaxSmallBody, true, s.usgPredict)))
	s.mux.Handle("OPTIONS /usg/v1/", s.cors(http.HandlerFunc(preflight)))
	s.mux.Handle("/usg/v1/", s.cors(http.HandlerFunc(s.usgNotFound)))
}

// ---- shared helpers -------------------------------------------------------

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal server error: encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// acquire takes one in-flight slot for the key; false when it has none.
func (s *Server) acquire(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[prefix] >= s.cfg.MaxInFlightPerKey {
		return false
	}
	s.inFlight[prefix]++
	return true
}

func (s *Server) release(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[prefix]--; s.inFlight[prefix] <= 0 {
		delete(s.inFlight, prefix)
	}
}

// bodyTimedOut reports whether a body read failed at its read deadline
// (bodyReadTimeout): the client sent it too slowly, or not at all.
func bodyTimedOut(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// ---- serving --------------------------------------------------------------

// HTTPServer returns the *http.Server for the API with its timeouts:
// headers within ReadHeaderTimeout; each route's body within its own
// read timeout (bodyReadTimeout), set by the route; a backstop read and
// write deadline of RequestTimeout plus 10 s (plus WriteTimeout for
// writes), which the routes narrow (responses) or renew (streams);
// idle connections closed after IdleTimeout; and failed TLS handshakes
// logged at most HandshakeLogsPerMinute a minute.
func (s *Server) HTTPServer(tlsConf *tls.Config) *http.Server {
	return &http.Server{
		Handler:           s,
		TLSConfig:         tlsConf,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.RequestTimeout + 10*time.Second,
		WriteTimeout:      s.cfg.RequestTimeout + 10*time.Second + s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          newErrorLog(s.cfg.Logger, s.cfg.HandshakeLogsPerMinute, time.Minute, time.Now),
	}
}

// Listener wraps ln with the connection limits (MaxConns in all,
// MaxConnsPerAddr from one remote address; LimitListener): what serves
// the API listens through it.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return LimitListener(ln, ConnLimits{Total: s.cfg.MaxConns, PerAddr: s.cfg.MaxConnsPerAddr}, s.cfg.Logger)
}

// Serve serves srv on ln (TLS when srv.TLSConfig is set) until ctx ends,
// then shuts down gracefully: it stops accepting, lets in-flight requests
// finish for up to grace, then closes what remains.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
