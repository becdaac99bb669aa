package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// The test binary doubles as a stdio MCP server: with GATEWAY_TEST_SERVER set it serves (or
// misbehaves) on stdin and stdout instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("GATEWAY_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "garbage":
		// Not JSON-RPC: the gateway must give up on this server and keep the others.
		fmt.Println("Starting server... this line is not JSON")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	default:
		srv := mcp.NewServer(&mcp.Implementation{Name: "child"}, nil)
		addTool(srv, "pid", "Tell the server's process id.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
		if os.Getenv("GATEWAY_TEST_SERVER") == "big" {
			// A result over the gateway's frame limit (maxMessageBytes).
			addTool(srv, "big", "Answer with 20 MB of text.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return text(strings.Repeat("x", 20<<20)), nil
			})
		}
		if os.Getenv("GATEWAY_TEST_SERVER") == "env" {
			addTool(srv, "environ", "Tell the server's environment, a variable a line.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return text(strings.Join(os.Environ(), "\n")), nil
			})
		}
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addTool adds a tool with an object schema and a handler over its decoded arguments.
func addTool(srv *mcp.Server, name, desc string, h func(context.Context, map[string]any) (*mcp.CallToolResult, error)) {
	srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			json.Unmarshal(req.Params.Arguments, &args)
			return h(ctx, args)
		})
}

// alphaServer is an in-memory downstream with a page size of 2, so listing takes pages.
func alphaServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "alpha"}, &mcp.ServerOptions{PageSize: 2})
	addTool(srv, "read_file", "Read a file's text from the disk.", func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		return text("contents of " + fmt.Sprint(a["path"])), nil
	})
	addTool(srv, "write_file", "Write text to a file on the disk.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return text("written"), nil
	})
	addTool(srv, "delete_file", "Delete a file from the disk.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return text("deleted"), nil
	})
	addTool(srv, "stat", "File size and dates, structured.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"size": 3}`}},
			StructuredContent: map[string]any{"size": 3.0}}, nil
	})
	addTool(srv, "fail", "Always fails.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
	})
	addTool(srv, "hang", "Never answers.", func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	srv.AddTool(&mcp.Tool{Name: "slow_count", Description: "Counts to three, reporting progress.",
		InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 3 && tok != nil; i++ {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: "step " + strconv.Itoa(i)})
			}
			return text("counted"), nil
		})
	return srv
}

// recorder is a Learner that keeps what it is given, for the tests to read.
type recorder struct {
	mu       sync.Mutex
	traces   []learn.Trace
	catalogs [][]byte
	graph    *graphs.Graph
	eng      *engine.Engine
}

func (r *recorder) Graph() (*graphs.Graph, *engine.Engine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.graph, r.eng
}

func (r *recorder) SetCatalog(c []byte) error {
	r.mu.Lock()
	r.catalogs = append(r.catalogs, c)
	r.mu.Unlock()
	return nil
}

func (r *recorder) Record(t learn.Trace) error {
	r.mu.Lock()
	r.traces = append(r.traces, t)
	r.mu.Unlock()
	return nil
}

func (r *recorder) Status() learn.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return learn.Status{TracesRecorded: len(r.traces)}
}

