package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The configuration's filters are the engine's matcher: '*' crosses '/', case does not count.
func TestFiltersHold(t *testing.T) {
	type in struct {
		allow, deny []string
		tool        string
	}
	keeps := func(c in) bool { return filtered(c.allow, c.deny, c.tool) }
	table.Run(t, "filtered", keeps, []table.Case[in, bool]{
		{"star crosses slash", in{nil, []string{"*delete*"}, "admin/delete_user"}, false},
		{"namespaced star crosses slash", in{nil, []string{"s2__*delete*"}, "s2__admin/delete_user"}, false},
		{"case of the name", in{nil, []string{"*delete*"}, "Delete_All"}, false},
		{"case of the pattern", in{nil, []string{"*DELETE*"}, "delete_all"}, false},
		{"question mark crosses slash", in{nil, []string{"a?b"}, "a/b"}, false},
		{"allow ignores case", in{[]string{"Read*"}, nil, "read_file"}, true},
		{"allow leaves others out", in{[]string{"read*"}, nil, "write_file"}, false},
		{"deny wins", in{[]string{"*"}, []string{"*DROP*"}, "db.drop_table"}, false},
		{"kept", in{nil, []string{"*delete*"}, "read_file"}, true},
	})
}

func TestValidToolName(t *testing.T) {
	table.Run(t, "validToolName", validToolName, []table.Case[string, bool]{
		{"letters and underscores", "read_file", true},
		{"mixed case and digits", "s__DATA_EXPORT_v2", true},
		{"dots", "admin.tools.list", true},
		{"hyphen", "a-b", true},
		{"128 characters", strings.Repeat("a", 128), true},
		{"129 characters", strings.Repeat("a", 129), false},
		{"empty", "", false},
		{"slash", "admin/delete_user", false},
		{"space", "two words", false},
		{"comma", "a,b", false},
		{"accented letter", "caf\u00e9", false},
		{"the Kelvin sign, which folds to k", "\u212Aill", false},
		{"tab", "tab\t", false},
	})
}

// denyServer offers tools whose names try to slip past "*delete*": by case, by a '/', by a
// character outside MCP's tool names.
func denyServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s2"}, nil)
	for _, n := range []string{"Delete_All", "DELETE-USER", "admin/delete_user", "admin/list_users", "read", "\u212Aill"} {
		addTool(srv, n, "Tool "+n+".", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return text("ran " + n), nil
		})
	}
	return srv
}

// No spelling of a denied tool is listed, found or callable, and a tool whose name MCP does not
// allow is neither listed nor callable.
func TestDeniedToolsStayDenied(t *testing.T) {
	cfg := &Config{Servers: []ServerConfig{{Name: "s2", Command: "unused", Timeout: 2 * time.Second,
		Deny: []string{"*delete*"}}}, Deny: []string{"S2__*kill*"}}
	g := startGateway(t, cfg, Options{dial: inMemory(t, map[string]func() *mcp.Server{"s2": denyServer})})
	if d := cmp.Diff([]string{"s2__read"}, g.cat.Load().names()); d != "" {
		t.Errorf("catalog (-want +got):\n%s", d)
	}
	fc := connect(t, g)
	_, out := fc.search(t, "delete a user", 10)
	if d := cmp.Diff([]string{"s2__read"}, names(out)); d != "" {
		t.Errorf("search (-want +got):\n%s", d)
	}
	for _, name := range []string{"s2__Delete_All", "s2__delete_all", "s2__DELETE-USER", "s2__admin/delete_user",
		"S2__ADMIN/DELETE_USER", "s2__admin/list_users", "s2__\u212Aill", "s2__kill"} {
		res := fc.callTool(t, name, nil)
		if txt := testlib.ToolText(res); !res.IsError || !strings.Contains(txt, "no tool") {
			t.Errorf("call of %s: %v %q", name, res.IsError, txt)
		}
	}
	if res := fc.callTool(t, "s2__read", nil); res.IsError || testlib.ToolText(res) != "ran read" {
		t.Errorf("s2__read: %v %q", res.IsError, testlib.ToolText(res))
	}
}

// FuzzDenyHoldsOnCatalog builds a catalog with the fuzzed tool name (and its other spellings)
// beside fixed ones, under a server deny and a top-level deny, and checks each catalog entry
// against a reference written without the matcher: a name the catalog keeps (the only names
// call_tool runs) is a valid MCP tool name whose lower case has neither denied word.
func FuzzDenyHoldsOnCatalog(f *testing.F) {
	for _, s := range []string{"admin/delete_user", "Delete_All", "DELETE", "dEleTe", "x.delete.y", "kill", "K\u212Aill", "read", ""} {
		f.Add(s)
	}
	cfg := &Config{Servers: []ServerConfig{{Name: "s2", Deny: []string{"*delete*"}}}, Deny: []string{"S2__*KILL*"}}
	f.Fuzz(func(t *testing.T, tool string) {
		spellings := []string{tool, strings.ToUpper(tool), strings.ToLower(tool), swapCase(tool), "admin/" + tool, "read"}
		var tools []*mcp.Tool
		for _, s := range spellings {
			tools = append(tools, &mcp.Tool{Name: s})
		}
		c, err := buildCatalog(cfg, map[string][]*mcp.Tool{"s2": tools})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range c.entries {
			low := strings.ToLower(e.Name)
			if !validToolName(e.Name) || strings.Contains(low, "delete") || strings.Contains(low, "kill") {
				t.Fatalf("catalog keeps %q", e.Name)
			}
			if c.byName[e.Name] != e {
				t.Fatalf("%q is listed but not callable", e.Name)
			}
		}
		for _, s := range spellings {
			low := strings.ToLower(s)
			if e := c.byName["s2__"+s]; e != nil && (strings.Contains(low, "delete") || strings.Contains(low, "kill")) {
				t.Fatalf("denied %q is callable", s)
			}
		}
	})
}

// swapCase turns upper-case letters to lower and lower to upper.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if l := strings.ToLower(string(r)); l != string(r) {
			return []rune(l)[0]
		}
		return []rune(strings.ToUpper(string(r)))[0]
	}, s)
}
