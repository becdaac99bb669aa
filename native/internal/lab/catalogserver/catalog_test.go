package catalogserver

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sharedData holds the dev sets, beside the repository; it is read in place, never copied.
const sharedData = "../../../../../shared/data/eval"

// devSets are the dev sets with a tools.json (skillsbench's catalog is a SKILL.md tree).
var devSets = []string{"toollinkos", "sealtools", "nestful"}

func devCatalog(tb testing.TB, set string) *Catalog {
	tb.Helper()
	file := sharedData + "/" + set + "/tools.json"
	if _, err := os.Stat(file); err != nil {
		tb.Skipf("dev set not available: %v", err)
	}
	c, err := Load(file)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestParse(t *testing.T) {
	const tool = `{"name": "a", "inputSchema": {"type": "object"}}`
	tests := []struct {
		name, in string
		want     []string // tool names
		err      string   // a substring of the error
	}{
		{"tools/list result", `{"tools": [` + tool + `, {"name": "b"}]}`, []string{"a", "b"}, ""},
		{"JSON-RPC response", `{"jsonrpc": "2.0", "id": 1, "result": {"tools": [` + tool + `]}}`, []string{"a"}, ""},
		{"array", "\xef\xbb\xbf[" + tool + "]", []string{"a"}, ""},
		{"JSON Lines", tool + "\n\n" + `{"name": "b"}` + "\r\n", []string{"a", "b"}, ""},
		{"one tool", tool, []string{"a"}, ""},
		{"empty", " \n", nil, "f.json: no tools"},
		{"empty list", `{"tools": []}`, nil, "no tools"},
		{"not a catalog", `"tools"`, nil, "f.json:1: not a tool catalog (got a string)"},
		{"tools not an array", `{"tools": {}}`, nil, `"tools" is not an array (got an object)`},
		{"syntax error line", "{\"tools\": [\n" + tool + ",\n{\"name\": }]}", nil, "f.json:3: invalid json"},
		{"JSON Lines syntax error", tool + "\n{\"name\": \"b\"\n", nil, "f.json:2: invalid json"},
		{"tool not an object", `[` + tool + `, 3]`, nil, "f.json:1: tool 2: not an object (got a number)"},
		{"no name", "[\n" + tool + ",\n{\"description\": \"x\"}]", nil, `f.json:3: tool 2: "name" missing`},
		{"blank name", `[{"name": " "}]`, nil, `"name" missing or not a non-empty string`},
		{"bad field", `[{"name": "a", "description": 3}]`, nil, `tool 1: "a": json: cannot unmarshal number`},
		{"repeated name", "[\n" + tool + ",\n" + tool + "]", nil, `f.json:3: tool "a" repeats the tool of line 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in), "f.json")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "catalogserver: ") {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range c.Tools {
				got = append(got, tl.Name)
			}
			if !cmp.Equal(got, tt.want) {
				t.Errorf("tools %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseKeepsFields(t *testing.T) {
	in := `{"tools": [{"name": "a", "title": "A", "description": "d", "inputSchema": {"type": "object",
		"properties": {"n": {"type": "int"}}}, "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true},
		"_meta": {"field": "x"}, "unknown": 1}]}`
	c, err := Parse([]byte(in), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	tl := c.Tools[0]
	if tl.Title != "A" || tl.Description != "d" || tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || tl.Meta["field"] != "x" {
		t.Errorf("fields lost: %+v", tl)
	}
	want := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "int"}}}
	if !cmp.Equal(tl.InputSchema, any(want)) {
		t.Errorf("input schema %v, want it as given", tl.InputSchema)
	}
	wantNotes := []Note{{Tool: "a", Field: "inputSchema.properties.n", Msg: `type "int" read as "integer"`}}
	if !cmp.Equal(c.Notes, wantNotes) {
		t.Errorf("notes %v, want %v", c.Notes, wantNotes)
	}
}

func TestNormalize(t *testing.T) {
	obj := map[string]any{"type": "object"}
	str := map[string]any{"type": "string"}
	tests := []struct {
		name    string
		in      any
		input   bool
		want    any
		msg     string
		changed bool
	}{
		{"object", obj, true, obj, "", false},
		{"missing input", nil, true, obj, `missing; served as {"type": "object"}`, true},
		{"missing output", nil, false, nil, "", false},
		{"input not an object", []any{1}, true, obj, `not a schema object (got array); served as {"type": "object"}`, true},
		{"output not an object", "str", false, nil, "not a schema object (got string); dropped", true},
		{"no type", map[string]any{"properties": map[string]any{}}, true,
			map[string]any{"type": "object", "properties": map[string]any{}}, `no "type"; served with "type": "object"`, true},
		{"type list", map[string]any{"type": []any{"object", "null"}}, true, obj, `"type" ["object","null"]; served as "object"`, true},
		{"dict", map[string]any{"type": "dict"}, true, obj, `"type" "dict"; served as "object"`, true},
		{"string input", str, true, map[string]any{"type": "object", "properties": map[string]any{"input": str}, "required": []any{"input"}},
			`"type" "string" is not an object; wrapped as property "input"`, true},
		{"array output", map[string]any{"type": "array"}, false,
			map[string]any{"type": "object", "properties": map[string]any{"result": map[string]any{"type": "array"}}, "required": []any{"result"}},
			`"type" "array" is not an object; wrapped as property "result"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			norm := normalizeOutput
			if tt.input {
				norm = normalizeInput
			}
			got, notes := norm(tt.in)
			var gotAny any
			if got != nil {
				gotAny = got
			}
			if !cmp.Equal(gotAny, tt.want) {
				t.Errorf("schema %v, want %v", got, tt.want)
			}
			var msg string
			changed := false
			for _, n := range notes {
				if n.Changed {
					msg, changed = n.Msg, true
				}
			}
			if msg != tt.msg || changed != tt.changed {
				t.Errorf("note %q (changed %v), want %q (%v)", msg, changed, tt.msg, tt.changed)
			}
		})
	}
}