func (r *recorder) got() []learn.Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.traces)
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// inMemory dials the in-memory servers of servers by name.
func inMemory(t *testing.T, servers map[string]func() *mcp.Server) func(ServerConfig) mcp.Transport {
	return func(s ServerConfig) mcp.Transport {
		mk, ok := servers[s.Name]
		if !ok {
			return nil
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := mk().Connect(context.Background(), st, nil)
		if err != nil {
			t.Errorf("in-memory server %s: %v", s.Name, err)
		}
		_ = ss
		return ct
	}
}

func startGateway(t *testing.T, cfg *Config, opt Options) *Gateway {
	t.Helper()
	if opt.BackoffMin == 0 {
		opt.BackoffMin, opt.BackoffMax = 20*time.Millisecond, 200*time.Millisecond
	}
	g, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx := testContext(t, 20*time.Second)
	if err := g.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// testContext is the context of a test's calls: it ends after d, or when the test does.
func testContext(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// serveFront serves g's HTTP front until the test ends (closing before g does).
func serveFront(t *testing.T, g *Gateway) *httptest.Server {
	t.Helper()
	front := httptest.NewServer(g.Handler())
	t.Cleanup(front.Close)
	return front
}

type frontClient struct {
	cs       *mcp.ClientSession
	changed  chan struct{}
	progress chan *mcp.ProgressNotificationParams
}

// connect opens a front session over in-memory transports with the SDK's client.
func connect(t *testing.T, g *Gateway) *frontClient {
	t.Helper()
	fc := &frontClient{changed: make(chan struct{}, 100), progress: make(chan *mcp.ProgressNotificationParams, 100)}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Connect(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { fc.changed <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			fc.progress <- r.Params
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc.cs = cs
	t.Cleanup(func() { cs.Close() })
	return fc
}

func (fc *frontClient) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx := testContext(t, 20*time.Second)
	res, err := fc.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (fc *frontClient) search(t *testing.T, query string, k int) (*mcp.CallToolResult, searchResult) {
	t.Helper()
	res := fc.call(t, searchTool, map[string]any{"query": query, "k": k})
	var out searchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("search %q: structured content: %v", query, err)
	}
	return res, out
}

func (fc *frontClient) callTool(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return fc.call(t, callTool, map[string]any{"name": name, "arguments": args})
}

// tools is the front's tools/list for this session.
func (fc *frontClient) tools(t *testing.T) []*mcp.Tool {
	t.Helper()
	return testlib.Tools(t, context.Background(), fc.cs)
}

// toolNames are the names of the front's tools for this session, in its order.
func (fc *frontClient) toolNames(t *testing.T) []string {
	t.Helper()
	return testlib.ToolNames(fc.tools(t))
}

func names(out searchResult) []string {
	var n []string
	for _, t := range out.Tools {
		n = append(n, t.Name)
	}
	return n
}

func alphaConfig() *Config {
	return &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: 500 * time.Millisecond,
		Deny: []string{"delete_*"}}}, Deny: []string{"alpha__write*"}}
}

func TestCatalogPaginationNamespacesAndFilters(t *testing.T) {
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	var cat struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema any    `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(g.catalog(), &cat); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range cat.Tools {
		got = append(got, tool.Name)
	}
	// Seven tools over four pages; delete_file denied by the server's list, write_file by the
	// top-level one.
	want := []string{"alpha__fail", "alpha__hang", "alpha__read_file", "alpha__slow_count", "alpha__stat"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("catalog (-want +got):\n%s", d)
	}
	if len(rec.catalogs) != 1 || string(rec.catalogs[0]) != string(g.catalog()) {
		t.Errorf("the learner got %d catalogs, want the one", len(rec.catalogs))
	}

	fc := connect(t, g)
	for _, q := range []string{"write text to a file", "delete a file", "alpha__delete_file"} {
		_, out := fc.search(t, q, 10)
		for _, n := range names(out) {
			if strings.Contains(n, "write") || strings.Contains(n, "delete") {
				t.Errorf("search %q found the denied %s", q, n)
			}
		}
		if len(out.Tools) == 0 {
			t.Errorf("search %q: no tools", q)
		}
	}
	for _, name := range []string{"alpha__delete_file", "alpha__write_file", "delete_file"} {
		res := fc.callTool(t, name, map[string]any{"path": "/x"})
		if !res.IsError || !strings.Contains(testlib.ToolText(res), "no tool") {
			t.Errorf("call of denied %s: %v %q", name, res.IsError, testlib.ToolText(res))
		}
	}
	res := fc.callTool(t, "alpha__read_fil", map[string]any{"path": "/x"})
	if !strings.Contains(testlib.ToolText(res), "did you mean alpha__read_file?") {
		t.Errorf("misspelt name: %q", testlib.ToolText(res))
	}
	tools := fc.tools(t)
	var front []string
	for _, tool := range tools {
		front = append(front, tool.Name)
	}
	if d := cmp.Diff([]string{callTool, searchTool}, front); d != "" {
		t.Errorf("front tools (-want +got):\n%s", d)
	}
	if desc := tools[1].Description; !strings.Contains(desc, "5 tools of the servers alpha") {
		t.Errorf("search_tools description: %q", desc)
	}
}

func TestLexicalSearchBeforeAnyGraph(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{Learner: &recorder{},
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	res, out := fc.search(t, "read the text of a file", 3)
	if out.Ranking != "lexical" || len(out.Tools) == 0 || out.Tools[0].Name != "alpha__read_file" {
		t.Fatalf("ranking %q, tools %v", out.Ranking, names(out))
	}
	if out.Tools[0].InputSchema == nil || !strings.Contains(testlib.ToolText(res), `inputSchema: {"properties":{"path"`) {
		t.Errorf("schema missing: %q", testlib.ToolText(res))
	}
	// Nothing matches: still tools to look at.
	_, out = fc.search(t, "zzzz qqqq", 2)
	if len(out.Tools) != 2 {
		t.Errorf("unmatched query gave %v", names(out))
	}
}

func TestCallPassthrough(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)

	res := fc.callTool(t, "alpha__read_file", map[string]any{"path": "/etc/x"})
	if res.IsError || testlib.ToolText(res) != "contents of /etc/x" {
		t.Errorf("read_file: %v %q", res.IsError, testlib.ToolText(res))
	}
	res = fc.callTool(t, "alpha__stat", nil)
	if d := cmp.Diff(map[string]any{"size": 3.0}, res.StructuredContent); d != "" {
		t.Errorf("structured content (-want +got):\n%s", d)
	}
	res = fc.callTool(t, "alpha__fail", nil)
	if !res.IsError || testlib.ToolText(res) != "it broke" {
		t.Errorf("isError not passed through: %v %q", res.IsError, testlib.ToolText(res))
	}

	start := time.Now()
	res = fc.callTool(t, "alpha__hang", nil)
	if !res.IsError || !strings.Contains(testlib.ToolText(res), "server alpha, tool hang: no result within 500ms") {
		t.Errorf("hanging tool: %v %q", res.IsError, testlib.ToolText(res))
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the timeout took %v", time.Since(start))
	}

	big := strings.Repeat("x", maxArgumentBytes)
	res = fc.callTool(t, "alpha__read_file", map[string]any{"path": big})
	if !res.IsError || !strings.Contains(testlib.ToolText(res), "server alpha, tool read_file: the arguments are") {
		t.Errorf("oversize arguments: %v %q", res.IsError, testlib.ToolText(res))
	}

	ctx := testContext(t, 10*time.Second)
	params := &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "alpha__slow_count"}}
	params.SetProgressToken("tok-7")
	res, err := fc.cs.CallTool(ctx, params)
	if err != nil || testlib.ToolText(res) != "counted" {
		t.Fatalf("slow_count: %v %v", err, res)
	}
	for i := 1; i <= 3; i++ {
		select {
		case p := <-fc.progress:
			if p.ProgressToken != "tok-7" || p.Progress != float64(i) || p.Total != 3 {
				t.Errorf("progress %d: %+v", i, p)
			}
		case <-ctx.Done():
			t.Fatalf("progress %d never came", i)
		}
	}
}

func TestListChanged(t *testing.T) {
	var mu sync.Mutex
	var srv *mcp.Server
	g := startGateway(t, alphaConfig(), Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": func() *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		srv = alphaServer()
		return srv
	}})})
	fc := connect(t, g)
	mu.Lock()
	addTool(srv, "list_dir", "List a folder.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return text("a b c"), nil
	})
	mu.Unlock()
	waitFor(t, "the new tool in the catalog", func() bool { return strings.Contains(string(g.catalog()), "alpha__list_dir") })
	select {
	case <-fc.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the front sent no tools/list_changed")
	}
	// The session may have had a tools/list_changed already, for the catalog it first saw: the
	// search tool's new description can come with a later one.
	var desc string
	waitFor(t, "search_tools' description to count the new tool", func() bool {
		for _, tool := range fc.tools(t) {
			if tool.Name == searchTool {
				desc = tool.Description
			}
		}
		return strings.Contains(desc, "6 tools")
	})
	if res := fc.callTool(t, "alpha__list_dir", nil); testlib.ToolText(res) != "a b c" {
		t.Errorf("new tool: %q", testlib.ToolText(res))
	}
}

// stdioServer is a config entry that runs this test binary as a stdio server.
func stdioServer(t *testing.T, name, mode string) ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: exe, Env: map[string]string{"GATEWAY_TEST_SERVER": mode}, Timeout: 5 * time.Second}
}

func TestKilledServerRestartsWhileOthersAnswer(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: time.Second}, stdioServer(t, "child", "ok")}}
	opt := Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer}),
		BackoffMin: 300 * time.Millisecond, BackoffMax: time.Second}
	g := startGateway(t, cfg, opt)
	fc := connect(t, g)
	res := fc.callTool(t, "child__pid", nil)
	pid, err := strconv.Atoi(testlib.ToolText(res))
	if err != nil {
		t.Fatalf("pid: %q", testlib.ToolText(res))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var st status
	waitFor(t, "the killed server reported", func() bool {
		st = g.health().Servers[1]
		return strings.HasPrefix(st.State, "restarting in")
	})
	if !strings.Contains(st.Error, "connection lost") || st.Tools != 1 {
		t.Errorf("health of the killed server: %+v", st)
	}
	// Meanwhile: its tool fails naming it, the other server answers, search still finds it.
	res = fc.callTool(t, "child__pid", nil)
	if !res.IsError || !strings.Contains(testlib.ToolText(res), "server child is not available (restarting in") {
		t.Errorf("call to the dead server: %v %q", res.IsError, testlib.ToolText(res))
	}
	if res := fc.callTool(t, "alpha__read_file", map[string]any{"path": "p"}); res.IsError {
		t.Errorf("the other server: %q", testlib.ToolText(res))
	}
	waitFor(t, "the server back", func() bool { return g.health().Servers[1].State == stateReady })
	res = fc.callTool(t, "child__pid", nil)
	if pid2, _ := strconv.Atoi(testlib.ToolText(res)); pid2 == 0 || pid2 == pid {
		t.Errorf("after the restart: %q (was %d)", testlib.ToolText(res), pid)
	}
}

func TestGarbageAndMissingServers(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{
		{Name: "alpha", Command: "unused", Timeout: time.Second},
		stdioServer(t, "garbage", "garbage"),
		{Name: "missing", Command: "/nonexistent/caskg-test-server", Timeout: time.Second},
	}}
	cfg.Servers[1].Timeout = time.Second
	g := startGateway(t, cfg, Options{dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	h := g.health()
	for _, st := range h.Servers[1:] {
		if st.State == stateReady || !strings.HasPrefix(st.Error, "failed: ") {
			t.Errorf("server %s: %+v", st.Name, st)
		}
	}
	if h.Servers[0].State != stateReady || h.Tools != 7 {
		t.Errorf("alpha: %+v, %d tools", h.Servers[0], h.Tools)
	}
	fc := connect(t, g)
	if res := fc.callTool(t, "alpha__read_file", map[string]any{"path": "p"}); res.IsError {
		t.Errorf("alpha: %q", testlib.ToolText(res))
	}
}

func TestHTTPDownstreamAndFront(t *testing.T) {
	// A streamable-HTTP downstream that wants a header.
	down := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return alphaServer() }, nil)
	ds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		down.ServeHTTP(w, r)
	}))
	defer ds.Close()
	cfg := &Config{Servers: []ServerConfig{{Name: "web", URL: ds.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 5 * time.Second}}}
	g := startGateway(t, cfg, Options{Learner: &recorder{}})
	defer g.Close() // before ds closes: the gateway holds a connection to it
	if st := g.health().Servers[0]; st.State != stateReady || st.Tools != 7 {
		t.Fatalf("web: %+v", st)
	}

	front := httptest.NewServer(g.Handler())
	defer front.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	ctx := testContext(t, 20*time.Second)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": "web__read_file", "arguments": map[string]any{"path": "q"}}})
	if err != nil || testlib.ToolText(res) != "contents of q" {
		t.Fatalf("call over HTTP: %v %v", err, res)
	}

	resp, err := http.Get(front.URL + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	for _, k := range []string{"servers", "tools", "traces_recorded", "traces_learned", "edges", "edges_from_use", "last_update"} {
		if _, ok := h[k]; !ok {
			t.Errorf("health lacks %q: %v", k, h)
		}
	}
	// DNS rebinding: a page on evil.example that resolves to 127.0.0.1 is refused.
	req, _ := http.NewRequest("POST", front.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: status %d, want 403", resp.StatusCode)
	}
}

// fakeClock is a clock the tests move by hand.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestSessionTraces(t *testing.T) {
	rec := &recorder{}
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	g := startGateway(t, alphaConfig(), Options{Learner: rec, TraceGap: time.Hour, now: clock.now,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	fc.callTool(t, "alpha__stat", nil) // before any search: a trace without a task
	fc.search(t, "read a file", 3)
	fc.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
	fc.callTool(t, "alpha__read_file", map[string]any{"path": "b"})
	fc.callTool(t, "alpha__fail", nil)
	fc.callTool(t, "alpha__nope", nil) // unknown: not a call of any tool
	fc.search(t, "file size", 3)       // ends the trace above
	fc.search(t, "nothing called", 3)  // a search without calls records nothing
	fc.callTool(t, "alpha__stat", nil)
	clock.add(time.Hour) // the idle gap ends the trace
	fc.callTool(t, "alpha__read_file", map[string]any{"path": "c"})
	fc.cs.Close() // the session's end ends the last one
	waitFor(t, "four traces", func() bool { return len(rec.got()) == 4 })
	want := []learn.Trace{
		{ID: "gw-0.1-1", Task: "", Tools: []string{"alpha__stat"}, Calls: []learn.Call{{Tool: "alpha__stat", OK: true}}},
		{ID: "gw-0.1-2", Task: "read a file", Tools: []string{"alpha__read_file", "alpha__fail"}, Failed: true,
			Calls: []learn.Call{{Tool: "alpha__read_file", OK: true}, {Tool: "alpha__read_file", OK: true}, {Tool: "alpha__fail", OK: false}}},
		{ID: "gw-0.1-3", Task: "nothing called", Tools: []string{"alpha__stat"}, Calls: []learn.Call{{Tool: "alpha__stat", OK: true}}},
		{ID: "gw-0.1-4", Task: "", Tools: []string{"alpha__read_file"}, Calls: []learn.Call{{Tool: "alpha__read_file", OK: true}}},
	}
	if d := cmp.Diff(want, rec.got()); d != "" {
		t.Errorf("traces (-want +got):\n%s", d)
	}
	// A second session gets its own numbering.
	fc2 := connect(t, g)
	fc2.search(t, "write", 1)
	fc2.callTool(t, "alpha__fail", nil)
	g.Close() // shutdown records the trace in flight
	got := rec.got()
	if len(got) != 5 || got[4].ID != "gw-0.2-1" || got[4].Task != "write" {
		t.Errorf("after shutdown: %+v", got[len(got)-1])
	}
}

func TestExpose(t *testing.T) {
	g := startGateway(t, alphaConfig(), Options{Expose: 2,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	if d := cmp.Diff([]string{callTool, searchTool}, fc.toolNames(t)); d != "" {
		t.Fatalf("before a search (-want +got):\n%s", d)
	}
	drain(fc.changed)
	_, out := fc.search(t, "read a file from the disk", 2)
	select {
	case <-fc.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed after the search")
	}
	want := append([]string{callTool}, names(out)...)
	want = append(want, searchTool)
	slices.Sort(want)
	if d := cmp.Diff(want, fc.toolNames(t)); d != "" {
		t.Fatalf("after a search (-want +got):\n%s", d)
	}
	if res := fc.call(t, "alpha__read_file", map[string]any{"path": "z"}); testlib.ToolText(res) != "contents of z" {
		t.Errorf("direct call: %q", testlib.ToolText(res))
	}
	// Another session's list is its own.
	fc2 := connect(t, g)
	if n := len(fc2.tools(t)); n != 2 {
		t.Errorf("the other session lists %d tools", n)
	}
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// lexicalAndGraph starts two gateways in front of servers: one before its first graph (lexical
// ranking) and one whose learner holds the graph built from its catalog, once every server's
// tools are listed.
func lexicalAndGraph(t *testing.T, cfg *Config, servers map[string]func() *mcp.Server) (lexical, graph *Gateway) {
	t.Helper()
	graphRec := &recorder{}
	lexical = startGateway(t, cfg, Options{Learner: &recorder{}, dial: inMemory(t, servers)})
	graph = startGateway(t, cfg, Options{Learner: graphRec, dial: inMemory(t, servers)})
	waitFor(t, "every server's tools", func() bool {
		return len(graph.cat.Load().servers) == len(cfg.Servers) && len(lexical.cat.Load().servers) == len(cfg.Servers)
	})
	gr := catalogGraph(t, graph.catalog())
	graphRec.graph, graphRec.eng = gr, engine.New(gr)
	return lexical, graph
}

// catalogGraph builds, with the default options, and decodes the artifact of a gateway
// catalog.
func catalogGraph(t *testing.T, catalog []byte) *graphs.Graph {
	t.Helper()
	skills, problems := ingest.ParseTools(catalog, "catalog.json")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return testlib.Graph(t, builder.Input{Skills: skills, Options: new(builder.DefaultOptions())})
}

// catalogTools is a catalog as JSON reads it: the tools, each a map.
type catalogTools struct {
	Tools []map[string]any `json:"tools"`
}

// alphaWithGraph starts a gateway in front of the alpha server with a recorder for its learner,
// whose graph the test sets, and returns the gateway's catalog.
func alphaWithGraph(t *testing.T) (*recorder, *Gateway, catalogTools) {
	t.Helper()
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	var cat catalogTools
	if err := json.Unmarshal(g.catalog(), &cat); err != nil {
		t.Fatal(err)
	}
	return rec, g, cat
}

// TestGraphSearch searches over a graph built from the catalog plus a tool the configuration
// denies: the graph ranks, and the denied tool never comes back.
func TestGraphSearch(t *testing.T) {
	rec, g, cat := alphaWithGraph(t)
	cat.Tools = append(cat.Tools, map[string]any{"name": "alpha__write_file", "description": "Write text to a file on the disk.",
		"inputSchema": map[string]any{"type": "object"}})
	data, _ := json.Marshal(cat)
	gr := catalogGraph(t, data)
	rec.mu.Lock()
	rec.graph, rec.eng = gr, engine.New(gr)
	rec.mu.Unlock()

	fc := connect(t, g)
	res, out := fc.search(t, "write text to a file on the disk", 8)
	if out.Ranking != "graph" || len(out.Tools) == 0 {
		t.Fatalf("ranking %q, tools %v", out.Ranking, names(out))
	}
	for _, n := range names(out) {
		if n == "alpha__write_file" {
			t.Errorf("the denied tool came back: %v", names(out))
		}
	}
	if !strings.Contains(testlib.ToolText(res), "ranked over the tool graph") {
		t.Errorf("text: %q", testlib.ToolText(res))
	}
}

// betaServer is a second in-memory downstream, for filters over namespaces.
func betaServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "beta"}, nil)
	for _, tool := range [][2]string{{"read_mail", "Read a mail from the inbox."}, {"send_mail", "Send a mail."},
		{"list_files", "List the files attached to a mail."}} {
		addTool(srv, tool[0], tool[1], func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return text(tool[0]), nil })
	}
	return srv
}

// TestSearchFilter runs search_tools with retrieve_skills' filter (allow, deny, namespaces) over
// the lexical ranking and over a graph: every tool it returns passes the filter, the filter
// only narrows (the tools left keep their order), and a bad list is a tool error naming it.
func TestSearchFilter(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{{Name: "alpha", Command: "unused", Timeout: time.Second},
		{Name: "beta", Command: "unused", Timeout: time.Second}}}
	servers := map[string]func() *mcp.Server{"alpha": alphaServer, "beta": betaServer}
	lexicalGW, graphGW := lexicalAndGraph(t, cfg, servers)

	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = "x" + strconv.Itoa(i)
	}
	tests := []struct {
		name    string
		filter  map[string]any
		allowed func(string) bool // every tool returned passes; nil: an error
		want    string            // a tool that must be returned, or the error's text
	}{
		{"none", map[string]any{}, func(string) bool { return true }, "alpha__read_file"},
		{"allow", map[string]any{"allow": []string{"alpha__read*", "beta__?ead_mail"}},
			func(n string) bool { return n == "alpha__read_file" || n == "beta__read_mail" }, "beta__read_mail"},
		{"deny wins", map[string]any{"allow": []string{"*read*"}, "deny": []string{"alpha__*"}},
			func(n string) bool { return n == "beta__read_mail" }, "beta__read_mail"},
		{"namespaces", map[string]any{"namespaces": []string{"beta"}},
			func(n string) bool { return strings.HasPrefix(n, "beta__") }, "beta__read_mail"},
		{"namespaces and deny", map[string]any{"namespaces": []string{"alpha", "beta"}, "deny": []string{"*mail"}},
			func(n string) bool { return !strings.HasSuffix(n, "mail") }, "alpha__read_file"},
		{"leaves nothing", map[string]any{"namespaces": []string{"gamma"}}, func(string) bool { return false }, ""},
		{"reserved character", map[string]any{"allow": []string{"read*", "[ab]*"}}, nil, `search_tools: field "allow[1]": '[', ']' and '\' are reserved`},
		{"empty entry", map[string]any{"deny": []string{""}}, nil, `search_tools: field "deny[0]": empty`},
		{"namespace with __", map[string]any{"namespaces": []string{"alpha__read"}}, nil, `search_tools: field "namespaces[0]": a namespace has no "__"`},
		{"too many", map[string]any{"allow": tooMany}, nil, `search_tools: field "allow": 101 entries, at most 100`},
		{"entry too long", map[string]any{"deny": []string{strings.Repeat("d", 257)}}, nil, `search_tools: field "deny[0]": 257 bytes, at most 256`},
		{"not a list", map[string]any{"namespaces": "beta"}, nil, `search_tools: field "namespaces": want an array of strings`},
		{"misspelt", map[string]any{"namespace": []string{"beta"}}, nil, `search_tools: unknown field "namespace"; did you mean "namespaces"?`},
	}
	for _, gw := range []struct {
		name, ranking string
		g             *Gateway
	}{{"lexical", "lexical", lexicalGW}, {"graph", "graph", graphGW}} {
		fc := connect(t, gw.g)
		_, whole := fc.search(t, "read a file or a mail", 20)
		for _, tt := range tests {
			t.Run(gw.name+"/"+tt.name, func(t *testing.T) {
				args := map[string]any{"query": "read a file or a mail", "k": 20}
				for k, v := range tt.filter {
					args[k] = v
				}
				res := fc.call(t, searchTool, args)
				if tt.allowed == nil {
					if !res.IsError || !strings.Contains(testlib.ToolText(res), tt.want) {
						t.Errorf("isError %v, %q; want an error with %q", res.IsError, testlib.ToolText(res), tt.want)
					}
					return
				}
				var out searchResult
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &out); err != nil || res.IsError {
					t.Fatalf("%v %q", err, testlib.ToolText(res))
				}
				got := names(out)
				var kept []string
				for _, n := range names(whole) {
					if tt.allowed(n) {
						kept = append(kept, n)
					}
				}
				if tt.want != "" && out.Ranking != gw.ranking {
					t.Errorf("ranking %q, want %q", out.Ranking, gw.ranking)
				}
				if tt.want != "" && !slices.Contains(got, tt.want) || !slices.Equal(got, kept) {
					t.Errorf("tools %v; want those of %v the filter keeps (%v), %s among them", got, names(whole), kept, tt.want)
				}
				if tt.want == "" && (len(got) != 0 || !strings.Contains(out.Note, "filter")) {
					t.Errorf("a filter that keeps nothing: %v, note %q", got, out.Note)
				}
			})
		}
	}
}
