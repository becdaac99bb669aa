package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRateLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type step struct {
		client string
		at     time.Duration
		ok     bool
	}
	tests := []struct {
		name  string
		rate  int
		steps []step
	}{
		{"burst then refill", 2, []step{{"a", 0, true}, {"a", 0, true}, {"a", time.Second, false}, {"a", 30 * time.Second, true}, {"a", 31 * time.Second, false}}},
		{"clients apart", 1, []step{{"a", 0, true}, {"b", 0, true}, {"", 0, true}, {"a", 0, false}, {"", 0, false}}},
		{"no limit", -1, []step{{"a", 0, true}, {"a", 0, true}, {"a", 0, true}}},
		{"a minute refills all", 3, []step{{"a", 0, true}, {"a", 0, true}, {"a", 0, true}, {"a", 0, false}, {"a", time.Hour, true}, {"a", time.Hour, true}, {"a", time.Hour, true}, {"a", time.Hour, false}}},
	}
	for _, tt := range tests {
		r := rateLimiter{perMinute: tt.rate}
		drops := int64(0)
		for i, s := range tt.steps {
			ok, _, _ := r.allow(s.client, t0.Add(s.at))
			if ok != s.ok {
				t.Errorf("%s: step %d (%s at %v): %v, want %v", tt.name, i, s.client, s.at, ok, s.ok)
			}
			if !ok {
				drops++
			}
		}
		if r.droppedTotal() != drops {
			t.Errorf("%s: dropped %d, want %d", tt.name, r.droppedTotal(), drops)
		}
	}
}

// TestTraceRate: a session over its client's rate has its traces dropped and counted in
// health; once the rate allows again, traces are recorded.
func TestTraceRate(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec, TraceRate: 2, now: clock.now, afterFunc: clock.afterFunc,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	task := func() {
		fc.search(t, "read a file", 3)
		fc.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
	}
	for range 4 {
		task()
	}
	fc.search(t, "end the last trace", 3)
	if n, d := len(rec.got()), g.health().TracesDropped; n != 2 || d != 2 {
		t.Fatalf("recorded %d, dropped %d; want 2 and 2", n, d)
	}
	clock.add(time.Minute)
	task()
	fc.search(t, "end the last trace", 3)
	if n := len(rec.got()); n != 3 {
		t.Errorf("after a minute: recorded %d, want 3", n)
	}
}

// blockServer has a tool that waits until its channel closes, telling when it started.
func blockServer(started chan<- struct{}, release <-chan struct{}) func() *mcp.Server {
	return func() *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "block"}, nil)
		addTool(srv, "wait", "Wait until released.", func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return text("released"), nil
		})
		addTool(srv, "now", "Answer at once.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return text("now"), nil })
		return srv
	}
}

// TestMaxSessions: a session beyond MaxSessions ends the session idle longest (whose trace is
// recorded); when every session has a call in flight, the new one is refused.
func TestMaxSessions(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	started, release := make(chan struct{}, 4), make(chan struct{})
	rec := &recorder{}
	cfg := &Config{Servers: []ServerConfig{{Name: "block", Command: "unused", Timeout: 20 * time.Second}}}
	g := startGateway(t, cfg, Options{Learner: rec, MaxSessions: 2, now: clock.now, afterFunc: clock.afterFunc,
		dial: inMemory(t, map[string]func() *mcp.Server{"block": blockServer(started, release)})})
	first := connect(t, g)
	clock.add(time.Second)
	second := connect(t, g)
	second.callTool(t, "block__now", nil) // a trace in flight, recorded when it is ended
	clock.add(time.Second)
	first.callTool(t, "block__now", nil) // first is now the more recent
	clock.add(time.Second)
	third := connect(t, g)
	if res, err := second.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: searchTool, Arguments: map[string]any{"query": "x"}}); err == nil && !res.IsError {
		t.Errorf("the session idle longest still answers")
	}
	if h := g.health(); h.Sessions != 2 {
		t.Errorf("sessions %d, want 2", h.Sessions)
	}
	if got := rec.got(); len(got) != 1 || got[0].Tools[0] != "block__now" {
		t.Errorf("the ended session's trace: %+v", got)
	}

	// Both open sessions busy: a third is refused.
	done := make(chan struct{}, 2)
	for _, fc := range []*frontClient{first, third} {
		go func() {
			fc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "block__wait"}})
			done <- struct{}{}
		}()
	}
	<-started
	<-started
	st, _ := mcp.NewInMemoryTransports()
	if _, err := g.Connect(context.Background(), st); err == nil || !strings.Contains(err.Error(), "--max-sessions") {
		t.Errorf("a session beyond the limit with all busy: %v", err)
	}
	close(release)
	<-done
	<-done
	if h := g.health(); h.Sessions != 2 {
		t.Errorf("sessions %d, want 2", h.Sessions)
	}
}

// TestTraceRatePerClient: --trace-rate is a budget per client: a client over its rate has its
// traces dropped while another client's, and the trusted sessions', are still recorded.
func TestTraceRatePerClient(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec, TraceRate: 1, Tokens: testTokens(t), now: clock.now,
		afterFunc: clock.afterFunc, dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	front := serveFront(t, g)
	ctx := testContext(t, 20*time.Second)
	task := func(cs *mcp.ClientSession, query string) {
		t.Helper()
		for _, p := range []*mcp.CallToolParams{
			{Name: searchTool, Arguments: map[string]any{"query": query}},
			{Name: callTool, Arguments: map[string]any{"name": "alpha__read_file", "arguments": map[string]any{"path": "a"}}},
			{Name: searchTool, Arguments: map[string]any{"query": "next"}}, // ends the trace
		} {
			if _, err := cs.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	sessions := map[string]*mcp.ClientSession{}
	for name, tok := range map[string]string{"alice": aliceToken, "bob": bobToken} {
		cs, err := httpSession(ctx, front.URL, tok)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[name] = cs
	}
	trusted := connect(t, g)
	task(sessions["alice"], "alice one")
	task(sessions["alice"], "alice two") // over alice's rate of 1 a minute
	task(sessions["bob"], "bob one")
	trusted.search(t, "trusted one", 3)
	trusted.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
	trusted.search(t, "next", 3)
	var got []string
	for _, tr := range rec.got() {
		got = append(got, tr.Source+" "+tr.Task)
	}
	want := []string{"client:alice alice one", "client:bob bob one", " trusted one"}
	if !slices.Equal(got, want) || g.health().TracesDropped != 1 {
		t.Errorf("recorded %q, dropped %d; want %q and 1", got, g.health().TracesDropped, want)
	}
}
