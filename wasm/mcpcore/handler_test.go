package mcpcore

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

func handler(t testing.TB) *Handler {
	t.Helper()
	g := testlib.Decode(t, testlib.Sample(t))
	return New(engine.New(g), Options{Version: "test", Artifact: "caskg.skg"})
}

func post(h *Handler, body string) *service.Response {
	return h.Serve(&service.Request{Method: "POST", Path: "/mcp", Body: strings.NewReader(body), ContentLength: int64(len(body))})
}

func call(name, args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

func TestServe(t *testing.T) {
	h := handler(t)
	tests := []struct {
		name, method, body string
		status             int
		want               []string // in the body, in order
	}{
		{"GET has no stream", "GET", "", 405, []string{`"error":"mcpcore: GET /mcp: this server is stateless`}},
		{"preflight", "OPTIONS", "", 204, nil},
		{"not JSON", "POST", `{"jsonrpc":`, 400, []string{`"id":null`, `"code":-32700`}},
		{"not UTF-8", "POST", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", 400, []string{`"id":null`, `"code":-32700`, `body not valid UTF-8 at byte 55`}},
		{"a batch", "POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, []string{`"code":-32600`, `batches are not taken`}},
		{"no method", "POST", `{"jsonrpc":"2.0","id":1}`, 400, []string{`"id":1`, `"code":-32600`, `no \"method\"`}},
		{"wrong jsonrpc", "POST", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 400, []string{`"code":-32700`, `is not \"2.0\"`}},
		{"notification", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, nil},
		{"a response", "POST", `{"jsonrpc":"2.0","id":3,"result":{}}`, 202, nil},
		{"ping", "POST", `{"jsonrpc":"2.0","id":"p-1","method":"ping"}`, 200, []string{`{"jsonrpc":"2.0","id":"p-1","result":{}}`}},
		{"initialize, a known version", "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			200, []string{`"capabilities":{"tools":{}}`, `"instructions":"caskg retrieves skills`, `"protocolVersion":"2025-03-26"`, `"serverInfo":{"name":"caskg","title":"caskg skill graph","version":"test"}`}},
		{"initialize, an unknown version", "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}`,
			200, []string{`"protocolVersion":"` + protocolVersions[0] + `"`}},
		{"tools/list", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200,
			[]string{`"name":"get_skill"`, `"name":"graph_info"`, `"name":"report_skill_use"`, `"name":"retrieve_skills"`, `"outputSchema"`, `"name":"skill_neighbors"`}},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`, 200, []string{`"code":-32601`, `not served here`}},
		{"unknown tool", "POST", call("retrieve", `{}`), 200, []string{`"code":-32602`, `unknown tool \"retrieve\"`}},
		{"retrieve", "POST", call(Retrieve, `{"query":"heat some egg","k":3}`), 200,
			[]string{`"text":"3 skills for this task`, `"structuredContent":{"query":"heat some egg","results":[{"rank":1,`}},
		{"retrieve, a short list", "POST", call(Retrieve, `{"query":"heat some egg","k":2,"render":false}`), 200, []string{`"text":"1. `, `(seed #1)`}},
		{"retrieve, min_score", "POST", call(Retrieve, `{"query":"purple elephant bicycle sandwich","min_score":0.4,"render":false}`), 200,
			[]string{`"results":[],"match":0.1`, `"note":"no skill matches this task well`}},
		{"retrieve, min_score over", "POST", call(Retrieve, `{"query":"egg","min_score":2}`), 200, []string{`field \"min_score\": 2 is outside [0, 1]`, `"isError":true`}},
		{"retrieve, k 0", "POST", call(Retrieve, `{"query":"egg","k":0}`), 200, []string{`field \"k\": 0 is outside [1, 100]`, `"isError":true`}},
		{"retrieve, no query", "POST", call(Retrieve, `{}`), 200, []string{`field \"query\": required`, `"isError":true`}},
		{"retrieve, no arguments", "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"retrieve_skills"}}`, 200, []string{`field \"query\": required`}},
		{"retrieve, an unknown argument", "POST", call(Retrieve, `{"query":"egg","top_k":3}`), 200,
			[]string{`unknown argument \"top_k\"; the arguments are allow, deny, k, min_score, namespaces, no_graph, no_memory, query, render, skill_budget, total_budget`}},
		{"arguments not an object", "POST", call(GetSkill, `"x"`), 200, []string{`arguments: must be an object, not a string`}},
		{"get_skill by a loose name", "POST", call(GetSkill, `{"name":"Heat_Object_In_Microwave"}`), 200, []string{`"text":"# heat-object-in-microwave`, `"complete":false`}},
		{"get_skill, a swap of two letters", "POST", call(GetSkill, `{"name":"haet-object-in-microwave"}`), 200, []string{`the closest names are: heat-object-in-microwave`}},
		{"skill_neighbors", "POST", call(Neighbors, `{"name":"pick-up-object","limit":1}`), 200, []string{`pick-up-object: `, `more (raise limit)`, `"out_total":`}},
		{"skill_neighbors, limit too large", "POST", call(Neighbors, `{"name":"pick-up-object","limit":5000}`), 200, []string{`field \"limit\": 5000 is outside [1, 1000]`}},
		{"graph_info", "POST", call(GraphInfo, `{}`), 200, []string{`"artifact":"caskg.skg"`, `"learning":{"cold":`, `"version":"2.0"`}},
		{"graph_info takes nothing", "POST", call(GraphInfo, `{"x":1}`), 200, []string{`unknown argument \"x\"; the tool takes none`}},
		{"feedback off", "POST", call(Report, `{"query":"egg","used":["pick-up-object"]}`), 200, []string{FeedbackOff, `"isError":true`}},
		{"body too large", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", service.MaxBodyBytes) + `"}}`, 413, []string{`"code":-32600`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *service.Response
			if tt.method == "POST" {
				resp = post(h, tt.body)
			} else {
				resp = h.Serve(&service.Request{Method: tt.method, Path: "/mcp"})
			}
			if resp.Status != tt.status {
				t.Errorf("status %d, want %d; body %s", resp.Status, tt.status, resp.Body)
			}
			body := string(resp.Body)
			if len(resp.Body) > 0 && !json.Valid(resp.Body) {
				t.Errorf("the body is not JSON: %s", body)
			}
			at := 0
			for _, w := range tt.want {
				i := strings.Index(body[at:], w)
				if i < 0 {
					t.Errorf("body lacks %s (after byte %d): %.600s", w, at, body)
					break
				}
				at += i + len(w)
			}
		})
	}
}

// FuzzServe: no message panics the handler or gets an answer that is not JSON-RPC: a POST is
// answered 202 with no body, or with one JSON-RPC response whose id is the request's.
func FuzzServe(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"x"}`, `[]`, `{`, `"x"`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"retrieve_skills","arguments":{"query":"egg","k":2}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"name":"x"},"name":"get_skill"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":3}}`, `{"id":1e400,"method":"ping"}`,
		"{\"id\":0,\"method\":\"0\",\"\":{\"\x92\":\"\"}}"} {
		f.Add(s)
	}
	h := handler(f)
	f.Fuzz(func(t *testing.T, body string) {
		resp := post(h, body)
		if resp.Status == 202 {
			if len(resp.Body) != 0 {
				t.Fatalf("202 with a body: %s", resp.Body)
			}
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct{ Code int }
		}
		if err := json.Unmarshal(resp.Body, &msg); err != nil || msg.JSONRPC != "2.0" || (msg.Result == nil) == (msg.Error == nil) {
			t.Fatalf("%q: answer %d %s", body, resp.Status, resp.Body)
		}
		if !utf8.ValidString(body) { // a parse error, whose id is null
			if msg.Error == nil || msg.Error.Code != -32700 || string(msg.ID) != "null" {
				t.Fatalf("%q (not UTF-8): answer %d %s, want a parse error", body, resp.Status, resp.Body)
			}
			return
		}
		m, err := parseMessage([]byte(body))
		if err == nil && m.id != "" && string(msg.ID) != m.id {
			t.Fatalf("%q: id %s, want %s", body, msg.ID, m.id)
		}
	})
}

// FuzzCheckArgs: any arguments get nil or a short message, never a panic, for every tool.
func FuzzCheckArgs(f *testing.F) {
	for _, s := range []string{`{}`, `null`, ``, `{"query":"egg","k":2.5}`, `{"used":["a",3]}`, `[1]`, `{"name":"` + strings.Repeat("é", 600) + `"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, tool := range Tools {
			if err := CheckArgs(tool.Name, []byte(args)); err != nil && len(err.Error()) > 400 {
				t.Fatalf("%s %q: a long message: %s", tool.Name, args, err)
			}
		}
	})
}

// The tools' schemas are JSON, and CheckArgs reads every property of each.
func TestSchemas(t *testing.T) {
	for _, tool := range Tools {
		for _, s := range []string{tool.InputSchema, tool.OutputSchema} {
			if !json.Valid([]byte(s)) {
				t.Errorf("%s: a schema is not JSON: %s", tool.Name, s)
			}
		}
		var in struct{ Properties map[string]any }
		json.Unmarshal([]byte(tool.InputSchema), &in)
		if got := len(specs[tool.Name].names); got != len(in.Properties) {
			t.Errorf("%s: %d properties read, the schema has %d", tool.Name, got, len(in.Properties))
		}
	}
	if len(Tools) != 5 {
		t.Errorf("%d tools", len(Tools))
	}
	for i := 1; i < len(Tools); i++ {
		if Tools[i-1].Name >= Tools[i].Name {
			t.Errorf("Tools are not sorted by name: %s before %s", Tools[i-1].Name, Tools[i].Name)
		}
	}
}

// TestNeighborsDigits checks that skill_neighbors writes an edge's weight and association,
// stored as float32, with their own digits (0.8), not the float64 expansion (0.800000011920929).
func TestNeighborsDigits(t *testing.T) {
	h := handler(t)
	body := string(post(h, call(Neighbors, `{"name":"pick-up-object","limit":50}`)).Body)
	nums := regexp.MustCompile(`"(?:weight|assoc)":([0-9.e-]+)`).FindAllStringSubmatch(body, -1)
	if len(nums) < 4 {
		t.Fatalf("%d weights in %s", len(nums), body)
	}
	for _, m := range nums {
		f, _ := strconv.ParseFloat(m[1], 64)
		if want := strconv.FormatFloat(f, 'g', -1, 32); m[1] != want {
			t.Errorf("%s, want %s", m[0], want)
		}
	}
}
