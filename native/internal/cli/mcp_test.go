package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/google/go-cmp/cmp"
)

// renderedFor is what the engine renders for req over the artifact at art.
func renderedFor(t *testing.T, art string, req engine.Request) string {
	t.Helper()
	g, err := loadArtifact(art)
	if err != nil {
		t.Fatal(err)
	}
	req.Render = true
	resp, err := engine.New(g).Query(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Rendered
}

func TestQueryRender(t *testing.T) {
	art := buildSample(t)

	r := mustRun(t, "query", art, sampleQuery, "--render")
	if want := renderedFor(t, art, engine.Request{Query: sampleQuery}); r.stdout != want {
		t.Errorf("--render prints something else than the engine's bundle:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.HasPrefix(r.stdout, "8 skills for this task") || !strings.Contains(r.stdout, "[1] heat-object-in-microwave (seed #1)\n") ||
		!strings.Contains(r.stdout, "## Steps") {
		t.Errorf("--render output lacks the header, the top skill or its body:\n%s", r.stdout)
	}

	// Budgets imply --render and bound the text.
	r = mustRun(t, "query", art, sampleQuery, "-k", "5", "--skill-budget", "300", "--total-budget", "1200")
	if want := renderedFor(t, art, engine.Request{Query: sampleQuery, K: 5, SkillBudget: 300, TotalBudget: 1200}); r.stdout != want {
		t.Errorf("budgets: output differs from the engine's bundle:\n%s\nwant:\n%s", r.stdout, want)
	}
	if n := len([]rune(r.stdout)); n > 1200 {
		t.Errorf("--total-budget 1200 printed %d characters", n)
	}

	// --json carries the bundle in "rendered" beside the results.
	r = mustRun(t, "query", art, sampleQuery, "--render", "--json")
	var resp struct {
		Results  []queryResult
		Rendered string
	}
	decodeJSON(t, r.stdout, &resp)
	if len(resp.Results) != 8 || resp.Rendered != renderedFor(t, art, engine.Request{Query: sampleQuery}) {
		t.Errorf("--render --json: %d results, rendered %q", len(resp.Results), resp.Rendered)
	}
	// Without --render there is no "rendered" field.
	if r := mustRun(t, "query", art, sampleQuery, "--json"); strings.Contains(r.stdout, `"rendered"`) {
		t.Errorf("--json without --render has a rendered field:\n%s", r.stdout)
	}

	// Batch lines carry it too, and the text form prints each bundle after its id.
	input, ids := batchInput(t)
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(tasks, input, 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, "query", art, "--batch", tasks, "--json", "--render", "--total-budget", "2000")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != len(ids) {
		t.Fatalf("%d batch lines for %d tasks", len(lines), len(ids))
	}
	var first struct{ Rendered string }
	decodeJSON(t, lines[0], &first)
	if want := renderedFor(t, art, engine.Request{Query: sampleQuery, TotalBudget: 2000}); first.Rendered != want {
		t.Errorf("batch t01 rendered %q, want %q", first.Rendered, want)
	}
	r = mustRun(t, "query", art, "--batch", tasks, "--render")
	if !strings.HasPrefix(r.stdout, "== t01\n8 skills for this task") || strings.Count(r.stdout, "\n== ") != len(ids)-1 {
		t.Errorf("batch --render text output:\n%.600s", r.stdout)
	}

	for _, args := range [][]string{
		{"--skill-budget", "0"}, {"--total-budget", "-5"}, {"--total-budget", "99999999"}, {"--skill-budget", "x"},
	} {
		r := run(t, append([]string{"query", art, sampleQuery}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, strings.TrimPrefix(args[0], "-")) {
			t.Errorf("query %v: exit %d, stderr %q; want 2 and the flag named", args, r.code, r.stderr)
		}
	}
}

// startMCP runs `caskg mcp args...` in-process on pipes: it returns the writer of its stdin, the
// reader of its stdout, its stderr and the channel its exit code arrives on.
func startMCP(t *testing.T, args ...string) (*io.PipeWriter, *io.PipeReader, *bytes.Buffer, chan int) {
	t.Helper()
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	old := stdin
	stdin = inR
	t.Cleanup(func() { stdin = old })
	stderr := &bytes.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := Run(append([]string{"mcp"}, args...), outW, stderr)
		outW.Close()
		done <- code
	}()
	return inW, outR, stderr, done
}

// mcpSession connects an SDK client to `caskg mcp args...` run in-process over pipes, and
// returns it with a function that closes it and returns the command's exit code and stderr.
func mcpSession(t *testing.T, args ...string) (*mcp.ClientSession, func() (int, string)) {
	t.Helper()
	inW, outR, stderr, done := startMCP(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		inW.Close()
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
	}
	var once sync.Once
	var code int
	stop := func() (int, string) {
		once.Do(func() {
			cs.Close() // closes inW: the server reads EOF and returns
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("caskg mcp did not exit after the client closed its stdin")
			}
		})
		return code, stderr.String()
	}
	t.Cleanup(func() { stop() })
	return cs, stop
}

// checkToolsAndRetrieve wants the five tools of caskg mcp from cs and a retrieve_skills whose
// text is what `caskg query --render` prints for art; it returns that call's result.
func checkToolsAndRetrieve(ctx context.Context, t *testing.T, cs *mcp.ClientSession, art, over string) *mcp.CallToolResult {
	t.Helper()
	names := testlib.ToolNames(testlib.Tools(t, ctx, cs))
	slices.Sort(names)
	if want := []string{"get_skill", "graph_info", "report_skill_use", "retrieve_skills", "skill_neighbors"}; !slices.Equal(names, want) {
		t.Errorf("tools over %s %v, want %v", over, names, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve_skills", Arguments: map[string]any{"query": sampleQuery, "k": 6}})
	if err != nil || res.IsError {
		t.Fatalf("retrieve_skills over %s: %v %+v", over, err, res)
	}
	if got, want := res.Content[0].(*mcp.TextContent).Text, mustRun(t, "query", art, sampleQuery, "-k", "6", "--render").stdout; got != want {
		t.Errorf("retrieve_skills over %s differs from query --render:\n%s\nwant:\n%s", over, got, want)
	}
	return res
}

func TestMCPStdio(t *testing.T) {
	art := buildSample(t)
	cs, stop := mcpSession(t, art, "--library", sampleLib)
	ctx := context.Background()

	res := checkToolsAndRetrieve(ctx, t, cs, art, "stdio")
	var out struct{ Results []queryResult }
	b, _ := json.Marshal(res.StructuredContent)
	decodeJSON(t, string(b), &out)
	var q struct{ Results []queryResult }
	decodeJSON(t, mustRun(t, "query", art, sampleQuery, "-k", "6", "--json").stdout, &q)
	if !slices.EqualFunc(out.Results, q.Results, func(a, b queryResult) bool {
		return a.Name == b.Name && a.Score == b.Score && a.SeedRank == b.SeedRank && len(a.Via) == len(b.Via)
	}) {
		t.Errorf("retrieve_skills results %+v, query --json %+v", out.Results, q.Results)
	}

	// get_skill serves the library's file.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_skill", Arguments: map[string]any{"name": "find-lamp"}})
	file, _ := os.ReadFile(filepath.Join(sampleLib, "find-lamp", "SKILL.md"))
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != string(file) {
		t.Errorf("get_skill(find-lamp): %v %+v", err, res)
	}
	// A bad call is a tool error, and the server goes on.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_skill", Arguments: map[string]any{"name": "fnd-lamp"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "find-lamp") {
		t.Errorf("get_skill(fnd-lamp): %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "graph_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Errorf("graph_info after a bad call: %v %+v", err, res)
	}

	code, stderr := stop()
	if code != 0 {
		t.Errorf("exit %d after the client hung up; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "caskg mcp: serving "+art+" (96 skills") || !strings.Contains(stderr, "96 of 96 skills") {
		t.Errorf("stderr does not say what is served:\n%s", stderr)
	}
}

// TestMCPProcess runs `caskg mcp` as a child process over its real stdin and stdout (this test
// binary, re-entered through TestMCPHelperProcess) with the SDK's command transport.
func TestMCPProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	art := buildSample(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPHelperProcess$", "--", "mcp", art)
	cmd.Env = append(os.Environ(), "CASKG_MCP_HELPER=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve_skills", Arguments: map[string]any{"query": sampleQuery}})
	if err != nil || res.IsError {
		t.Fatalf("retrieve_skills: %v %+v", err, res)
	}
	if got, want := res.Content[0].(*mcp.TextContent).Text, mustRun(t, "query", art, sampleQuery, "--render").stdout; got != want {
		t.Errorf("retrieve_skills over a process differs from query --render:\n%s", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_neighbors", Arguments: map[string]any{"name": "no-such-skill-at-all"}})
	if err != nil || !res.IsError {
		t.Errorf("skill_neighbors(no-such-skill-at-all): %v %+v", err, res)
	}
	// Close closes the child's stdin and waits for it to exit (else it kills it).
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v; stderr:\n%s", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() || time.Since(start) > 4*time.Second {
		t.Errorf("the server did not exit cleanly on EOF: %v after %v; stderr:\n%s", cmd.ProcessState, time.Since(start), stderr.String())
	}
}

// TestMCPHelperProcess is the child of TestMCPProcess: it runs the command line after "--".
func TestMCPHelperProcess(t *testing.T) {
	if os.Getenv("CASKG_MCP_HELPER") != "1" {
		t.Skip("run by TestMCPProcess")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Run(args, os.Stdout, os.Stderr))
}

func TestMCPBadInvocations(t *testing.T) {
	art := buildSample(t)
	notArtifact := filepath.Join(t.TempDir(), "x.skg")
	if err := os.WriteFile(notArtifact, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFails(t, []failCase{
		{"no artifact", []string{"mcp"}, 2, "want exactly one ARTIFACT"},
		{"two artifacts", []string{"mcp", art, art}, 2, "want exactly one ARTIFACT"},
		{"not an artifact", []string{"mcp", notArtifact}, 1, "not a caskg artifact"},
		{"missing artifact", []string{"mcp", filepath.Join(t.TempDir(), "missing.skg")}, 1, "missing.skg"},
		{"missing library", []string{"mcp", art, "--library", filepath.Join(t.TempDir(), "nope")}, 1, "library"},
		{"empty library", []string{"mcp", art, "--library", t.TempDir()}, 1, "empty library"},
		{"port without http", []string{"mcp", art, "--port", "80"}, 2, "port"},
	})
	if r := mustRun(t, "mcp", "-h"); !strings.Contains(r.stdout, "-library") {
		t.Errorf("mcp -h does not list --library:\n%s", r.stdout)
	}
	if r := mustRun(t, "help"); !strings.Contains(r.stdout, "mcp ") {
		t.Errorf("help does not list mcp:\n%s", r.stdout)
	}
}

// TestMCPMalformedLines drives `caskg mcp` in raw lines: a line that is not JSON gets -32700
// and the initialize after it its result, a batch gets -32600 and the server goes on, and a
// request sent just before the input ends is still answered before the command exits 0.
func TestMCPMalformedLines(t *testing.T) {
	art := buildSample(t)
	inW, outR, stderr, done := startMCP(t, art)
	t.Cleanup(func() { inW.Close(); outR.Close() })
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 16<<20)
	recv := func() string {
		t.Helper()
		if !out.Scan() {
			t.Fatalf("no reply: %v; stderr:\n%s", out.Err(), stderr.String())
		}
		return out.Text()
	}
	send := func(s string) { go inW.Write([]byte(s)) }

	send("not json\n" + `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	steps := []struct{ name, want string }{
		{"not json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON (invalid character 'o' in literal null (expecting 'u'))"}}`},
		{"initialize", `{"jsonrpc":"2.0","id":1,"result":{"capabilities"`},
	}
	for _, st := range steps {
		if got := recv(); !strings.HasPrefix(got, st.want) {
			t.Errorf("%s: got %.300s\nwant %s", st.name, got, st.want)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `[{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n")
	if got, want := recv(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported; send one JSON-RPC message per line"}}`; got != want {
		t.Errorf("batch: got %s\nwant %s", got, want)
	}
	go func() {
		inW.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_skill","arguments":{"name":"` + strings.Repeat("é", 100) + `"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"retrieve_skills","arguments":{"query":"` + sampleQuery + `"}}}` + "\n"))
		inW.Close()
	}()
	// The server answers requests concurrently, so the two replies may come in either order
	// (JSON-RPC matches them by id): both must come before the exit.
	replies := map[string]string{}
	for range 2 {
		got := recv()
		id, _, _ := strings.Cut(strings.TrimPrefix(got, `{"jsonrpc":"2.0","id":`), ",")
		replies[id] = got
	}
	if got, want := replies["3"], `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"unknown skill \"`+strings.Repeat("é", 40)+`…\", and no name is close to it; call retrieve_skills to search by task"}],"isError":true}}`; got != want {
		t.Errorf("bad name: got %s\nwant %s", got, want)
	}
	if got := replies["4"]; !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"8 skills for this task`) {
		t.Errorf("request before EOF: got %.300s", got)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
	}
}

// TestMCPFeedback records a report through caskg mcp --feedback FILE --feedback-query-text.
func TestMCPFeedback(t *testing.T) {
	art := buildSample(t)
	log := filepath.Join(t.TempDir(), "feedback.jsonl")
	cs, stop := mcpSession(t, art, "--feedback", log, "--feedback-query-text")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "report_skill_use",
		Arguments: map[string]any{"query": "heat some egg", "used": []string{"heat-object-in-microwave"}, "outcome": "success"}})
	if err != nil || res.IsError {
		t.Fatalf("report_skill_use: %v %+v", err, res)
	}
	if code, stderr := stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	traces, err := builder.ReadTraces(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || !cmp.Equal(traces[0].Skills, []string{"heat-object-in-microwave"}) {
		t.Errorf("traces %+v", traces)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), `"task":"heat some egg"`) {
		t.Errorf("--feedback-query-text did not store the task:\n%s", b)
	}
}
