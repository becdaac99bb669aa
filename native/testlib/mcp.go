package testlib

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP servers under test (caskg mcp, the gateway, the lab's catalog server) as an agent
// sees them through the official SDK's client.

// InMemory connects a client of the SDK to s over in-memory transports, within ctx, and
// returns the client's session. The session and the server's side of it close when the test
// ends.
func InMemory(tb testing.TB, ctx context.Context, s *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); ss.Close(); ss.Wait() })
	return cs
}

// ToolText is the text a tool's result carries: its text contents, joined.
func ToolText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Tools is cs's tools/list (its first page), within ctx; tb fails when the call does.
func Tools(tb testing.TB, ctx context.Context, cs *mcp.ClientSession) []*mcp.Tool {
	tb.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return res.Tools
}

// ToolNames are the names of tools, in their order.
func ToolNames(tools []*mcp.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return names
}
