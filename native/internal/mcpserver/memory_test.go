package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
)

// workerCall calls a tool of the edge worker's MCP handler (mcpcore) and returns its text and
// structured content.
func workerCall(t *testing.T, h *mcpcore.Handler, tool string, args map[string]any) (string, []byte) {
	t.Helper()
	a, _ := json.Marshal(args)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + string(a) + `}}`
	resp := h.Serve(&service.Request{Method: "POST", Path: "/mcp", Body: strings.NewReader(body), ContentLength: int64(len(body))})
	var msg struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp.Body, &msg); err != nil || len(msg.Result.Content) != 1 || msg.Result.IsError {
		t.Fatalf("worker %s %s: %s", tool, a, resp.Body)
	}
	return msg.Result.Content[0].Text, msg.Result.StructuredContent
}

// TestMemoryParity: both MCP servers, caskg mcp and the edge worker's handler, carry the memory
// of past tasks' evidence in retrieve_skills (the recalled field, the recalled line of either
// text) and its size in graph_info, the same to the byte; with no_memory neither shows any.
// A surface that drops the field fails here, as the SDK fails caskg mcp when the declared
// output schema lacks it.
func TestMemoryParity(t *testing.T) {
	g := testlib.Decode(t, testlib.SampleMemory(t))
	cs := connect(t, g, mcpserver.Options{Artifact: "caskg.skg", Version: engine.Version})
	h := mcpcore.New(engine.New(g), mcpcore.Options{Artifact: "caskg.skg", Version: engine.Version})
	q := testlib.MemoryQuery
	tests := []struct {
		name     string
		args     map[string]any
		recalled bool
	}{
		{"render", map[string]any{"query": q}, true},
		{"short list", map[string]any{"query": q, "render": false}, true},
		{"render, no_memory", map[string]any{"query": q, "no_memory": true}, false},
		{"short list, no_memory", map[string]any{"query": q, "render": false, "no_memory": true}, false},
	}
	for _, tt := range tests {
		res := call(t, cs, mcpcore.Retrieve, tt.args)
		var out mcpcore.RetrieveOutput
		structured(t, res, &out)
		native, _ := json.Marshal(res.StructuredContent)
		wText, wJSON := workerCall(t, h, mcpcore.Retrieve, tt.args)
		if !sameJSON(native, wJSON) {
			t.Errorf("%s: structured content\ncaskg mcp %s\nworker    %s", tt.name, native, wJSON)
		}
		if nText := text(t, res); nText != wText {
			t.Errorf("%s: text\ncaskg mcp %s\nworker    %s", tt.name, nText, wText)
		}
		n := 0
		for _, r := range out.Results {
			if r.Recalled != nil {
				n++
				if r.Recalled.Runs == 0 || len(r.Recalled.Terms) == 0 {
					t.Errorf("%s: %s recalled %+v: want runs and terms", tt.name, r.Name, r.Recalled)
				}
				if line := "- " + r.Recalled.Evidence() + "\n"; !strings.Contains(wText, line) {
					t.Errorf("%s: %s's %q not in the text:\n%s", tt.name, r.Name, line, wText)
				}
			}
		}
		if (n > 0) != tt.recalled || strings.Contains(string(wJSON), `"recalled"`) != tt.recalled ||
			strings.Contains(wText, "recalled: ") != tt.recalled {
			t.Errorf("%s: %d results recalled, want some: %v; text:\n%s", tt.name, n, tt.recalled, wText)
		}
	}

	res := call(t, cs, mcpcore.GraphInfo, map[string]any{})
	var info mcpcore.Info
	structured(t, res, &info)
	native, _ := json.Marshal(res.StructuredContent)
	_, wJSON := workerCall(t, h, mcpcore.GraphInfo, map[string]any{})
	if !sameJSON(native, wJSON) {
		t.Errorf("graph_info:\ncaskg mcp %s\nworker    %s", native, wJSON)
	}
	if want := mcpcore.MemoryBytes(g); want == 0 || info.MemoryBytes != want || info.Params["memory"] == nil {
		t.Errorf("graph_info: memory_bytes %d, params.memory %v; want %d bytes and the memory's parameters", info.MemoryBytes, info.Params["memory"], want)
	}
}
