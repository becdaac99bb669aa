package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/testlib"
)

// TestPanicEndsOnlyItsRequest: a handler that panics gives its request an error and a log line;
// the session and the gateway answer the next request.
func TestPanicEndsOnlyItsRequest(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	cfg := &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: 20 * time.Second}}}
	g := startGateway(t, cfg, Options{
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer}),
		Logf: func(format string, a ...any) {
			mu.Lock()
			logs = append(logs, format)
			mu.Unlock()
		},
	})
	s := g.newFrontSession("")
	// A tool of the front's own server that panics stands for any handler with a bug.
	s.srv.AddTool(&mcp.Tool{Name: "boom", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("boom") })
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.register(ss); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "boom", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "gateway: internal error in tools/call") {
		t.Fatalf("the panicking call: error %v, want the gateway's internal error", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: callTool,
		Arguments: map[string]any{"name": "alpha__read_file", "arguments": map[string]any{"path": "p"}}})
	if err != nil || res.IsError {
		t.Fatalf("the call after the panic: %v %q", err, testlib.ToolText(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(logs, "\n"), "panicked") {
		t.Errorf("no log line tells the panic: %q", logs)
	}
}
