package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"vetlens/internal/lanaddr"
	"vetlens/ui"
)

// TestListenerAnswersWhereShown runs the desktop's start-up path (the
// setting in the data dir, parseGUI, the in-process listener) and the
// Server tab on a real HTTPS listener: every URL the tab shows answers a
// keyed request, with the certificate the tab pins; a machine's LAN
// address does not answer while the tab says "this computer only"; the
// clinic network choice is saved in the data dir for the next start and
// counts connections from other machines.
func TestListenerAnswersWhereShown(t *testing.T) {
	test.NewTempApp(t)
	dir := t.TempDir()
	svc := newBareService(t, dir)
	key, _, err := svc.Accounts.CreateKey(t.Context(), "Clinic LAN", "")
	if err != nil {
		t.Fatal(err)
	}
	probe, err := net.Listen("tcp", ":0") // a port free on every interface
	if err != nil {
		t.Fatal(err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	if err := saveListenSetting(dir, listenSetting{Serve: true, Addr: lanaddr.Local(port)}); err != nil {
		t.Fatal(err)
	}
	c, _, ok := parseGUI([]string{"--data-dir", dir}, io.Discard, nil)
	if !ok || !c.serve || c.addr != lanaddr.Local(port) {
		t.Fatalf("start-up config %+v", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.inFlight = 4
	l := newAPIListener(ctx, svc, c.serveConfig, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := l.start(c.addr); err != nil {
		t.Fatal(err)
	}
	defer l.stop()
	u := ui.New(svc, ui.Options{Listener: l})

	client := func(fingerprint string) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // self-signed: pinned below instead
			VerifyConnection: func(cs tls.ConnectionState) error {
				if got := Fingerprint(tls.Certificate{Certificate: [][]byte{cs.PeerCertificates[0].Raw}}); got != fingerprint {
					return fmt.Errorf("certificate %s, pinned %s", got, fingerprint)
				}
				return nil
			},
		}}}
	}
	get := func(cl *http.Client, url string) error {
		req, _ := http.NewRequest(http.MethodGet, url+"/v3/health", nil)
		req.Header.Set("x-api-key", key)
		resp, err := cl.Do(req)
		if err != nil {
			return err
		}
		// Read to the end so that the client keeps the connection open
		// (a body closed unread may close it, and the LAN count below
		// counts open connections).
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}
	var lanIPs []net.IP
	for _, ip := range lanaddr.InterfaceIPs() {
		if !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && ip.To4() != nil {
			lanIPs = append(lanIPs, ip)
		}
	}

	// This computer only: the loopback URL answers, the LAN address does not.
	fp := l.Status().Fingerprint
	urls := u.ListenerURLs()
	if len(urls) != 1 || urls[0] != fmt.Sprintf("https://127.0.0.1:%d", port) {
		t.Fatalf("this computer only: URLs shown %q", urls)
	}
	cl := client(fp)
	if err := get(cl, urls[0]); err != nil {
		t.Fatalf("shown URL does not answer: %v", err)
	}
	for _, ip := range lanIPs {
		if err := get(cl, "https://"+net.JoinHostPort(ip.String(), fmt.Sprint(port))); err == nil {
			t.Fatalf("LAN address %s answers while the tab says this computer only", ip)
		}
	}

	// The clinic network: every URL shown answers, and the choice is saved.
	if err := u.SetListenScope(ui.ScopeLAN); err != nil {
		t.Fatal(err)
	}
	urls = u.ListenerURLs()
	if len(urls) < len(lanIPs) {
		t.Fatalf("clinic network: URLs shown %q for LAN addresses %v", urls, lanIPs)
	}
	cl = client(l.Status().Fingerprint)
	for _, url := range urls {
		if strings.Contains(url, "127.0.0.1") {
			t.Fatalf("loopback URL %s shown for the clinic network", url)
		}
		if err := get(cl, url); err != nil {
			t.Fatalf("shown URL does not answer: %v", err)
		}
	}
	if len(lanIPs) > 0 {
		if n, last := l.Status().LANClients, l.Status().LastLANActivity; n == 0 || time.Since(last) > time.Minute {
			t.Fatalf("LAN clients %d, last activity %v, after requests to %v", n, last, urls)
		}
	} else {
		t.Log("this machine has no LAN address: only the loopback part ran")
	}
	c, _, _ = parseGUI([]string{"--data-dir", dir}, io.Discard, nil)
	if !c.serve || c.addr != lanaddr.AllInterfaces(port) {
		t.Fatalf("next start: serve %v on %s, want the clinic network", c.serve, c.addr)
	}

	// Off: nothing shown, nothing answers, and the next start stays off.
	if err := u.SetListenScope(ui.ScopeOff); err != nil {
		t.Fatal(err)
	}
	if got := u.ListenerURLs(); len(got) != 0 {
		t.Fatalf("off: URLs shown %q", got)
	}
	cl.CloseIdleConnections()
	for _, url := range urls {
		if err := get(cl, url); err == nil {
			t.Fatalf("%s answers after Off", url)
		}
	}
	if n := l.Status().LANClients; n != 0 {
		t.Fatalf("%d LAN connections open after Off", n)
	}
	c, _, _ = parseGUI([]string{"--data-dir", dir}, io.Discard, nil)
	if c.serve || c.addr != lanaddr.AllInterfaces(port) {
		t.Fatalf("next start after Off: serve %v on %s", c.serve, c.addr)
	}
}
