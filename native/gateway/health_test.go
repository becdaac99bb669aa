package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHealthCountsVisibleTools: alpha lists 7 tools, of which the config denies delete_file
// (its own deny) and write_file (the top-level deny); health counts the 5 an agent can call.
func TestHealthCountsVisibleTools(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	h := g.health()
	if h.Tools != 5 || h.Servers[0].Tools != 5 {
		t.Errorf("health: %d tools, alpha %d; want 5 and 5", h.Tools, h.Servers[0].Tools)
	}
}
