package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/mcpnode"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

// startMCPHTTP runs `caskg mcp ARTIFACT --library sample --http 127.0.0.1:0` in-process and
// returns the URL of its /mcp and the function that stops it as Ctrl-C would.
func startMCPHTTP(t *testing.T, art string) (string, func() result) {
	t.Helper()
	base, stop := startListening(t, "mcp", art, "--library", sampleLib, "--http", "127.0.0.1:0")
	return base + mcptransport.MCPPath, stop
}

// goSDKSession connects the Go SDK's client to url over streamable HTTP.
func goSDKSession(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPHTTP serves the sample over streamable HTTP and calls it with the Go SDK's client: the
// same tools as on stdio, the same bundle as `caskg query --render`, health beside /mcp, and a
// prompt stop on the interrupt with a client still attached.
func TestMCPHTTP(t *testing.T) {
	art := buildSample(t)
	url, stop := startMCPHTTP(t, art)
	cs := goSDKSession(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	checkToolsAndRetrieve(ctx, t, cs, art, "HTTP")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_skill", Arguments: map[string]any{"name": "fnd-lamp"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "find-lamp") {
		t.Errorf("get_skill(fnd-lamp): %v %+v", err, res)
	}

	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(strings.TrimSuffix(url, mcptransport.MCPPath) + mcptransport.HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var health struct {
		Status, Artifact string
		Skills, Edges    int
	}
	if err := json.Unmarshal(body, &health); err != nil || resp.StatusCode != 200 || health.Status != "ok" || health.Artifact != art || health.Skills != sampleCount {
		t.Errorf("health: %d %s (%v)", resp.StatusCode, body, err)
	}

	// The Go SDK's client keeps a GET event stream open; the interrupt must not wait for it.
	start := time.Now()
	r := stop()
	if took := time.Since(start); took >= mcptransport.ShutdownTimeout {
		t.Errorf("stopping with a client attached took %v, the whole shutdown timeout", took)
	}
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "on "+url+"\n") || !strings.Contains(r.stderr, "caskg mcp: stopped") ||
		strings.Contains(r.stderr, "warning") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestMCPHTTPBadAddr(t *testing.T) {
	art := buildSample(t)
	for _, addr := range []string{"nonsense", "127.0.0.1:99999"} {
		if r := run(t, "mcp", art, "--http", addr); r.code != 1 || !strings.Contains(r.stderr, "--http "+addr) {
			t.Errorf("--http %s: exit %d, stderr %q; want exit 1 naming the flag", addr, r.code, r.stderr)
		}
	}
}

// TestMCPTypeScriptClient drives `caskg mcp` with the official TypeScript SDK's client, over
// streamable HTTP and over stdio (this test binary re-entered as the server): the same tools
// and the same retrieve_skills answer as the Go SDK's client gets.
func TestMCPTypeScriptClient(t *testing.T) {
	node := mcpnode.Find(t)
	art := buildSample(t)
	url, stop := startMCPHTTP(t, art)
	defer stop()

	call := &mcp.CallToolParams{Name: "retrieve_skills", Arguments: map[string]any{"query": sampleQuery, "k": 6}}
	goRes, err := goSDKSession(t, url).CallTool(context.Background(), call)
	if err != nil || goRes.IsError {
		t.Fatalf("Go SDK retrieve_skills: %v %+v", err, goRes)
	}
	goText := goRes.Content[0].(*mcp.TextContent).Text
	goStructured, _ := json.Marshal(goRes.StructuredContent)

	for _, front := range []struct {
		name   string
		target mcpnode.Target
	}{
		{"http", mcpnode.Target{URL: url}},
		{"stdio", mcpnode.Target{
			Command: os.Args[0],
			Args:    []string{"-test.run=^TestMCPHelperProcess$", "--", "mcp", art, "--library", sampleLib},
			Env:     map[string]string{"CASKG_MCP_HELPER": "1"},
		}},
	} {
		t.Run(front.name, func(t *testing.T) {
			start := time.Now()
			c := node.Start(t, front.target, 30*time.Second)
			var info struct{ ServerInfo struct{ Name string } }
			if err := json.Unmarshal(c.Connect.Result, &info); err != nil || info.ServerInfo.Name != "caskg" {
				t.Errorf("connect: %s (%v)", c.Connect.Result, err)
			}
			names, tools := listNames(t, c)
			for _, tool := range tools {
				if !json.Valid(tool.InputSchema) || !strings.Contains(string(tool.InputSchema), `"type":"object"`) {
					t.Errorf("%s: input schema %s", tool.Name, tool.InputSchema)
				}
			}
			slices.Sort(names)
			if want := []string{"get_skill", "graph_info", "report_skill_use", "retrieve_skills", "skill_neighbors"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v", names, want)
			}
			res, err := c.Do(mcpnode.Step{Op: "callTool", Name: call.Name, Arguments: call.Arguments}).Call()
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("retrieve_skills: %v %+v", err, res)
			}
			if res.Content[0].Text != goText {
				t.Errorf("retrieve_skills text differs from the Go SDK client's:\n%s\nwant:\n%s", res.Content[0].Text, goText)
			}
			if !jsonEqual(t, res.StructuredContent, goStructured) {
				t.Errorf("structured content differs from the Go SDK client's:\n%s\nwant:\n%s", res.StructuredContent, goStructured)
			}
			bad, err := c.Do(mcpnode.Step{Op: "callTool", Name: "get_skill", Arguments: map[string]any{"name": "fnd-lamp"}}).Call()
			if err != nil || !bad.IsError || len(bad.Content) == 0 || !strings.Contains(bad.Content[0].Text, "find-lamp") {
				t.Errorf("get_skill(fnd-lamp): %v %+v", err, bad)
			}
			if a := c.Do(mcpnode.Step{Op: "callTool", Name: "no_such_tool"}); a.OK || a.Code != -32602 {
				t.Errorf("an unknown tool: %+v; want JSON-RPC error -32602", a)
			}
			if a := c.Do(mcpnode.Step{Op: "ping"}); !a.OK {
				t.Errorf("ping: %+v", a)
			}
			c.Close()
			t.Logf("TypeScript client over %s: %v", front.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Errorf("%s: %v", a, err)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Errorf("%s: %v", b, err)
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// TestMCPConformance runs the official MCP conformance suite's generic server scenarios against
// `caskg mcp --http`. dns-rebinding-protection is the security one: a request to the loopback
// server under another Host and Origin must get a 4xx, one under its own a 2xx.
func TestMCPConformance(t *testing.T) {
	node := mcpnode.Find(t)
	art := buildSample(t)
	url, stop := startMCPHTTP(t, art)
	defer stop()
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} {
		t.Run(scenario, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			checks, output := node.Conformance(t, ctx, url, scenario)
			for _, c := range checks {
				if c.Status != "SUCCESS" {
					t.Errorf("%s: %s %s", c.ID, c.Status, c.ErrorMessage)
				}
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", output)
			}
			t.Logf("%s: %d checks in %v", scenario, len(checks), time.Since(start).Round(time.Millisecond))
		})
	}
}
