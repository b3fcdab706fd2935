package lanaddr

import (
	"net"
	"reflect"
	"testing"
)

func TestURLs(t *testing.T) {
	ifaces := []net.IP{
		net.ParseIP("127.0.0.1"), net.ParseIP("192.168.1.20"), net.ParseIP("::1"),
		net.ParseIP("fe80::1"), net.ParseIP("2001:db8::5"), net.ParseIP("10.0.0.7"), net.ParseIP("192.168.1.20"),
	}
	for _, c := range []struct {
		name, addr string
		want       []string
		err        bool
	}{
		{name: "dual-stack wildcard", addr: "[::]:8443", want: []string{"https://10.0.0.7:8443", "https://192.168.1.20:8443", "https://[2001:db8::5]:8443"}},
		{name: "no host", addr: ":9000", want: []string{"https://10.0.0.7:9000", "https://192.168.1.20:9000", "https://[2001:db8::5]:9000"}},
		{name: "IPv4 wildcard", addr: "0.0.0.0:8443", want: []string{"https://10.0.0.7:8443", "https://192.168.1.20:8443"}},
		{name: "loopback", addr: "127.0.0.1:8443", want: []string{"https://127.0.0.1:8443"}},
		{name: "specific address", addr: "192.168.1.20:8443", want: []string{"https://192.168.1.20:8443"}},
		{name: "IPv6 address", addr: "[2001:db8::5]:8443", want: []string{"https://[2001:db8::5]:8443"}},
		{name: "not an address", addr: "8443", err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := URLs(c.addr, ifaces)
			if (err != nil) != c.err {
				t.Fatalf("err %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("URLs(%q) = %q, want %q", c.addr, got, c.want)
			}
		})
	}
	if got, _ := URLs("[::]:8443", []net.IP{net.ParseIP("127.0.0.1")}); len(got) != 0 {
		t.Fatalf("loopback-only machine: %q", got)
	}
}

func TestLoopbackOnlyAndPort(t *testing.T) {
	for _, c := range []struct {
		addr     string
		loopback bool
		port     int
		err      bool
	}{
		{"127.0.0.1:8443", true, 8443, false},
		{"[::1]:9443", true, 9443, false},
		{"localhost:1", true, 1, false},
		{"0.0.0.0:8443", false, 8443, false},
		{"[::]:8443", false, 8443, false},
		{"192.168.1.2:80", false, 80, false},
		{"host:port", false, 0, true},
		{"nonsense", false, 0, true},
		{"1.2.3.4:70000", false, 0, true},
	} {
		if got := LoopbackOnly(c.addr); got != c.loopback {
			t.Errorf("LoopbackOnly(%q) = %v", c.addr, got)
		}
		p, err := Port(c.addr)
		if (err != nil) != c.err || p != c.port {
			t.Errorf("Port(%q) = %d, %v", c.addr, p, err)
		}
	}
	if Local(8443) != "127.0.0.1:8443" || AllInterfaces(9) != "0.0.0.0:9" {
		t.Fatal(Local(8443), AllInterfaces(9))
	}
}
