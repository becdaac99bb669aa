package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/mcpnode"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

// The gateway's end-to-end tests: `caskg gateway` (in-process on HTTP, this test binary
// re-entered on stdio) in front of the reference servers from npm and the test catalog server
// (native/lab/cmd/catalog-server, built once per test binary), driven by the official
// TypeScript SDK client and the MCP conformance suite.

// nestfulTools is a real catalog the TypeScript client test serves when the data is there.
const nestfulTools = "../../../../shared/data/eval/nestful/tools.json"

// e2eDeadline bounds every wait of these tests.
const e2eDeadline = 60 * time.Second

// smallCatalog is a tools/list result of a shop's tools: a workflow (login, then find and
// cancel an order) for the traces to teach.
const smallCatalog = `{"tools": [
 {"name": "login", "description": "Log in to the shop with a user name and password; returns a session token.",
  "inputSchema": {"type": "object", "properties": {"user": {"type": "string"}, "password": {"type": "string"}}, "required": ["user", "password"]}},
 {"name": "list_orders", "description": "List the orders of the logged-in customer.",
  "inputSchema": {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}},
 {"name": "cancel_order", "description": "Cancel an order by its id.",
  "inputSchema": {"type": "object", "properties": {"token": {"type": "string"}, "order_id": {"type": "string"}}, "required": ["token", "order_id"]},
  "outputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}, "cancelled": {"type": "boolean"}}, "required": ["order_id", "cancelled"]}},
 {"name": "track_parcel", "description": "Track the parcel of a shipped order.",
  "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
 {"name": "weather_forecast", "description": "Weather forecast for a city.",
  "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
]}`

var catalogServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the catalog server the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if catalogServer.dir != "" {
		os.RemoveAll(catalogServer.dir)
	}
	os.Exit(code)
}

// buildCatalogServer builds native/lab/cmd/catalog-server once for the test binary.
func buildCatalogServer(t *testing.T) string {
	t.Helper()
	catalogServer.once.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if catalogServer.dir, catalogServer.err = os.MkdirTemp("", "caskg-catalog-server-"); catalogServer.err != nil {
			return
		}
		catalogServer.path = filepath.Join(catalogServer.dir, "catalog-server")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, goCmd, "build", "-o", catalogServer.path, "../../lab/cmd/catalog-server").CombinedOutput()
		if err != nil {
			catalogServer.err = fmt.Errorf("go build catalog-server: %v\n%s", err, out)
		}
	})
	if catalogServer.err != nil {
		t.Fatal(catalogServer.err)
	}
	return catalogServer.path
}

// server is one entry of a test's mcpServers file.
type server map[string]any

// catalogEntry is the catalog server serving tools as a stdio server whose shell writes its
// PID to pidFile before it becomes the server (exec keeps the PID), so a test can kill it.
func catalogEntry(t *testing.T, tools, pidFile string) server {
	bin := buildCatalogServer(t)
	return server{"command": "/bin/sh", "args": []string{"-c", `echo $$ > "$0"; exec "$1" --tools "$2"`, pidFile, bin, tools}}
}

