package httpapi

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// fakeAddr is a remote address.
type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

// addrConn is one end of a net.Pipe with a chosen remote address.
type addrConn struct {
	net.Conn
	remote fakeAddr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// chanListener accepts the connections sent on conns.
type chanListener struct{ conns chan net.Conn }

func (l chanListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return fakeAddr("127.0.0.1:0") }

// TestLimitListener: connections beyond the per-address or the total
// limit are closed at once (the client's end reads EOF) and Accept goes
// on to the next; a closed connection gives its place back, once.
func TestLimitListener(t *testing.T) {
	conns := make(chan net.Conn, 16)
	ln := LimitListener(chanListener{conns}, ConnLimits{Total: 3, PerAddr: 2}, nil)
	// offer queues a connection from addr and returns the client's end.
	offer := func(addr string) net.Conn {
		server, client := net.Pipe()
		conns <- addrConn{server, fakeAddr(addr + ":1234")}
		return client
	}
	// refused: the client's end reads EOF, the listener closed it.
	refused := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: not closed by the listener: %v", what, err)
		}
	}
	type result struct {
		c   net.Conn
		err error
	}
	accept := func() chan result {
		ch := make(chan result, 1)
		go func() {
			c, err := ln.Accept()
			ch <- result{c, err}
		}()
		return ch
	}
	want := func(ch chan result, addr string) net.Conn {
		t.Helper()
		select {
		case r := <-ch:
			if r.err != nil || r.c.RemoteAddr().String() != addr+":1234" {
				t.Fatalf("accepted %v %v, want %s", r.c, r.err, addr)
			}
			return r.c
		case <-time.After(5 * time.Second):
			t.Fatalf("nothing accepted, want %s", addr)
		}
		return nil
	}
	offer("10.0.0.1")
	offer("10.0.0.1")
	a1 := want(accept(), "10.0.0.1")
	want(accept(), "10.0.0.1")
	thirdA := offer("10.0.0.1")
	offer("10.0.0.2")
	want(accept(), "10.0.0.2") // the third from A was over its share of 2
	refused(thirdA, "a third connection from one address")

	ch := accept()
	refused(offer("10.0.0.3"), "a connection over the total of 3")
	a1.Close()
	a1.Close() // a second close gives nothing back
	offer("10.0.0.3")
	want(ch, "10.0.0.3")
	ch = accept()
	refused(offer("10.0.0.4"), "a connection over the total again")
	close(conns)
	if r := <-ch; !errors.Is(r.err, net.ErrClosed) {
		t.Fatalf("accept after the end: %v", r.err)
	}
}
