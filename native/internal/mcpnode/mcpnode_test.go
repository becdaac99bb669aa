package mcpnode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReferenceServers runs the pinned reference servers under the pinned Node with the
// TypeScript client, in both of the driver's modes: what the gateway's tests stand on.
func TestReferenceServers(t *testing.T) {
	e := Find(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	everything := e.Server("server-everything", "stdio")
	answers := e.Run(t, Target{Command: everything[0], Args: everything[1:]}, time.Minute,
		Step{Op: "listTools"}, Step{Op: "callTool", Name: "echo", Arguments: map[string]any{"message": "hi"}},
		Step{Op: "callTool", Name: "no_such_tool"})
	tools, err := answers[1].Tools()
	if err != nil || !slices.ContainsFunc(tools, func(tl Tool) bool { return tl.Name == "echo" }) {
		t.Errorf("server-everything tools: %v %v", tools, err)
	}
	if res, err := answers[2].Call(); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "Echo: hi" {
		t.Errorf("echo: %+v %v", res, err)
	}
	// The TypeScript SDK's server answers an unknown tool with a tool error, not a JSON-RPC one.
	if res, err := answers[3].Call(); err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "not found") {
		t.Errorf("an unknown tool: %+v %v", res, err)
	}

	fsys := e.Server("server-filesystem", dir)
	c := e.Start(t, Target{Command: fsys[0], Args: fsys[1:]}, time.Minute)
	res, err := c.Do(Step{Op: "callTool", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(dir, "a.txt")}}).Call()
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hello\n" {
		t.Errorf("read_text_file: %+v %v", res, err)
	}
	res, err = c.Do(Step{Op: "callTool", Name: "read_text_file", Arguments: map[string]any{"path": "/etc/passwd"}}).Call()
	if err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "denied") {
		t.Errorf("read_text_file outside the allowed folder: %+v %v", res, err)
	}
	if a := c.Do(Step{Op: "nonsense"}); a.OK || !strings.Contains(a.Error, "unknown op") {
		t.Errorf("an unknown step: %+v", a)
	}
	c.Close()
}
