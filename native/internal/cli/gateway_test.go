package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

func TestGatewayUsage(t *testing.T) {
	dir := t.TempDir()
	bad := fixture.WriteFile(t, dir, "servers.json", `{"mcpServers": {"fs": {"command": "x", "args": [1]}}}`)
	good := fixture.WriteFile(t, dir, "good.json", `{"mcpServers": {"fs": {"command": "/nonexistent/mcp-server"}}}`)
	weak := filepath.Join(dir, "weak.txt")
	if err := os.WriteFile(weak, []byte("alice hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CASKG_GATEWAY_TOKENS", "")
	checkFails(t, []failCase{
		{"no config", []string{"gateway", "--state-dir", dir}, 2, "caskg gateway: --config SERVERS.json is required"},
		{"no state", []string{"gateway", "--config", bad}, 2, "caskg gateway: --state-dir DIR is required"},
		{"flag slip", []string{"gateway", "--expos", "3"}, 2, "did you mean -expose?"},
		{"expose range", []string{"gateway", "--config", bad, "--state-dir", dir, "--expose", "1000"}, 2, "--expose 1000: must be in [0, 100]"},
		{"trace gap", []string{"gateway", "--config", bad, "--state-dir", dir, "--trace-gap", "0s"}, 2, "--trace-gap 0s: must be positive"},
		{"stray argument", []string{"gateway", "rolback"}, 2, `unexpected argument "rolback"; did you mean rollback?`},
		{"bad config", []string{"gateway", "--config", bad, "--state-dir", dir}, 1, "caskg gateway: servers.json:1:49: mcpServers.fs.args[0]: want a string, got a number"},
		{"rollback without dir", []string{"gateway", "rollback"}, 2, "--state-dir DIR is required"},
		// Bound beyond loopback without tokens: refused before any server starts (port 0, closed
		// at once; nothing connects).
		{"open bind without tokens", []string{"gateway", "--config", good, "--state-dir", dir, "--http", "0.0.0.0:0"}, 1,
			"is reachable beyond this machine and the gateway has no tokens: give --auth-tokens FILE"},
		{"weak token", []string{"gateway", "--config", good, "--state-dir", dir, "--http", "127.0.0.1:0", "--auth-tokens", weak}, 1,
			"weak.txt:1: client alice: the token has 7 characters, want 32 to 4096"},
		{"tokens on stdio", []string{"gateway", "--config", good, "--state-dir", dir, "--auth-tokens", weak}, 2,
			"--auth-tokens and --allowed-hosts are for --http"},
		{"trace rotate", []string{"gateway", "--config", good, "--state-dir", dir, "--trace-rotate-mb", "-1"}, 2, "--trace-rotate-mb -1: must be in [0, 1048576]"},
		{"start wait", []string{"gateway", "--config", good, "--state-dir", dir, "--start-wait", "-1s"}, 2, "--start-wait -1s: must not be negative"},
		{"max sessions", []string{"gateway", "--config", good, "--state-dir", dir, "--max-sessions", "0"}, 2, "--max-sessions 0: must be at least 1"},
	})
}

// TestGatewayStdio runs a whole gateway session on stdio in front of a server that cannot
// start: the front still answers, and health-like state shows in the search's note.
func TestGatewayStdio(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server", "timeout": "2s"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"ghost__x"}}}
not json
`)
	r := run(t, "gateway", "--config", cfg, "--state-dir", filepath.Join(dir, "state"))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{`"name":"search_tools"`, `"name":"call_tool"`, `"isError":true`, `server ghost is not available (`, `"code":-32700`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %s:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "caskg gateway: stopped") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(dir, "state")); err != nil || !fi.IsDir() {
		t.Errorf("state folder not made: %v", err)
	}
}
