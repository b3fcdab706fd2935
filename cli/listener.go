package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"vetlens/app"
	"vetlens/ui"
)

// startTimeout bounds how long Start waits for the listeners to open.
const startTimeout = 10 * time.Second

// apiListener runs the HTTPS API in-process for the desktop window and
// lets the Server tab switch it on and off (ui.Listener). What the Server
// tab chooses is saved in the data directory (listener.json) and used at
// the next start.
type apiListener struct {
	ctx    context.Context // the process's context: the listener ends with it
	svc    *app.Service
	cfg    serveConfig
	stdout io.Writer
	log    *slog.Logger

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan error // receives serveAPI's result
	status  ui.ListenerStatus
	stopped chan struct{} // closed when the running serveAPI returned
	addr    string        // the address last asked for

	clients lanClients
}

func newAPIListener(ctx context.Context, svc *app.Service, cfg serveConfig, stdout io.Writer, log *slog.Logger) *apiListener {
	return &apiListener{ctx: ctx, svc: svc, cfg: cfg, stdout: stdout, log: log, addr: cfg.addr}
}

// Start serves the API on addr (the Server tab's choice) and saves the
// choice in the data directory. It returns once the listeners are open or
// with the error that kept them from opening (for example the address in
// use); a running listener is stopped first.
func (l *apiListener) Start(addr string) error {
	if err := l.start(addr); err != nil {
		return err
	}
	if err := saveListenSetting(l.cfg.dataDir, listenSetting{Serve: true, Addr: addr}); err != nil {
		return fmt.Errorf("serving, but the setting was not saved for the next start: %w", err)
	}
	return nil
}

// Stop stops serving (the Server tab's choice) and saves the choice in
// the data directory.
func (l *apiListener) Stop() error {
	if err := l.stop(); err != nil {
		return err
	}
	l.mu.Lock()
	addr := l.addr
	l.mu.Unlock()
	if err := saveListenSetting(l.cfg.dataDir, listenSetting{Serve: false, Addr: addr}); err != nil {
		return fmt.Errorf("stopped, but the setting was not saved for the next start: %w", err)
	}
	return nil
}

// start serves the API on addr without saving a setting.
func (l *apiListener) start(addr string) error {
	if err := l.stop(); err != nil {
		return err
	}
	l.mu.Lock()
	l.addr = addr
	l.mu.Unlock()
	ctx, cancel := context.WithCancel(l.ctx)
	cfg := l.cfg
	cfg.addr = addr
	cfg.connState = l.clients.track
	ready := make(chan ui.ListenerStatus, 1)
	cfg.ready = func(a string, cert tls.Certificate) {
		ready <- ui.ListenerStatus{Running: true, Addr: a, Fingerprint: Fingerprint(cert), PublicKeyPin: PublicKeyPin(cert)}
	}
	result := make(chan error, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		err := serveAPI(ctx, l.svc, cfg, l.stdout, l.log)
		result <- err
		l.mu.Lock()
		if l.stopped == stopped { // still the current run: record why it ended
			l.status.Running = false
			if err != nil && !errors.Is(err, context.Canceled) {
				l.status.Err = err
				l.log.Error("HTTPS API stopped", "err", err)
			}
		}
		l.mu.Unlock()
	}()
	select {
	case st := <-ready:
		l.mu.Lock()
		l.cancel, l.stopped, l.status = cancel, stopped, st
		l.mu.Unlock()
		return nil
	case err := <-result:
		cancel()
		if err == nil {
			err = errors.New("listener stopped at once")
		}
		return l.failed(err)
	case <-time.After(startTimeout):
		cancel()
		<-stopped
		return l.failed(fmt.Errorf("listener did not open within %s", startTimeout))
	}
}

// failed records why a start failed (the Server tab shows it) and
// returns it.
func (l *apiListener) failed(err error) error {
	l.mu.Lock()
	l.status = ui.ListenerStatus{Err: err}
	l.mu.Unlock()
	return err
}

// stop stops serving (in-flight requests get the server's shutdown grace)
// and waits until the listeners are closed, without saving a setting.
func (l *apiListener) stop() error {
	l.mu.Lock()
	cancel, stopped := l.cancel, l.stopped
	l.cancel = nil
	l.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-stopped
	l.mu.Lock()
	l.status.Running = false
	l.mu.Unlock()
	l.clients.reset() // the server closed its connections
	return nil
}

// Status reports the listener's state, with the clients on other
// machines.
func (l *apiListener) Status() ui.ListenerStatus {
	l.mu.Lock()
	st := l.status
	st.Requested = l.addr
	l.mu.Unlock()
	st.LANClients, st.LastLANActivity = l.clients.count()
	return st
}

// lanClients counts the API's connections from other machines (not
// loopback), for the question before quitting.
type lanClients struct {
	mu   sync.Mutex
	open map[net.Conn]struct{}
	last time.Time
}

// track is the HTTP server's ConnState hook.
func (c *lanClients) track(conn net.Conn, state http.ConnState) {
	if tcp, ok := conn.RemoteAddr().(*net.TCPAddr); !ok || tcp.IP.IsLoopback() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[net.Conn]struct{}{}
	}
	switch state {
	case http.StateNew:
		c.open[conn] = struct{}{}
		c.last = time.Now()
	case http.StateActive:
		c.last = time.Now()
	case http.StateClosed, http.StateHijacked:
		delete(c.open, conn)
	}
}

// reset forgets the open connections.
func (c *lanClients) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.open)
}

// count is the number of open connections from other machines and when
// one was last active.
func (c *lanClients) count() (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open), c.last
}
