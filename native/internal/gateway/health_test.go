package gateway

import (
	"fmt"
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
	ctx := testContext(t, 10*time.Second)
	if err := g.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if res := fc.callTool(t, "late__read_mail", nil); res.IsError {
		t.Errorf("late after it started: %q", testlib.ToolText(res))
	}
}

// armed reports whether the clock has a timer armed to fire d from now.
func (c *fakeClock) armed(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.armed && t.at.Equal(c.t.Add(d)) {
			return true
		}
	}
	return false
}

// TestFirstSearchWaitsForStartingServers: a search while the only server is still starting
// waits for it (up to StartWait) and finds its tools; when the wait runs out it says which
// servers are still starting, and later searches no longer wait.
func TestFirstSearchWaitsForStartingServers(t *testing.T) {
	servers := map[string]func() *mcp.Server{"alpha": alphaServer}
	search := func(t *testing.T, fc *frontClient) chan searchResult {
		got := make(chan searchResult, 1)
		go func() {
			_, out := fc.search(t, "read a file", 3)
			got <- out
		}()
		return got
	}
	// waiting waits until the search is waiting for the servers, or fails if it answered.
	waiting := func(t *testing.T, clock *fakeClock, got chan searchResult) {
		t.Helper()
		var early *searchResult
		waitFor(t, "the search waiting", func() bool {
			select {
			case out := <-got:
				early = &out
				return true
			default:
				return clock.armed(DefaultStartWait)
			}
		})
		if early != nil {
			t.Fatalf("the search answered while the server was starting: %d tools, note %q", len(early.Tools), early.Note)
		}
	}

	// searching starts a cold gateway on its own clock and a search that waits for alpha.
	searching := func(t *testing.T) (clock *fakeClock, release func(), fc *frontClient, got chan searchResult) {
		clock = &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		g, release := startCold(t, alphaConfig(), Options{TraceGap: time.Hour, now: clock.now, afterFunc: clock.afterFunc}, servers, "alpha")
		fc = connect(t, g)
		got = search(t, fc)
		waiting(t, clock, got)
		return clock, release, fc, got
	}

	t.Run("server starts in time", func(t *testing.T) {
		_, release, _, got := searching(t)
		release()
		if out := <-got; len(out.Tools) == 0 || out.Tools[0].Name != "alpha__read_file" {
			t.Errorf("search after the server started: %v, note %q", names(out), out.Note)
		}
	})
	t.Run("wait runs out", func(t *testing.T) {
		clock, _, fc, got := searching(t)
		clock.advance(DefaultStartWait)
		want := "no server has listed any tool yet; still starting: alpha"
		if out := <-got; len(out.Tools) != 0 || out.Note != want {
			t.Errorf("search when the wait ran out: %v, note %q, want %q", names(out), out.Note, want)
		}
		if _, out := fc.search(t, "read a file", 3); out.Note != want {
			t.Errorf("second search: note %q, want %q", out.Note, want)
		}
	})
}

// TestTimeoutsRestartServer: three calls in a row without a result in time mark the server
// degraded and restart it (a new session: here a new dial of the in-memory server), which
// health shows in restarts and last_restart and the log says; an answered call between two
// timeouts resets the count.
func TestTimeoutsRestartServer(t *testing.T) {
	var mu sync.Mutex
	dials := 0
	var logs []string
	cfg := &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: 500 * time.Millisecond}}}
	inner := inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})
	g := startGateway(t, cfg, Options{
		dial: func(s ServerConfig) mcp.Transport {
			mu.Lock()
			dials++
			mu.Unlock()
			return inner(s)
		},
		Logf: func(format string, a ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, a...))
			mu.Unlock()
		},
	})
	fc := connect(t, g)
	for range degradeAfter - 1 {
		fc.callTool(t, "alpha__hang", nil)
	}
	if st := g.health().Servers[0]; st.State != stateReady || st.Timeouts != degradeAfter-1 || st.Restarts != 0 {
		t.Errorf("after %d timeouts: %+v", degradeAfter-1, st)
	}
	if res := fc.callTool(t, "alpha__read_file", map[string]any{"path": "p"}); res.IsError {
		t.Fatalf("read_file: %q", testlib.ToolText(res))
	}
	if st := g.health().Servers[0]; st.Timeouts != 0 || st.Restarts != 0 {
		t.Errorf("an answer did not reset the count: %+v", st)
	}
	for range degradeAfter {
		fc.callTool(t, "alpha__hang", nil)
	}
	var st status
	waitFor(t, "the server restarted", func() bool {
		st = g.health().Servers[0]
		return st.Restarts == 1 && st.State == stateReady
	})
	want := "degraded: 3 calls in a row had no result within 500ms"
	if st.LastRestart != want || st.Timeouts != 0 {
		t.Errorf("health after the restart: %+v, want last_restart %q", st, want)
	}
	mu.Lock()
	n, logged := dials, strings.Join(logs, "\n")
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d dials, want 2", n)
	}
	if !strings.Contains(logged, "gateway: server alpha: "+want+"; restarting in") {
		t.Errorf("the log does not tell the restart:\n%s", logged)
	}
	if res := fc.callTool(t, "alpha__read_file", map[string]any{"path": "p"}); res.IsError {
		t.Errorf("read_file after the restart: %q", testlib.ToolText(res))
	}
}
