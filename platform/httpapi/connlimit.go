package httpapi

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// ConnLimits bound the open connections of a listener, so that holding
// connections open (slow headers, stalled bodies, idle keep-alives)
// cannot use up the process's file descriptors.
type ConnLimits struct {
	// Total is the most connections open at once; 0: no bound.
	Total int
	// PerAddr is the most connections open at once from one remote IP
	// address; 0: no bound.
	PerAddr int
}

// limitListener applies ConnLimits at Accept.
type limitListener struct {
	net.Listener
	lim ConnLimits
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	total   int
	perAddr map[string]int
	// refused counts connections closed since the last log line, which
	// is written at most once a minute.
	refused   int
	lastLog   time.Time
	lastCause string
}

// LimitListener wraps ln so that a connection that would exceed lim (its
// remote address's share or the total) is closed as soon as it is
// accepted, before any byte of it is read; Accept goes on with the next
// one. A connection counts until it is closed. Refusals are logged to log
// (nil: not logged) at most once a minute, with their count.
func LimitListener(ln net.Listener, lim ConnLimits, log *slog.Logger) net.Listener {
	return &limitListener{Listener: ln, lim: lim, log: log, now: time.Now, perAddr: map[string]int{}}
}

// Accept returns the next connection within the limits.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteIP(c)
		if cause := l.admit(addr); cause != "" {
			c.Close()
			l.refuse(cause)
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.release(addr) }}, nil
	}
}

// remoteIP is the connection's remote IP address (the whole remote
// address when it has no port).
func remoteIP(c net.Conn) string {
	a := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return a
}

// admit counts a connection from addr, or says which limit it exceeds.
func (l *limitListener) admit(addr string) (cause string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lim.Total > 0 && l.total >= l.lim.Total:
		return "total"
	case l.lim.PerAddr > 0 && l.perAddr[addr] >= l.lim.PerAddr:
		return "per address"
	}
	l.total++
	l.perAddr[addr]++
	return ""
}

// release uncounts a closed connection from addr.
func (l *limitListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.perAddr[addr]--; l.perAddr[addr] <= 0 {
		delete(l.perAddr, addr)
	}
}

// refuse counts a refused connection and logs at most once a minute.
func (l *limitListener) refuse(cause string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused++
	l.lastCause = cause
	if now := l.now(); l.log != nil && now.Sub(l.lastLog) >= time.Minute {
		l.log.Warn("connections refused over the connection limit", "count", l.refused, "limit", l.lastCause,
			"total", l.lim.Total, "per_address", l.lim.PerAddr)
		l.refused, l.lastLog = 0, now
	}
}

// limitedConn releases its count once, on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and gives back its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
