// Package lanaddr turns the address the HTTPS API listener is bound to
// into what a clinic needs to know about it: whether other machines can
// reach it at all, and the URLs at which they can (one per interface
// address of this machine).
package lanaddr

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
)

// DefaultPort is the API's port when none is given.
const DefaultPort = 8443

// Local is the loopback address the API binds to when it serves this
// computer only, on port.
func Local(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// AllInterfaces is the address the API binds to when it serves the
// clinic network, on port. Go listens dual-stack on it, so IPv6 clients
// reach it too; the bound address then reads [::]:port.
func AllInterfaces(port int) string { return net.JoinHostPort("0.0.0.0", strconv.Itoa(port)) }

// Port is addr's port (HOST:PORT).
func Port(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("address %q: port %q is not a number from 0 to 65535", addr, p)
	}
	return n, nil
}

// LoopbackOnly tells whether a listener bound to addr (HOST:PORT) is
// reachable from this computer only: its host is a loopback address or
// "localhost".
func LoopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URLs lists the https URLs at which a listener bound to addr (the
// address the listener reports, HOST:PORT) is reachable, sorted, IPv4
// first:
//   - bound to an unspecified host ([::] or none, which Go binds
//     dual-stack, or 0.0.0.0, which then serves IPv4 only): one URL per
//     address in ifaces, skipping loopback addresses (other machines
//     cannot use them) and IPv6 link-local ones (they need a zone, which
//     differs between machines);
//   - bound to a specific host: that host alone.
func URLs(addr string, ifaces []net.IP) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listener address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{httpsURL(host, port)}, nil
	}
	ipv4Only := host == "0.0.0.0"
	var v4, v6 []string
	seen := map[string]bool{}
	for _, ip := range ifaces {
		if ip == nil || ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() && ip.To4() == nil || ip.IsMulticast() {
			continue
		}
		s := ip.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		if ip.To4() != nil {
			v4 = append(v4, httpsURL(s, port))
		} else if !ipv4Only {
			v6 = append(v6, httpsURL(s, port))
		}
	}
	sort.Strings(v4)
	sort.Strings(v6)
	return append(v4, v6...), nil
}

func httpsURL(host, port string) string {
	return (&url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}).String()
}

// InterfaceIPs returns this machine's interface addresses (none when
// they cannot be read).
func InterfaceIPs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		switch v := a.(type) {
		case *net.IPNet:
			out = append(out, v.IP)
		case *net.IPAddr:
			out = append(out, v.IP)
		}
	}
	return out
}
