package mcptransport

import (
	"net"
	"testing"
)

var loopbackTests = []struct {
	in   string
	want bool
}{
	{"localhost", true},
	{"localhost:8080", true},
	{"LocalHost:1", true},
	{"127.0.0.1", true},
	{"127.0.0.1:3000", true},
	{"127.9.9.9:3000", true},
	{"[::1]:3000", true},
	{"[::1]", true},
	{"::1", true},
	{"", false},
	{"evil.example.com", false},
	{"evil.example.com:3000", false},
	{"localhost.evil.example", false},
	{"127.0.0.1.nip.io", false},
	{"localhost.", false},
	{"sub.localhost", false},
	{"0.0.0.0:80", false},
	{"192.168.1.2:80", false},
	{"[::ffff:127.0.0.1]:80", true},
	{"[::1:80", false},
	{"[fe80::1%lo]:80", false},
	{"[::1%lo]:80", false},
	{"::1%0.evil.example", false},
}

func TestIsLoopback(t *testing.T) {
	for _, tt := range loopbackTests {
		if got := isLoopback(tt.in); got != tt.want {
			t.Errorf("isLoopback(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, true},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 80}, false},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 80}, false},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}, false},
	} {
		if got := IsLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("IsLoopbackAddr(%v) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

// FuzzIsLoopback: no Host panics the check, and a name under a domain an attacker registers is
// never taken for loopback, whatever the host before it looked like.
func FuzzIsLoopback(f *testing.F) {
	for _, tt := range loopbackTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, host string) {
		isLoopback(host)
		evil := host + ".evil.example"
		if h, port, err := net.SplitHostPort(host); err == nil {
			evil = net.JoinHostPort(h+".evil.example", port)
		}
		if isLoopback(evil) {
			t.Errorf("isLoopback(%q) = true for a name under evil.example", evil)
		}
	})
}
