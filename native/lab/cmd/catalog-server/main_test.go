package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/lab/catalogserver"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/table"
)

const sealTools = "../../../../../shared/data/eval/sealtools/tools.json"

const tinyCatalog = `[{"name": "ping", "description": "Answer.", "inputSchema": {"type": "object", "required": ["n"],
  "properties": {"n": {"type": "int"}}}, "outputSchema": {"type": "object", "properties": {"pong": {"type": "string"}}}}]`

// binary builds the command once per test run, into builtDir.
var builtDir string

var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "catalog-server")
	if err != nil {
		return "", err
	}
	builtDir = dir
	exe := filepath.Join(dir, "catalog-server")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", exe, ".").CombinedOutput()
	if err != nil {
		return "", &buildError{err, out}
	}
	return exe, nil
})

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + ": " + string(e.out) }

func build(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts the command")
	}
	exe, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestMain removes the built command when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func writeTiny(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(file, []byte(tinyCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestStdio runs the command over its stdin and stdout with the SDK's command transport,
// lists Seal-Tools through its pages and gets the same answer as the package in process.
func TestStdio(t *testing.T) {
	exe := build(t)
	if _, err := os.Stat(sealTools); err != nil {
		t.Skipf("dev set not available: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "--tools", sealTools, "--page-size", "500")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
	}
	var tools []*mcp.Tool
	pages := 0
	params := &mcp.ListToolsParams{}
	for pages < 100 {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		tools = append(tools, res.Tools...)
		if params.Cursor = res.NextCursor; params.Cursor == "" {
			break
		}
	}
	if len(tools) != 4076 || pages != 9 {
		t.Errorf("%d tools in %d pages, want 4076 in 9", len(tools), pages)
	}

	c, err := catalogserver.Load(sealTools)
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalogserver.NewServer(c, catalogserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local := testlib.InMemory(t, ctx, s)
	for _, tl := range []*mcp.Tool{tools[0], tools[2000], tools[4075]} {
		p := &mcp.CallToolParams{Name: tl.Name, Arguments: catalogserver.ExampleArgs(tl.InputSchema)}
		remote, err := cs.CallTool(ctx, p)
		if err != nil || remote.IsError {
			t.Fatalf("%s: %v %+v", tl.Name, err, remote)
		}
		want, err := local.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := jsonOf(t, remote), jsonOf(t, want); a != b {
			t.Errorf("%s: over stdio %s, in process %s", tl.Name, a, b)
		}
	}

	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("the command did not exit cleanly when its input ended: %v; stderr:\n%s", cmd.ProcessState, stderr.String())
	}
	if !strings.Contains(stderr.String(), "catalog-server: 4076 tools from "+sealTools) {
		t.Errorf("stderr does not say what is served:\n%s", stderr.String())
	}
}

// TestHTTP serves streamable HTTP on a free loopback port, calls through it, and stops the
// command with SIGTERM.
func TestHTTP(t *testing.T) {
	exe := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "--tools", writeTiny(t), "--http", "127.0.0.1:0")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	for url == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the command ended before listening")
			}
			if u, ok := strings.CutPrefix(line, "catalog-server: listening on "); ok {
				url = u
			}
		case <-ctx.Done():
			t.Fatal("no listening line within a minute")
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"n": 1}})
	if err != nil || res.IsError {
		t.Fatalf("ping: %v %+v", err, res)
	}
	if _, ok := res.StructuredContent.(map[string]any)["pong"].(string); !ok {
		t.Errorf("structured content %v has no pong", res.StructuredContent)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{"n": "one"}})
	if err != nil || !res.IsError {
		t.Errorf("ping with a string n: %v %+v", err, res)
	}
	cs.Close()

	// The SDK's DNS rebinding protection holds: a request for another host is refused.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("request for host evil.example: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range lines { // drain, so that the command never blocks on stderr
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-ctx.Done():
		t.Error("the command did not stop on SIGTERM")
	}
}

func TestRunErrors(t *testing.T) {
	tiny := writeTiny(t)
	runArgs := func(args []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return run(ctx, args, io.Discard)
	}
	table.Errors(t, "run", runArgs, []table.Case[[]string, string]{
		{"no tools flag", nil, "usage: catalog-server --tools FILE"},
		{"extra argument", []string{"--tools", tiny, "x"}, "usage: catalog-server --tools FILE"},
		{"unknown flag", []string{"--tool", tiny}, "flag provided but not defined: -tool"},
		{"missing file", []string{"--tools", "/nonexistent/tools.json"}, "catalogserver: open /nonexistent/tools.json"},
		{"page size", []string{"--tools", tiny, "--page-size", "0"}, "--page-size must be at least 1"},
		{"fail rate", []string{"--tools", tiny, "--fail-rate", "2"}, "catalogserver: fail rate 2 is not between 0 and 1"},
		{"bad address", []string{"--tools", tiny, "--http", "256.0.0.1:x"}, "listen tcp"},
	})
}

func jsonOf(t *testing.T, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
