// Package adminsock is the local channel through which `vetlens keys`
// reaches the process that holds the data directory's database: an HTTP
// server only the data directory's owner can talk to.
//
// Two transports, one chosen per operating system (Native):
//
//   - KindUnix (Unix): a unix-domain socket DIR/admin.sock, mode 0600; the
//     file's permission is the check.
//   - KindLoopback (Windows): TCP on 127.0.0.1, a port chosen at start,
//     and a random token; DIR/admin.token holds the address and the token
//     and only the user can read it (native_windows.go). Every request
//     must carry the token (Authorization: Bearer), compared in constant
//     time; any local user can reach the port, only the owner can read
//     the token.
//
// Both transports are plain Go and run on every system, so the tests
// exercise the Windows one on Linux; only the choice (Native) and the
// creation of the owner-only token file are per system.
package adminsock

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Kind is a transport.
type Kind int

const (
	// KindUnix is a unix-domain socket DIR/SocketFile, mode 0600.
	KindUnix Kind = iota
	// KindLoopback is TCP on 127.0.0.1 with the token in DIR/TokenFile.
	KindLoopback
)

// Native is this system's transport: KindUnix, KindLoopback on Windows.
const Native = native

// The files in the data directory, one per transport; each exists while
// its server runs.
const (
	SocketFile = "admin.sock"
	TokenFile  = "admin.token"
)

// String names the file a transport keeps in the data directory.
func (k Kind) String() string {
	if k == KindLoopback {
		return TokenFile
	}
	return SocketFile
}

// Endpoint is what DIR/admin.token holds (JSON): where the server listens
// and the token it requires.
type Endpoint struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// Listener is the admin server's listener. Close also removes its file
// from the data directory.
type Listener struct {
	net.Listener
	path  string // the socket or token file
	token string // "" for KindUnix

	once     sync.Once
	closeErr error
}

// Listen starts the admin listener of kind in dir. A file left by a
// crashed server is replaced: the caller holds the database lock, which
// proves no live server owns it.
func Listen(kind Kind, dir string) (*Listener, error) {
	path := filepath.Join(dir, kind.String())
	os.Remove(path)
	if kind == KindUnix {
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("admin socket: %w", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			ln.Close()
			return nil, fmt.Errorf("admin socket: %w", err)
		}
		return &Listener{Listener: ln, path: path}, nil
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("admin token: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	l := &Listener{Listener: ln, path: path, token: hex.EncodeToString(raw[:])}
	if err := writePrivate(path, Endpoint{Addr: ln.Addr().String(), Token: l.token}); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin token: %w", err)
	}
	return l, nil
}

// writePrivate writes e to path through a temporary file only the user
// can read (createPrivate), renamed into place so a reader never sees a
// partial file.
func writePrivate(path string, e Endpoint) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	f, err := createPrivate(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Close stops listening and removes the listener's file (once).
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.closeErr = l.Listener.Close()
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) && l.closeErr == nil {
			l.closeErr = err
		}
	})
	return l.closeErr
}

// Handler is h behind the listener's check: with a token, a request
// without "Authorization: Bearer TOKEN" is refused (401, a JSON error
// body); on a unix socket h itself.
func (l *Listener) Handler(h http.Handler) http.Handler {
	if l.token == "" {
		return h
	}
	want := []byte("Bearer " + l.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"admin token missing or wrong"}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Transport is the client side: an http.RoundTripper that reaches the
// admin server of kind in dir, whatever host a request names, and sends
// the token where there is one. For KindLoopback it reads DIR/admin.token
// now: an error means no server has written one.
func Transport(kind Kind, dir string) (*AuthTransport, error) {
	path := filepath.Join(dir, kind.String())
	network, addr, token := "unix", path, ""
	if kind == KindLoopback {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("admin token: %w", err)
		}
		var e Endpoint
		if err := json.Unmarshal(b, &e); err != nil || e.Token == "" || !isLoopback(e.Addr) {
			return nil, fmt.Errorf("admin token: %s is not a loopback address and token", path)
		}
		network, addr, token = "tcp", e.Addr, e.Token
	}
	return &AuthTransport{token: token, Base: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}, nil
}

// isLoopback: the token file must not send the token off this computer.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return err == nil && ip != nil && ip.IsLoopback()
}

// AuthTransport adds the token to each request.
type AuthTransport struct {
	token string
	Base  *http.Transport
}

// RoundTrip implements http.RoundTripper.
func (t *AuthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.Base.RoundTrip(r)
}

// CloseIdleConnections closes the kept-alive connections.
func (t *AuthTransport) CloseIdleConnections() { t.Base.CloseIdleConnections() }
