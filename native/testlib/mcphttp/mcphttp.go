// Package mcphttp serves an MCP server over streamable HTTP for tests, as `caskg mcp --http`
// does: for tests outside native (the edge worker's), which cannot import the transport or
// caskg mcp's server. It is apart from testlib so that the packages below the transport may use
// testlib in their tests.
package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

// Serve serves s with the transport's default options on 127.0.0.1 until the test ends, and
// returns the server's base URL (MCP at base+"/mcp").
func Serve(tb testing.TB, s *mcp.Server) string {
	tb.Helper()
	ts := httptest.NewServer(mcptransport.HTTPHandler(func(*http.Request) *mcp.Server { return s }, mcptransport.HTTPOptions{}))
	tb.Cleanup(ts.Close)
	return ts.URL
}

// ServeGraph serves the tools of g as `caskg mcp --http` does (native/internal/mcpserver, with
// version as the server's), on 127.0.0.1 until the test ends, and returns the base URL.
func ServeGraph(tb testing.TB, g *graphs.Graph, version string) string {
	tb.Helper()
	s, err := mcpserver.New(g, mcpserver.Options{Version: version})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return Serve(tb, s.MCP())
}
