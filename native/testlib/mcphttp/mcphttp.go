// Package mcphttp serves an MCP server over streamable HTTP for tests, as `caskg mcp --http`
// does: for tests outside native (the edge worker's), which cannot import the transport. It is
// apart from testlib so that the packages below the transport may use testlib in their tests.
package mcphttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
