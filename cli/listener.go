package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"vetlens/app"
	"vetlens/ui"
)

// startTimeout bounds how long Start waits for the listeners to open.
const startTimeout = 10 * time.Second

// apiListener runs the HTTPS API in-process for the desktop window and
// lets the Server tab switch it on and off (ui.Listener).
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
}

func newAPIListener(ctx context.Context, svc *app.Service, cfg serveConfig, stdout io.Writer, log *slog.Logger) *apiListener {
	return &apiListener{ctx: ctx, svc: svc, cfg: cfg, stdout: stdout, log: log}
}

// Start serves the API on addr; it returns once the listeners are open or
// with the error that kept them from opening (for example the address in
// use). A running listener is stopped first.
func (l *apiListener) Start(addr string) error {
	if err := l.Stop(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(l.ctx)
	cfg := l.cfg
	cfg.addr = addr
	ready := make(chan ui.ListenerStatus, 1)
	cfg.ready = func(a, fp string) { ready <- ui.ListenerStatus{Running: true, Addr: a, Fingerprint: fp} }
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
		return err
	case <-time.After(startTimeout):
		cancel()
		<-stopped
		return fmt.Errorf("listener did not open within %s", startTimeout)
	}
}

// Stop stops serving (in-flight requests get the server's shutdown grace)
// and waits until the listeners are closed.
func (l *apiListener) Stop() error {
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
	return nil
}

// Status reports the listener's state.
func (l *apiListener) Status() ui.ListenerStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status
}
