package gateway

import (
	"context"
	"flag"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

var updateDocs = flag.Bool("update", false, "rewrite the documentation's gateway-output blocks with the real answer")

// shopServer is the documentation's example server: a shop's tools, a workflow (log in, then
// find and cancel an order) beside two tools it does not need.
func shopServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop"}, nil)
	str := map[string]any{"type": "string"}
	for _, tool := range []struct {
		name, desc string
		props      []string
	}{
		{"login", "Log in to the shop with a user name and password; returns a session token.", []string{"user", "password"}},
		{"list_orders", "List the orders of the logged-in customer.", []string{"token"}},
		{"cancel_order", "Cancel an order by its id.", []string{"token", "order_id"}},
		{"track_parcel", "Track the parcel of a shipped order.", []string{"order_id"}},
		{"weather_forecast", "Weather forecast for a city.", []string{"city"}},
	} {
		props := map[string]any{}
		for _, p := range tool.props {
			props[p] = str
		}
		srv.AddTool(&mcp.Tool{Name: tool.name, Description: tool.desc,
			InputSchema: map[string]any{"type": "object", "properties": props, "required": tool.props}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	return srv
}

// gatewayOutput ties a documentation block to a search: the fenced block on the next line is
// the text of `search_tools {"query": QUERY, "k": K}` over shopServer's catalog, served as shop,
// ranked over the graph built from it with the default options.
var gatewayOutput = regexp.MustCompile("(?m)^<!-- gateway-output: search_tools \"([^\"]+)\" ([0-9]+) -->\n```[a-z]*\n")

// TestDocSearchTools runs every search the documentation shows the answer of (a
// `<!-- gateway-output: search_tools "QUERY" K -->` comment above a fenced block) and holds the
// block to the text the gateway answers. -update rewrites the blocks.
func TestDocSearchTools(t *testing.T) {
	const root = "../../.."
	rec := &recorder{}
	g := startGateway(t, &Config{Servers: []ServerConfig{{Name: "shop", Command: "unused", Timeout: 5 * time.Second}}},
		Options{Learner: rec, dial: inMemory(t, map[string]func() *mcp.Server{"shop": shopServer})})
	waitFor(t, "the shop's tools", func() bool { return len(g.cat.Load().servers) == 1 })
	gr := catalogGraph(t, g.catalog())
	rec.mu.Lock()
	rec.graph, rec.eng = gr, engine.New(gr)
	rec.mu.Unlock()
	fc := connect(t, g)

	blocks := fixture.OutputBlocks(t, "../../..", gatewayOutput, func(args []string) (string, error) {
		k, _ := strconv.Atoi(args[1])
		res, _ := fc.search(t, args[0], k)
		return strings.TrimRight(testlib.ToolText(res), "\n") + "\n", nil
	}, *updateDocs, "./native/internal/gateway -run TestDocSearchTools")
	if blocks == 0 {
		t.Error("no gateway-output block in the documentation: this test would hold nothing")
	}
}
