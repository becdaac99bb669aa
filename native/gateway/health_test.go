package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/testlib"
)

// startCold starts a gateway without waiting for its servers, whose in-memory servers named
// in held do not answer the dial until release is called (at the latest by the test's end).
func startCold(t *testing.T, cfg *Config, opt Options, servers map[string]func() *mcp.Server, held ...string) (g *Gateway, release func()) {
	t.Helper()
	if opt.BackoffMin == 0 {
		opt.BackoffMin, opt.BackoffMax = 20*time.Millisecond, 200*time.Millisecond
	}
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	dial := inMemory(t, servers)
	opt.dial = func(s ServerConfig) mcp.Transport {
		if slices.Contains(held, s.Name) {
			<-gate
		}
		return dial(s)
	}
	g, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	t.Cleanup(release) // before Close: a held dial would keep Close waiting
	return g, release
}

// TestHealthCountsVisibleTools: alpha lists 7 tools, of which the config denies delete_file
// (its own deny) and write_file (the top-level deny); health counts the 5 an agent can call.
func TestHealthCountsVisibleTools(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	h := g.health()
	if h.Tools != 5 || h.Servers[0].Tools != 5 {
		t.Errorf("health: %d tools, alpha %d; want 5 and 5", h.Tools, h.Servers[0].Tools)
	}
}

// TestCallOfDownServerNamesIt: a tool of a server that has not listed its tools (still
// connecting, or failed to start) is not in the catalog, and the call says which server is
// down and why instead of "no tool"; names the config denies stay unknown.
func TestCallOfDownServerNamesIt(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{
		{Name: "alpha", Command: "unused", Timeout: time.Second},
		{Name: "late", Command: "unused", Timeout: time.Second, Deny: []string{"secret"}},
		{Name: "missing", Command: "/nonexistent/caskg-test-server", Timeout: time.Second},
	}, Deny: []string{"missing__hidden*"}}
	servers := map[string]func() *mcp.Server{"alpha": alphaServer, "late": betaServer}
	g, release := startCold(t, cfg, Options{}, servers, "late")
	waitFor(t, "missing failed", func() bool { return g.health().Servers[2].Error != "" })
	waitFor(t, "alpha ready", func() bool { return g.health().Servers[0].State == stateReady })
	fc := connect(t, g)
	tests := []struct {
		name, tool, want string
	}{
		{"connecting", "late__read_mail", "gateway: server late is not available (connecting); tool read_mail was not called"},
		{"failed", "missing__x", "gateway: server missing is not available ("},
		{"failed reason", "missing__x", "failed: "},
		{"denied by the server's deny", "late__secret", `gateway: no tool "late__secret"`},
		{"denied by the top-level deny", "missing__hidden_x", `gateway: no tool "missing__hidden_x"`},
		{"not a server", "nobody__x", `gateway: no tool "nobody__x"`},
		{"ready server, no such tool", "alpha__nope", `gateway: no tool "alpha__nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fc.callTool(t, tt.tool, nil)
			if got := testlib.ToolText(res); !res.IsError || !strings.Contains(got, tt.want) {
				t.Errorf("call %s: %v %q, want %q", tt.tool, res.IsError, got, tt.want)
			}
		})
	}
	release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if res := fc.callTool(t, "late__read_mail", nil); res.IsError {
		t.Errorf("late after it started: %q", testlib.ToolText(res))
	}
}