// writeConfig writes an mcpServers file with servers and top-level extras (allow, deny).
func writeConfig(t *testing.T, servers map[string]server, extra map[string]any) string {
	t.Helper()
	doc := map[string]any{"mcpServers": servers}
	for k, v := range extra {
		doc[k] = v
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gatewayHealth is what the tests read of GET /v1/health.
type gatewayHealth struct {
	Servers []struct {
		Name, State, Error string
		Tools              int
	}
	Tools          int
	TracesRecorded int        `json:"traces_recorded"`
	TracesLearned  int        `json:"traces_learned"`
	Edges          int        `json:"edges"`
	EdgesFromUse   int        `json:"edges_from_use"`
	LastUpdate     *time.Time `json:"last_update"`
	Building       bool
	LastError      string `json:"last_error"`
}

func (h gatewayHealth) state(name string) (state, errText string) {
	for _, s := range h.Servers {
		if s.Name == name {
			return s.State, s.Error
		}
	}
	return "absent", ""
}

func (h gatewayHealth) String() string {
	b, _ := json.Marshal(h)
	return string(b)
}

// gatewayFront is a gateway served on HTTP in the test's process.
type gatewayFront struct {
	base, url, stateDir string
	stop                func() result
}

// startGatewayHTTP runs `caskg gateway --config CFG --state-dir DIR --http 127.0.0.1:0 ARGS`
// in-process.
func startGatewayHTTP(t *testing.T, cfg string, args ...string) *gatewayFront {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	base, stop := startListening(t, "gateway", append([]string{"--config", cfg, "--state-dir", dir, "--http", "127.0.0.1:0"}, args...)...)
	g := &gatewayFront{base: base, url: base + mcptransport.MCPPath, stateDir: dir}
	var once sync.Once
	var r result
	g.stop = func() result {
		once.Do(func() { r = stop() })
		return r
	}
	t.Cleanup(func() { g.stop() })
	return g
}

func (g *gatewayFront) health(t *testing.T) gatewayHealth {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(g.base + mcptransport.HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var h gatewayHealth
	if err := json.Unmarshal(body, &h); err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %d %s (%v)", resp.StatusCode, body, err)
	}
	return h
}

// waitHealth polls health until ok holds, failing t after e2eDeadline.
func (g *gatewayFront) waitHealth(t *testing.T, what string, ok func(gatewayHealth) bool) gatewayHealth {
	t.Helper()
	deadline := time.Now().Add(e2eDeadline)
	for {
		h := g.health(t)
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway: no %s within %v; health %s", what, e2eDeadline, h)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ready reports whether every named server is ready.
func ready(names ...string) func(gatewayHealth) bool {
	return func(h gatewayHealth) bool {
		for _, n := range names {
			if st, _ := h.state(n); st != "ready" {
				return false
			}
		}
		return true
	}
}

// found is what the tests read of search_tools' structured content.
type found struct {
	Ranking string
	Tools   []struct {
		Name        string
		Score       float64
		Description string
		InputSchema map[string]any `json:"inputSchema"`
		Server      string
	}
}

func (f found) names() []string {
	var out []string
	for _, t := range f.Tools {
		out = append(out, t.Name)
	}
	return out
}

// search calls search_tools through c and decodes its structured content.
func search(t *testing.T, c *mcpnode.Client, query string, k int) found {
	t.Helper()
	res, err := c.Do(mcpnode.Step{Op: "callTool", Name: "search_tools", Arguments: map[string]any{"query": query, "k": k}}).Call()
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("search_tools %q: %v %+v", query, err, res)
	}
	var f found
	if err := json.Unmarshal(res.StructuredContent, &f); err != nil {
		t.Fatalf("search_tools %q: structured content %s: %v", query, res.StructuredContent, err)
	}
	return f
}

// callTool calls call_tool through c.
func callTool(t *testing.T, c *mcpnode.Client, name string, args map[string]any) mcpnode.CallResult {
	t.Helper()
	res, err := c.Do(mcpnode.Step{Op: "callTool", Name: "call_tool", Arguments: map[string]any{"name": name, "arguments": args}}).Call()
	if err != nil {
		t.Fatalf("call_tool %s: %v", name, err)
	}
	return res
}

func text(r mcpnode.CallResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// listNames lists the front's tools through c.
func listNames(t *testing.T, c *mcpnode.Client) ([]string, []mcpnode.Tool) {
	t.Helper()
	tools, err := c.Do(mcpnode.Step{Op: "listTools"}).Tools()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names, tools
}

// TestGatewayTypeScriptClient puts the gateway in front of server-everything, server-filesystem
// (rooted in a temporary folder) and the catalog server, and drives it with the official
// TypeScript SDK client over streamable HTTP and over stdio: it lists the front's tools,
// searches and calls a tool of each server, and never sees, finds or runs the tools the
// configuration denies (one at the top level, one in a server's own list).
func TestGatewayTypeScriptClient(t *testing.T) {
	node := mcpnode.Find(t)
	root := t.TempDir()
	writeFile(t, root, "notes.txt", "caskg was here\n")
	tools, catalogQuery, catalogWant := nestfulTools, "find flights from Los Angeles to Paris", "cat__SkyScrapperFlightSearch"
	if _, err := os.Stat(nestfulTools); err != nil {
		t.Logf("no NESTFUL data (%v): the catalog server serves a small catalog instead", err)
		tools, catalogQuery, catalogWant = writeFile(t, t.TempDir(), "tools.json", smallCatalog), "cancel my order", "cat__cancel_order"
	}
	everything, fsys := node.Server("server-everything", "stdio"), node.Server("server-filesystem", root)
	cfg := writeConfig(t, map[string]server{
		"everything": {"command": everything[0], "args": everything[1:]},
		"fs":         {"command": fsys[0], "args": fsys[1:], "deny": []string{"write_*"}},
		"cat":        catalogEntry(t, tools, filepath.Join(t.TempDir(), "cat.pid")),
	}, map[string]any{"deny": []string{"everything__get-env"}})
	denied := []string{"everything__get-env", "fs__write_file"}

	// checks runs one client session against a front that has listed every server.
	checks := func(t *testing.T, c *mcpnode.Client) {
		var info struct {
			ServerInfo   struct{ Name string }
			Instructions string
		}
		if err := json.Unmarshal(c.Connect.Result, &info); err != nil || info.ServerInfo.Name != "caskg-gateway" || !strings.Contains(info.Instructions, "search_tools") {
			t.Errorf("connect: %s (%v)", c.Connect.Result, err)
		}
		names, defs := listNames(t, c)
		if !slices.Equal(names, []string{"call_tool", "search_tools"}) && !slices.Equal(names, []string{"search_tools", "call_tool"}) {
			t.Errorf("tools/list before a search: %v, want search_tools and call_tool", names)
		}
		for _, d := range defs {
			if d.Name == "search_tools" && !strings.Contains(d.Description, "the servers cat, everything, fs") {
				t.Errorf("search_tools' description does not name the servers: %s", d.Description)
			}
		}

		for _, q := range []struct{ query, want string }{
			{"echo a message back", "everything__echo"},
			{"read the text of a file", "fs__read_text_file"},
			{catalogQuery, catalogWant},
		} {
			f := search(t, c, q.query, 5)
			if !slices.Contains(f.names(), q.want) {
				t.Errorf("search_tools %q: %v (%s), want %s among them", q.query, f.names(), f.Ranking, q.want)
			}
			for _, tl := range f.Tools {
				if tl.InputSchema["type"] != "object" || tl.Description == "" || tl.Score == 0 && f.Ranking == "graph" {
					t.Errorf("search_tools %q: %s without its schema, description or score: %+v", q.query, tl.Name, tl)
				}
			}
		}
		if res := callTool(t, c, "everything__echo", map[string]any{"message": "hi"}); res.IsError || text(res) != "Echo: hi" {
			t.Errorf("everything__echo: %+v", res)
		}
		if res := callTool(t, c, "fs__read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")}); res.IsError || text(res) != "caskg was here\n" {
			t.Errorf("fs__read_text_file: %+v", res)
		}
		// The filesystem server's own refusal comes back as it gave it.
		if res := callTool(t, c, "fs__read_text_file", map[string]any{"path": "/etc/passwd"}); !res.IsError || !strings.Contains(text(res), "denied") {
			t.Errorf("fs__read_text_file outside its root: %+v", res)
		}
		args := map[string]any{"originSkyId": "LAX", "destinationSkyId": "CDG", "originEntityId": "1", "destinationEntityId": "2", "date": "2024-10-05"}
		if catalogWant == "cat__cancel_order" {
			args = map[string]any{"token": "t", "order_id": "42"}
		}
		if res := callTool(t, c, catalogWant, args); res.IsError || len(res.StructuredContent) == 0 {
			t.Errorf("%s: %+v", catalogWant, res)
		}

		// Denied tools: never listed (even exposed after a search that names them), found or run.
		for _, name := range denied {
			tool := name[strings.Index(name, "__")+2:]
			f := search(t, c, tool+" "+strings.ReplaceAll(tool, "_", " "), 30)
			if slices.Contains(f.names(), name) {
				t.Errorf("search_tools found the denied %s: %v", name, f.names())
			}
			if names, _ := listNames(t, c); slices.Contains(names, name) || len(names) != 2+3 {
				t.Errorf("tools/list after a search (--expose 3): %v; want the 3 found, never %s", names, name)
			}
			res := callTool(t, c, name, map[string]any{"path": filepath.Join(root, "x.txt"), "content": "x"})
			if !res.IsError || !strings.Contains(text(res), "no tool") {
				t.Errorf("call_tool %s (denied): %+v", name, res)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
			t.Error("the denied fs__write_file wrote its file")
		}
		if a := c.Do(mcpnode.Step{Op: "ping"}); !a.OK {
			t.Errorf("ping: %+v", a)
		}
	}

	t.Run("http", func(t *testing.T) {
		g := startGatewayHTTP(t, cfg, "--expose", "3")
		h := g.waitHealth(t, "ready servers", ready("cat", "everything", "fs"))
		c := node.Start(t, mcpnode.Target{URL: g.url}, 30*time.Second)
		checks(t, c)
		c.Close()
		if h.Tools == 0 {
			t.Errorf("health: no tools: %s", h)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		c := node.Start(t, mcpnode.Target{
			Command: os.Args[0],
			Args:    []string{"-test.run=^TestMCPHelperProcess$", "--", "gateway", "--config", cfg, "--state-dir", state, "--expose", "3"},
			Env:     map[string]string{"CASKG_MCP_HELPER": "1"},
		}, 30*time.Second)
		// The front answers at once; the servers come up behind it.
		deadline := time.Now().Add(e2eDeadline)
		for {
			_, defs := listNames(t, c)
			if slices.ContainsFunc(defs, func(d mcpnode.Tool) bool {
				return d.Name == "search_tools" && strings.Contains(d.Description, "the servers cat, everything, fs")
			}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stdio gateway did not list its three servers within %v; stderr:\n%s", e2eDeadline, c.Stderr())
			}
			time.Sleep(100 * time.Millisecond)
		}
		checks(t, c)
		c.Close()
		if !strings.Contains(c.Stderr(), "caskg gateway: stopped") {
			t.Errorf("the stdio gateway did not stop on EOF; stderr:\n%s", c.Stderr())
		}
		if b, err := os.ReadFile(filepath.Join(state, learn.TracesFile)); err != nil || !bytes.Contains(b, []byte(`"everything__echo"`)) {
			t.Errorf("traces of the stdio session: %q (%v)", b, err)
		}
	})
}

// TestGatewayServerRequests drives sampling, elicitation and roots from server-everything and
// server-filesystem through the gateway to the TypeScript SDK client and back, over HTTP and
// stdio: the servers' tools that ask the client answer with what the client said, and
// server-filesystem, started with no folder, serves the client's root.
func TestGatewayServerRequests(t *testing.T) {
	node := mcpnode.Find(t)
	root := t.TempDir()
	writeFile(t, root, "notes.txt", "rooted\n")
	everything, fsys := node.Server("server-everything", "stdio"), node.Server("server-filesystem")
	cfg := writeConfig(t, map[string]server{
		"everything": {"command": everything[0], "args": everything[1:]},
		"fs":         {"command": fsys[0], "args": fsys[1:]},
	}, nil)
	answers := &mcpnode.Answers{Sampling: "the client's model says hi", Model: "agent-model",
		Elicit: map[string]any{"name": "Ada Lovelace"}, Roots: []string{"file://" + root}}

	checks := func(t *testing.T, c *mcpnode.Client) {
		tests := []struct {
			name string
			args map[string]any
			want string
		}{
			{"everything__trigger-sampling-request", map[string]any{"prompt": "caskg"},
				"the client's model says hi (Resource trigger-sampling-request context: caskg)"},
			{"everything__trigger-elicitation-request", nil, "Ada Lovelace"},
			{"everything__get-roots-list", nil, "file://" + root},
			{"fs__read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")}, "rooted"},
		}
		for _, tt := range tests {
			// server-everything lists the tools that ask after it has initialized, and
			// server-filesystem takes its roots after the client's reach it: poll briefly.
			deadline := time.Now().Add(20 * time.Second)
			for {
				res := callTool(t, c, tt.name, tt.args)
				if !res.IsError && strings.Contains(text(res), tt.want) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: %q (isError %v), want %q", tt.name, text(res), res.IsError, tt.want)
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	t.Run("http", func(t *testing.T) {
		g := startGatewayHTTP(t, cfg)
		g.waitHealth(t, "ready servers", ready("everything", "fs"))
		c := node.Start(t, mcpnode.Target{URL: g.url, Answers: answers}, 30*time.Second)
		defer c.Close()
		checks(t, c)
	})
	t.Run("stdio", func(t *testing.T) {
		c := node.Start(t, mcpnode.Target{
			Command: os.Args[0],
			Args:    []string{"-test.run=^TestMCPHelperProcess$", "--", "gateway", "--config", cfg, "--state-dir", filepath.Join(t.TempDir(), "state")},
			Env:     map[string]string{"CASKG_MCP_HELPER": "1"},
			Answers: answers,
		}, 30*time.Second)
		defer c.Close()
		checks(t, c)
	})
}

// conformanceScenarios are the MCP conformance suite's server scenarios (@modelcontextprotocol/
// conformance, pinned in the Makefile), run against `caskg gateway --http` in front of
// conformanceFixture. gatewayCannotHonour are those the gateway cannot pass, with the reason
// (docs/gateway.md lists them too).
var conformanceScenarios = []string{
	"server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
	"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
	"tools-call-mixed-content", "tools-call-with-logging", "tools-call-error", "tools-call-with-progress",
	"tools-call-sampling", "tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
	"server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums", "resources-list",
	"resources-read-text", "resources-read-binary", "resources-templates-read", "resources-subscribe",
	"resources-unsubscribe", "prompts-list", "prompts-get-simple", "prompts-get-with-args",
	"prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
}

var gatewayCannotHonour = map[string]string{
	"tools-call-simple-text":       byName,
	"tools-call-image":             byName,
	"tools-call-audio":             byName,
	"tools-call-embedded-resource": byName,
	"tools-call-mixed-content":     byName,
	"tools-call-with-logging":      byName,
	"tools-call-error":             byName,
	"tools-call-with-progress":     byName,
	"tools-call-sampling":          byName,
	"tools-call-elicitation":       byName,
	"elicitation-sep1034-defaults": byName,
	"elicitation-sep1330-enums":    byName,
	"json-schema-2020-12":          "the scenario looks for its fixture tool in tools/list; the gateway lists search_tools and call_tool (search_tools gives a server's tool with its schema as the server gave it)",
}

// byName is why the gateway cannot honour the scenarios that call a fixture tool by name.
const byName = "the scenario calls a fixture tool by its own name; the gateway lists search_tools and call_tool, and a server's tool is SERVER__TOOL, run through call_tool"

// TestGatewayConformance runs the MCP conformance suite's server scenarios against
// `caskg gateway --http` in front of a server with the suite's fixtures: each must pass but
// those a gateway cannot honour, which are skipped naming the reason.
func TestGatewayConformance(t *testing.T) {
	node := mcpnode.Find(t)
	cfg := writeConfig(t, map[string]server{"conf": {"url": conformanceFixture(t) + "/"}}, nil)
	g := startGatewayHTTP(t, cfg)
	g.waitHealth(t, "ready server", ready("conf"))
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			if why, ok := gatewayCannotHonour[scenario]; ok {
				t.Skip(why)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			checks, output := node.Conformance(t, ctx, g.url, scenario)
			for _, c := range checks {
				if c.Status == "FAILURE" {
					t.Errorf("%s: %s %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", output)
			}
		})
	}
}

// TestGatewayFixtureToolsThroughCallTool runs the conformance fixture's tools the suite calls by
// name (the scenarios a gateway cannot honour) the way an agent reaches them through the
// gateway, call_tool with SERVER__TOOL, from the TypeScript SDK client over HTTP: their content,
// errors, log messages, sampling and elicitation come back as the server gave them.
func TestGatewayFixtureToolsThroughCallTool(t *testing.T) {
	node := mcpnode.Find(t)
	cfg := writeConfig(t, map[string]server{"conf": {"url": conformanceFixture(t) + "/"}}, nil)
	g := startGatewayHTTP(t, cfg)
	g.waitHealth(t, "ready server", ready("conf"))
	c := node.Start(t, mcpnode.Target{URL: g.url, Answers: &mcpnode.Answers{Sampling: "sampled", Elicit: map[string]any{"username": "ada"}}}, 30*time.Second)
	defer c.Close()
	if a := c.Do(mcpnode.Step{Op: "setLoggingLevel", Level: "info"}); !a.OK {
		t.Fatalf("setLoggingLevel: %+v", a)
	}
	tests := []struct {
		tool    string
		want    string // in the result's text, or the image's type
		isError bool
	}{
		{"conf__test_simple_text", "This is a simple text response for testing.", false},
		{"conf__test_image_content", "image", false},
		{"conf__test_error_handling", "intentionally returns an error", true},
		{"conf__test_sampling", "sampled (Test prompt for sampling)", false},
		{"conf__test_elicitation", "accept map[username:ada]", false},
		{"conf__test_tool_with_logging", "Tool with logging executed successfully", false},
	}
	for _, tt := range tests {
		res := callTool(t, c, tt.tool, nil)
		got := text(res)
		if len(res.Content) > 0 && res.Content[0].Type == "image" {
			got = "image"
		}
		if !strings.Contains(got, tt.want) || res.IsError != tt.isError {
			t.Errorf("%s: %q (isError %v), want %q (isError %v)", tt.tool, got, res.IsError, tt.want, tt.isError)
		}
	}
	// The log messages of the logging tool's call, at the level asked, named by their server.
	var logged []string
	deadline := time.Now().Add(10 * time.Second)
	for len(logged) < 3 && time.Now().Before(deadline) {
		var notes []struct {
			Method string
			Params struct {
				Level, Logger string
				Data          any
			}
		}
		if err := json.Unmarshal(c.Do(mcpnode.Step{Op: "notifications"}).Result, &notes); err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			if n.Method == "notifications/message" && n.Params.Logger == "conf" {
				logged = append(logged, fmt.Sprint(n.Params.Data))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}; !slices.Equal(logged, want) {
		t.Errorf("log messages: %q, want %q", logged, want)
	}
	// Progress is not checked here: the SDK's client hands a server's notifications to a
	// queue and its responses straight to the caller, so progress sent just before a result
	// may reach the gateway after it, and the TypeScript client drops progress of a call it
	// has the result of. TestCallPassthrough checks the relay, waiting past the result.
}

// TestGatewayDownstreamFailures kills the catalog server mid-session and runs a server that
// writes garbage on stdout: both are reported in health and in their tools' errors, the killed
// one comes back, and server-everything answers throughout.
func TestGatewayDownstreamFailures(t *testing.T) {
	node := mcpnode.Find(t)
	tools := writeFile(t, t.TempDir(), "tools.json", smallCatalog)
	pidFile := filepath.Join(t.TempDir(), "cat.pid")
	everything := node.Server("server-everything", "stdio")
	cfg := writeConfig(t, map[string]server{
		"everything": {"command": everything[0], "args": everything[1:]},
		"cat":        catalogEntry(t, tools, pidFile),
		// Garbage on stdout, then silence with stdin ignored.
		"junk": {"command": "/bin/sh", "args": []string{"-c", "echo this is not JSON-RPC; sleep 30"}, "timeout": "3s"},
	}, nil)
	g := startGatewayHTTP(t, cfg)
	h := g.waitHealth(t, "ready servers and a reported garbage server", func(h gatewayHealth) bool {
		_, junkErr := h.state("junk")
		return ready("cat", "everything")(h) && junkErr != ""
	})
	if st, errText := h.state("junk"); st == "ready" || !strings.Contains(errText, "invalid character") {
		t.Errorf("junk server in health: %s, %q; want it not ready, with the JSON error", st, errText)
	}
	c := node.Start(t, mcpnode.Target{URL: g.url}, 30*time.Second)
	if f := search(t, c, "cancel an order", 3); !slices.Contains(f.names(), "cat__cancel_order") {
		t.Errorf("search_tools: %v", f.names())
	}
	order := map[string]any{"token": "t", "order_id": "42"}
	if res := callTool(t, c, "cat__cancel_order", order); res.IsError {
		t.Fatalf("cat__cancel_order before the kill: %+v", res)
	}

	pid := readPID(t, pidFile)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h = g.waitHealth(t, "report of the killed server", func(h gatewayHealth) bool {
		st, errText := h.state("cat")
		return st != "ready" && errText != ""
	})
	if _, errText := h.state("cat"); !strings.Contains(errText, "connection lost") {
		t.Errorf("killed server in health: %s", h)
	}
	// Until it is back, its tools fail naming it, and the others answer.
	res := callTool(t, c, "cat__cancel_order", order)
	if res.IsError {
		if !strings.Contains(text(res), "server cat is not available") || !strings.Contains(text(res), "cancel_order") {
			t.Errorf("cat__cancel_order while its server is down: %q", text(res))
		}
	} else if st, _ := g.health(t).state("cat"); st != "ready" {
		t.Errorf("cat__cancel_order succeeded while health says cat is %s", st)
	}
	if res := callTool(t, c, "everything__echo", map[string]any{"message": "still here"}); res.IsError || text(res) != "Echo: still here" {
		t.Errorf("everything__echo with cat down: %+v", res)
	}
	g.waitHealth(t, "restart of the killed server", ready("cat"))
	if again := readPID(t, pidFile); again == pid {
		t.Errorf("cat is ready under the killed PID %d", pid)
	}
	if res := callTool(t, c, "cat__cancel_order", order); res.IsError {
		t.Errorf("cat__cancel_order after the restart: %+v", res)
	}
	if st, errText := g.health(t).state("junk"); st == "ready" || errText == "" {
		t.Errorf("junk server: %s %q", st, errText)
	}
	c.Close()
	if r := g.stop(); r.code != 0 || !strings.Contains(r.stderr, "server junk: failed") {
		t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s: %q", file, b)
	}
	return pid
}

// TestGatewayLearning runs tasks through the gateway and checks the loop closes: the traces land
// in DIR/traces.jsonl (task, tools in order, outcome), the graph updates after --learn-every
// traces with edges learned from use, and `caskg gateway rollback` brings the graph before back.
func TestGatewayLearning(t *testing.T) {
	node := mcpnode.Find(t)
	tools := writeFile(t, t.TempDir(), "tools.json", smallCatalog)
	cfg := writeConfig(t, map[string]server{"cat": catalogEntry(t, tools, filepath.Join(t.TempDir(), "cat.pid"))}, nil)
	g := startGatewayHTTP(t, cfg, "--learn-every", "2")
	// The first graph, from the catalog alone, before any trace: the update is then the one
	// that learns them, and the first graph is the one rollback brings back.
	first := g.waitHealth(t, "first graph", func(h gatewayHealth) bool { return ready("cat")(h) && h.LastUpdate != nil && !h.Building })
	if first.TracesLearned != 0 || first.EdgesFromUse != 0 {
		t.Fatalf("first graph: %s", first)
	}
	firstGraph, err := os.ReadFile(filepath.Join(g.stateDir, learn.GraphFile))
	if err != nil {
		t.Fatal(err)
	}

	c := node.Start(t, mcpnode.Target{URL: g.url}, 30*time.Second)
	token := map[string]any{"token": "t"}
	order := map[string]any{"token": "t", "order_id": "42"}
	login := map[string]any{"user": "u", "password": "p"}
	search(t, c, "cancel my last order", 3)
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"cat__login", login}, {"cat__list_orders", token}, {"cat__cancel_order", order}} {
		if res := callTool(t, c, call.name, call.args); res.IsError {
			t.Fatalf("%s: %+v", call.name, res)
		}
	}
	search(t, c, "cancel order 7", 3) // ends the first trace
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"cat__login", login}, {"cat__list_orders", token}, {"cat__cancel_order", order}} {
		callTool(t, c, call.name, call.args)
	}
	c.Close() // ends the second

	h := g.waitHealth(t, "update after 2 traces", func(h gatewayHealth) bool { return h.TracesLearned >= 2 && !h.Building })
	if h.TracesRecorded != 2 || h.EdgesFromUse == 0 || !h.LastUpdate.After(*first.LastUpdate) && !h.LastUpdate.Equal(*first.LastUpdate) {
		t.Errorf("after the update: %s; first graph %s", h, first)
	}
	b, err := os.ReadFile(filepath.Join(g.stateDir, learn.TracesFile))
	if err != nil {
		t.Fatal(err)
	}
	var traces []struct {
		ID, Task, Outcome string
		Skills            []string
		Calls             []struct {
			Tool string
			OK   bool
		}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var tr struct {
			ID, Task, Outcome string
			Skills            []string
			Calls             []struct {
				Tool string
				OK   bool
			}
		}
		if err := json.Unmarshal(line, &tr); err != nil {
			t.Fatalf("traces.jsonl line %q: %v", line, err)
		}
		traces = append(traces, tr)
	}
	wantTools := []string{"cat__login", "cat__list_orders", "cat__cancel_order"}
	if len(traces) != 2 || traces[0].Task != "cancel my last order" || traces[1].Task != "cancel order 7" || traces[0].ID == traces[1].ID {
		t.Fatalf("traces.jsonl:\n%s", b)
	}
	for _, tr := range traces {
		if !slices.Equal(tr.Skills, wantTools) || tr.Outcome != "success" || len(tr.Calls) != 3 || !tr.Calls[2].OK {
			t.Errorf("trace %+v; want tools %v, success", tr, wantTools)
		}
	}
	learned, err := os.ReadFile(filepath.Join(g.stateDir, learn.GraphFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(learned, firstGraph) {
		t.Error("graph.skg did not change with the update")
	}

	if r := run(t, "gateway", "rollback", "--state-dir", g.stateDir); r.code != 1 || !strings.Contains(r.stderr, "rollback") {
		t.Errorf("rollback of a running gateway's folder: exit %d, %s", r.code, r.stderr)
	}
	if r := g.stop(); r.code != 0 {
		t.Fatalf("gateway: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, "gateway", "rollback", "--state-dir", g.stateDir)
	back, err := os.ReadFile(filepath.Join(g.stateDir, learn.GraphFile))
	if err != nil || !bytes.Equal(back, firstGraph) {
		t.Errorf("after rollback graph.skg is not the first graph (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(g.stateDir, learn.UndoneFile)); err != nil {
		t.Errorf("after rollback the undone traces are not set aside: %v", err)
	}
	// A second rollback does not swap the learned graph back.
	if r := run(t, "gateway", "rollback", "--state-dir", g.stateDir); r.code != 1 || !strings.Contains(r.stderr, "no previous graph") {
		t.Errorf("second rollback: exit %d, %s", r.code, r.stderr)
	}
	if back, err := os.ReadFile(filepath.Join(g.stateDir, learn.GraphFile)); err != nil || !bytes.Equal(back, firstGraph) {
		t.Errorf("after a second rollback graph.skg is not the first graph (%v)", err)
	}
	if r := run(t, "gateway", "rollback", "--relearn", "--state-dir", g.stateDir); r.code != 0 || !strings.Contains(r.stderr, "traces back in") {
		t.Errorf("rollback --relearn: exit %d, %s", r.code, r.stderr)
	}
}