// TestDevSetNotes pins what serving each dev set takes: nothing changed anywhere; ToolLinkOS
// spells 292 property types the Python way and they are kept.
func TestDevSetNotes(t *testing.T) {
	want := map[string]map[string]int{
		"toollinkos": {`type "int" read as "integer"`: 189, `type "float" read as "number"`: 71,
			`type "bool" read as "boolean"`: 16, `type "dict" read as "object"`: 9, `type "list" read as "array"`: 7},
		"sealtools": {},
		"nestful":   {},
	}
	tools := map[string]int{"toollinkos": 573, "sealtools": 4076, "nestful": 133}
	for _, set := range devSets {
		t.Run(set, func(t *testing.T) {
			c := devCatalog(t, set)
			if len(c.Tools) != tools[set] {
				t.Errorf("%d tools, want %d", len(c.Tools), tools[set])
			}
			got := map[string]int{}
			for _, n := range c.Notes {
				if n.Changed {
					t.Errorf("changed: %v", n)
				}
				got[n.Msg]++
			}
			if !cmp.Equal(got, want[set]) {
				t.Errorf("notes %v, want %v", got, want[set])
			}
		})
	}
}

// TestNameNotes: names MCP does not allow are served as they are, with a note.
func TestNameNotes(t *testing.T) {
	long := strings.Repeat("n", 129)
	in := `[{"name": "ok_name-1.2"}, {"name": "odd name!"}, {"name": "` + long + `"}, {"name": "ünïcode"}]`
	c, err := Parse([]byte(in), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []Note{
		{Tool: "odd name!", Field: "name", Msg: "name has characters MCP does not allow in tool names"},
		{Tool: long, Field: "name", Msg: "name longer than 128 characters (129)"},
		{Tool: "ünïcode", Field: "name", Msg: "name has characters MCP does not allow in tool names"},
	}
	var got []Note
	for _, n := range c.Notes {
		if n.Field == "name" {
			got = append(got, n)
		}
	}
	if !cmp.Equal(got, want) || len(c.Tools) != 4 {
		t.Errorf("%d tools, name notes %v, want 4 and %v", len(c.Tools), got, want)
	}
	if _, err := NewServer(c, Options{}); err != nil {
		t.Errorf("the SDK refuses a name: %v", err)
	}
}
