package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/mcpnode"
	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/internal/mcptransport"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
)

// The edge worker's /mcp (wasm/worker, wasm/mcpcore) under workerd, held to caskg mcp with the
// official MCP TypeScript SDK client and the conformance suite. The worker's own end-to-end
// tests are in wasm/worker; these are here, where native/internal/mcpnode may be imported.

// startMCPNative serves the sample's tools as `caskg mcp --http` does, on a loopback port.
func startMCPNative(tb *testing.T) string {
	tb.Helper()
	g := testlib.Decode(tb, testlib.Sample(tb))
	srv, err := mcpserver.New(g, mcpserver.Options{Artifact: "caskg.skg", Version: engine.Version}) // as the worker names it
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	m := srv.MCP()
	ts := httptest.NewServer(mcptransport.HTTPHandler(func(*http.Request) *mcp.Server { return m }, mcptransport.HTTPOptions{}))
	tb.Cleanup(ts.Close)
	return ts.URL
}

// The official TypeScript SDK client lists the worker's tools and calls them under workerd,
// and reads the same tools and the same texts as from caskg mcp.
func TestWorkerdMCPClient(t *testing.T) {
	env := mcpnode.Find(t)
	worker := testlib.StartWorkerd(t, "config") + "/mcp"
	native := startMCPNative(t) + "/mcp"
	tasks := sampleQueries(t)
	steps := []mcpnode.Step{{Op: "listTools"}}
	for _, task := range tasks[:10] {
		steps = append(steps,
			mcpnode.Step{Op: "callTool", Name: "retrieve_skills", Arguments: map[string]any{"query": task, "k": 6}},
			mcpnode.Step{Op: "callTool", Name: "retrieve_skills", Arguments: map[string]any{"query": task, "render": false}})
	}
	steps = append(steps,
		mcpnode.Step{Op: "callTool", Name: "get_skill", Arguments: map[string]any{"name": "Heat_Object_In_Microwave"}},
		mcpnode.Step{Op: "callTool", Name: "get_skill", Arguments: map[string]any{"name": "haet-object-in-microwave"}},
		mcpnode.Step{Op: "callTool", Name: "skill_neighbors", Arguments: map[string]any{"name": "pick-up-object", "limit": 2}},
		mcpnode.Step{Op: "callTool", Name: "graph_info"},
		mcpnode.Step{Op: "callTool", Name: "get_skill", Arguments: map[string]any{"name": "pick-up-object", "path": "/etc/passwd"}},
		mcpnode.Step{Op: "callTool", Name: "retrieve_skills", Arguments: map[string]any{"query": "egg", "k": 0}},
		mcpnode.Step{Op: "callTool", Name: "report_skill_use", Arguments: map[string]any{"query": "egg", "used": []string{"pick-up-object"}}},
		mcpnode.Step{Op: "ping"})
	got := env.Run(t, mcpnode.Target{URL: worker}, 90*time.Second, steps...)
	want := env.Run(t, mcpnode.Target{URL: native}, 90*time.Second, steps...)
	if len(got) != len(steps)+1 || len(want) != len(steps)+1 {
		t.Fatalf("%d and %d answers to %d steps and the connection", len(got), len(want), len(steps))
	}
	if !got[0].OK {
		t.Fatalf("connecting to the worker: %s", got[0].Error)
	}

	// The same server (but for its session), the same tools to the letter: names, titles,
	// descriptions, input and output schemas, annotations.
	var wc, nc struct {
		ServerInfo, Capabilities json.RawMessage
		Instructions             string
	}
	if json.Unmarshal(got[0].Result, &wc) != nil || json.Unmarshal(want[0].Result, &nc) != nil || !sameJSON(wc.ServerInfo, nc.ServerInfo) ||
		!sameJSON(wc.Capabilities, nc.Capabilities) || wc.Instructions != nc.Instructions {
		t.Errorf("initialize: the worker says %s\ncaskg mcp %s", got[0].Result, want[0].Result)
	}
	if !sameJSON(got[1].Result, want[1].Result) {
		t.Errorf("tools/list: the worker lists %s\ncaskg mcp %s", got[1].Result, want[1].Result)
	}
	wt, err := got[1].Tools()
	if err != nil {
		t.Fatal(err)
	}
	nt, err := want[1].Tools()
	if err != nil {
		t.Fatal(err)
	}
	if len(wt) != 5 || len(wt) != len(nt) {
		t.Fatalf("the worker lists %d tools, caskg mcp %d", len(wt), len(nt))
	}
	for i := range wt {
		if wt[i].Name != nt[i].Name || wt[i].Description != nt[i].Description || !sameJSON(wt[i].InputSchema, nt[i].InputSchema) {
			t.Errorf("tool %d: worker %s %s\ncaskg mcp %s %s", i, wt[i].Name, wt[i].InputSchema, nt[i].Name, nt[i].InputSchema)
		}
	}
	for i, s := range steps {
		if s.Op != "callTool" {
			continue
		}
		w, err := got[i+1].Call()
		if err != nil {
			t.Errorf("%s %v on the worker: %v", s.Name, s.Arguments, err)
			continue
		}
		n, err := want[i+1].Call()
		if err != nil {
			t.Errorf("%s %v on caskg mcp: %v", s.Name, s.Arguments, err)
			continue
		}
		if len(w.Content) != 1 || len(n.Content) != 1 || w.IsError != n.IsError {
			t.Errorf("%s %v: the worker says %+v\ncaskg mcp %+v", s.Name, s.Arguments, w, n)
			continue
		}
		// Feedback is off on both; caskg mcp adds how to turn it on.
		if wt, nt := w.Content[0].Text, n.Content[0].Text; wt != nt && !(s.Name == "report_skill_use" && wt == mcpcore.FeedbackOff &&
			strings.HasPrefix(nt, mcpcore.FeedbackOff)) {
			t.Errorf("%s %v: the worker says\n%s\ncaskg mcp\n%s", s.Name, s.Arguments, wt, nt)
		}
		if !sameJSON(w.StructuredContent, n.StructuredContent) {
			t.Errorf("%s %v: structured content\nworker    %s\ncaskg mcp %s", s.Name, s.Arguments, w.StructuredContent, n.StructuredContent)
		}
	}
	if last := got[len(got)-1]; !last.OK {
		t.Errorf("ping: %s", last.Error)
	}
}

// The conformance suite's server scenarios that a stateless tool server answers pass against
// the worker's /mcp.
func TestWorkerdMCPConformance(t *testing.T) {
	env := mcpnode.Find(t)
	url := testlib.StartWorkerd(t, "config") + "/mcp"
	for _, scenario := range []string{"server-initialize", "ping", "tools-list"} {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			checks, output := env.Conformance(t, ctx, url, scenario)
			for _, c := range checks {
				if c.Status != "SUCCESS" {
					t.Errorf("%s: %s %s: %s", scenario, c.ID, c.Status, c.ErrorMessage)
				}
			}
			if t.Failed() {
				t.Logf("conformance output:\n%s", output)
			}
		})
	}
}

func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
