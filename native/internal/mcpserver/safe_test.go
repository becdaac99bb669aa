package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/wasm/mcpcore"
)

func TestSafeRecoversPanics(t *testing.T) {
	h := safe(func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, *mcpcore.Info, error) {
		var m map[string]int
		m["boom"]++ // panics: assignment to a nil map
		return nil, nil, nil
	})
	res, out, err := h(context.Background(), nil, struct{}{})
	if res != nil || out != nil || err == nil || !strings.HasPrefix(err.Error(), "internal error: ") || strings.Contains(err.Error(), "map") {
		t.Errorf("safe(panicking handler) = %v, %v, %v; want an internal error without Go's words", res, out, err)
	}
}
