package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/mcpserver"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/mcpcore"
	"github.com/caskg/caskg/wasm/service"
)

const (
	sampleLib   = fixture.SampleLib
	sampleTasks = fixture.SampleTasks
)

// buildGraph builds an artifact from the SKILL.md library in dir, as `caskg build` does
// without the semantic channel.
func buildGraph(t *testing.T, dir string) *graphs.Graph {
	t.Helper()
	lib, err := ingest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return testlib.Graph(t, builder.Input{Skills: lib.Skills, Options: new(builder.DefaultOptions())})
}

var sampleGraph struct {
	once sync.Once
	g    *graphs.Graph
}

func sample(t *testing.T) *graphs.Graph {
	t.Helper()
	sampleGraph.once.Do(func() { sampleGraph.g = buildGraph(t, sampleLib) })
	if sampleGraph.g == nil {
		t.Fatal("sample graph failed to build")
	}
	return sampleGraph.g
}

// connect starts a server over g with opt and connects an SDK client to it in memory.
func connect(t *testing.T, g *graphs.Graph, opt mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(g, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return testlib.InMemory(t, ctx, srv.MCP())
}

// call calls a tool and returns its result; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", tool, args, err)
	}
	return res
}

// text is a result's single text content.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// structured decodes a successful result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(t, res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// wantError checks that res is a tool error whose message contains every one of want.
func wantError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("no tool error; result %s", text(t, res))
		return
	}
	msg := text(t, res)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

func TestListTools(t *testing.T) {
	cs := connect(t, sample(t), mcpserver.Options{})
	tools := testlib.Tools(t, context.Background(), cs)
	names := testlib.ToolNames(tools)
	for _, tool := range tools {
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: description, input or output schema missing", tool.Name)
		}
		// report_skill_use appends to the feedback log: neither read-only nor idempotent.
		readOnly := tool.Name != "report_skill_use"
		if a := tool.Annotations; a == nil || a.ReadOnlyHint != readOnly || a.IdempotentHint != readOnly || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want read-only %v and closed-world", tool.Name, a, readOnly)
		}
	}
	slices.Sort(names)
	if want := []string{"get_skill", "graph_info", "report_skill_use", "retrieve_skills", "skill_neighbors"}; !cmp.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if cs.InitializeResult().Instructions == "" {
		t.Error("no server instructions")
	}
}

// retrieved is retrieve_skills' structured content.
type retrieved struct {
	Query   string `json:"query"`
	Results []struct {
		Rank        int          `json:"rank"`
		Name        string       `json:"name"`
		Score       float64      `json:"score"`
		SeedRank    int          `json:"seed_rank"`
		Graph       bool         `json:"graph"`
		Description string       `json:"description"`
		Source      string       `json:"source"`
		Via         []engine.Via `json:"via"`
	} `json:"results"`
}

// sampleQueries are the sample task texts.
func sampleQueries(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(sampleTasks)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var task struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &task); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, task.Query)
	}
	return qs
}

// TestRetrieveSkills holds the tool to the engine: the same ranking, scores, seed ranks and
// evidence, and the engine's rendered bundle as the text, for every sample task and a range
// of options.
func TestRetrieveSkills(t *testing.T) {
	g := sample(t)
	eng := engine.New(g)
	cs := connect(t, g, mcpserver.Options{})
	type opts struct {
		args map[string]any
		req  engine.Request
	}
	variants := []opts{
		{map[string]any{}, engine.Request{Render: true}},
		{map[string]any{"k": 3}, engine.Request{K: 3, Render: true}},
		{map[string]any{"k": 12, "render": false}, engine.Request{K: 12}},
		{map[string]any{"skill_budget": 300, "total_budget": 1500}, engine.Request{Render: true, SkillBudget: 300, TotalBudget: 1500}},
		{map[string]any{"no_graph": true, "k": 5}, engine.Request{NoGraph: true, K: 5, Render: true}},
		{map[string]any{"allow": []string{"*-object*", "find-*"}, "deny": []string{"heat-*"}, "k": 5},
			engine.Request{K: 5, Render: true, Filter: engine.Filter{Allow: []string{"*-object*", "find-*"}, Deny: []string{"heat-*"}}}},
		{map[string]any{"deny": []string{"*microwave*"}, "render": false}, engine.Request{Filter: engine.Filter{Deny: []string{"*microwave*"}}}},
		{map[string]any{"namespaces": []string{"kitchen"}}, engine.Request{Render: true, Filter: engine.Filter{Namespaces: []string{"kitchen"}}}},
		{map[string]any{"min_score": 0.5, "render": false}, engine.Request{MinScore: 0.5}},
	}
	queries := sampleQueries(t)
	if len(queries) < 10 {
		t.Fatalf("%d sample tasks", len(queries))
	}
	for i, q := range queries {
		v := variants[i%len(variants)]
		args := map[string]any{"query": q}
		for k, x := range v.args {
			args[k] = x
		}
		req := v.req
		req.Query = q
		want, err := eng.Query(req)
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, cs, "retrieve_skills", args)
		var got retrieved
		structured(t, res, &got)
		if got.Query != q || len(got.Results) != len(want.Results) {
			t.Fatalf("%q %v: query %q, %d results; want %d", q, v.args, got.Query, len(got.Results), len(want.Results))
		}
		for j, r := range want.Results {
			h := got.Results[j]
			if h.Rank != j+1 || h.Name != r.Name || h.Score != r.Score || h.SeedRank != r.SeedRank || h.Graph != r.Graph ||
				h.Description != g.Description(r.ID) || h.Source != g.Source(r.ID) || !cmp.Equal(h.Via, r.Via) {
				t.Errorf("%q %v: result %d = %+v, want %+v", q, v.args, j+1, h, r)
			}
		}
		body := text(t, res)
		if req.Render {
			if body != want.Rendered {
				t.Errorf("%q %v: text differs from the engine's rendering:\n%s", q, v.args, cmp.Diff(want.Rendered, body))
			}
			continue
		}
		// The short list: a numbered line per skill, in rank order.
		for j, r := range want.Results {
			line := strings.Split(body, "\n")
			if !slices.ContainsFunc(line, func(l string) bool { return strings.HasPrefix(l, itoa(j+1)+". "+r.Name+" ("+engine.Why(r)+"): ") }) {
				t.Errorf("%q: short list lacks %d. %s (%s):\n%s", q, j+1, r.Name, engine.Why(r), body)
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestBadArguments calls each tool with bad arguments: a tool error naming the field (and, for
// an unknown skill, the closest names), never a file's content, and the server lives on.
func TestBadArguments(t *testing.T) {
	cs := connect(t, sample(t), mcpserver.Options{Library: sampleLib})
	tests := []struct {
		tool string
		name string
		args any
		want []string
	}{
		{"retrieve_skills", "no query", map[string]any{}, []string{`field "query": required`}},
		{"retrieve_skills", "empty query", map[string]any{"query": ""}, []string{`field "query": empty`}},
		{"retrieve_skills", "blank query", map[string]any{"query": " \t\n"}, []string{`field "query": empty`}},
		{"retrieve_skills", "query not a string", map[string]any{"query": 42}, []string{`field "query": must be a string, not a number`}},
		{"retrieve_skills", "query too long", map[string]any{"query": strings.Repeat("egg ", 20000)}, []string{`field "query": 80000 characters, at most 8192`}},
		{"retrieve_skills", "k zero", map[string]any{"query": "egg", "k": 0}, []string{`field "k": 0 is outside [1, 100]`}},
		{"retrieve_skills", "k negative", map[string]any{"query": "egg", "k": -3}, []string{"k"}},
		{"retrieve_skills", "k over the limit", map[string]any{"query": "egg", "k": 101}, []string{"k"}},
		{"retrieve_skills", "k the engine's bound", map[string]any{"query": "egg", "k": 1000}, []string{"k"}},
		// Within the schema's characters, over the bytes: the handler refuses it.
		{"retrieve_skills", "query over the byte limit", map[string]any{"query": strings.Repeat("é", 4097)}, []string{`field "query": 8194 bytes, at most 8192`}},
		{"retrieve_skills", "k fractional", map[string]any{"query": "egg", "k": 2.5}, []string{`field "k": must be an integer, not 2.5`}},
		{"retrieve_skills", "k a string", map[string]any{"query": "egg", "k": "five"}, []string{`field "k": must be an integer, not a string`}},
		{"retrieve_skills", "min_score over", map[string]any{"query": "egg", "min_score": 1.5}, []string{`field "min_score": 1.5 is outside [0, 1]`}},
		{"retrieve_skills", "min_score a string", map[string]any{"query": "egg", "min_score": "high"}, []string{`field "min_score": must be a number, not a string`}},
		{"retrieve_skills", "render not a bool", map[string]any{"query": "egg", "render": "yes"}, []string{`field "render": must be true or false, not a string`}},
		{"retrieve_skills", "skill budget zero", map[string]any{"query": "egg", "skill_budget": 0}, []string{"skill_budget"}},
		{"retrieve_skills", "total budget negative", map[string]any{"query": "egg", "total_budget": -1}, []string{"total_budget"}},
		{"retrieve_skills", "total budget too large", map[string]any{"query": "egg", "total_budget": 1 << 30}, []string{"total_budget"}},
		{"retrieve_skills", "unknown argument", map[string]any{"query": "egg", "top_k": 3}, []string{`unknown argument "top_k"; the arguments are allow, deny, k, min_score, namespaces, no_graph, no_memory, query, render, skill_budget, total_budget`}},
		{"retrieve_skills", "allow not a list", map[string]any{"query": "egg", "allow": "heat-*"}, []string{`field "allow": must be an array of strings, not a string`}},
		{"retrieve_skills", "deny element not a string", map[string]any{"query": "egg", "deny": []any{"a*", 3}}, []string{`field "deny": element 1: must be a string, not a number`}},
		{"retrieve_skills", "allow element empty", map[string]any{"query": "egg", "allow": []string{""}}, []string{`field "allow": element 0: 0 characters, at least 1`}},
		{"retrieve_skills", "allow element too long", map[string]any{"query": "egg", "allow": []string{strings.Repeat("a", 257)}}, []string{`field "allow": element 0: 257 characters, at most 256`}},
		{"retrieve_skills", "allow element too many bytes", map[string]any{"query": "egg", "allow": []string{strings.Repeat("é", 200)}}, []string{`field "allow[0]": 400 bytes, at most 256`}},
		{"retrieve_skills", "namespaces too many", map[string]any{"query": "egg", "namespaces": make([]string, 101)}, []string{`field "namespaces": 101 elements, at most 100`}},
		{"retrieve_skills", "bad glob", map[string]any{"query": "egg", "deny": []string{"ok", "[x]"}}, []string{`field "deny[1]": '[', ']' and '\' are reserved`}},
		{"retrieve_skills", "namespace with __", map[string]any{"query": "egg", "namespaces": []string{"a__b"}}, []string{`field "namespaces[0]": a namespace has no "__"`}},
		{"get_skill", "no name", map[string]any{}, []string{"name"}},
		{"get_skill", "empty", map[string]any{"name": ""}, []string{"name"}},
		{"get_skill", "blank", map[string]any{"name": "   "}, []string{`field "name": empty`}},
		{"get_skill", "not a string", map[string]any{"name": []int{1}}, []string{`field "name": must be a string, not an array`}},
		{"get_skill", "too long", map[string]any{"name": strings.Repeat("a", 600)}, []string{`field "name": 600 characters, at most 512`}},
		{"get_skill", "typo", map[string]any{"name": "pick-up-objcet"}, []string{`unknown skill "pick-up-objcet"`, "closest names are: pick-up-object"}},
		{"get_skill", "words", map[string]any{"name": "find the lamp"}, []string{"find-lamp"}},
		{"get_skill", "nothing close", map[string]any{"name": "zzzzqqqq"}, []string{"no name is close", "retrieve_skills"}},
		{"get_skill", "a path", map[string]any{"name": "../../../graphs/sample/find-lamp/SKILL.md"}, []string{"unknown skill"}},
		{"get_skill", "an absolute path", map[string]any{"name": "/etc/passwd"}, []string{"unknown skill"}},
		{"get_skill", "unknown argument", map[string]any{"name": "find-lamp", "path": "/etc/passwd"}, []string{"path"}},
		{"skill_neighbors", "limit zero", map[string]any{"name": "pick-up-object", "limit": 0}, []string{"limit"}},
		{"skill_neighbors", "limit over the most", map[string]any{"name": "pick-up-object", "limit": 5000}, []string{"limit"}},
		{"skill_neighbors", "limit a string", map[string]any{"name": "pick-up-object", "limit": "ten"}, []string{`field "limit": must be an integer, not a string`}},
		{"skill_neighbors", "typo", map[string]any{"name": "pikc-up-object"}, []string{"pick-up-object"}},
		{"skill_neighbors", "no name", map[string]any{}, []string{"name"}},
		{"skill_neighbors", "limit huge", map[string]any{"name": "pick-up-object", "limit": json.Number("1" + strings.Repeat("0", 80))}, []string{`field "limit": 1000000000000000000000000000000000000000… is outside [1, 1000]`}},
		{"get_skill", "long unknown name", map[string]any{"name": strings.Repeat("q", 500)}, []string{`unknown skill "` + strings.Repeat("q", 40) + `…"`}},
		{"get_skill", "arguments not an object", json.RawMessage(`"x"`), []string{"arguments: must be an object, not a string"}},
		{"graph_info", "an argument", map[string]any{"x": 1}, []string{`unknown argument "x"; the tool takes none`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			wantError(t, res, tt.want...)
			msg := text(t, res)
			if strings.Contains(msg, "root:x:") {
				t.Errorf("error shows a file: %s", msg)
			}
			// Name the field and the rule, never Go types, never a long run of the value.
			for _, bad := range []string{"Go ", "json:", "unmarshal", "interface {}", "validating", strings.Repeat("a", 41), strings.Repeat("egg ", 11)} {
				if strings.Contains(msg, bad) {
					t.Errorf("error %q contains %q", msg, bad)
				}
			}
		})
	}
	// The server is still there.
	var got retrieved
	structured(t, call(t, cs, "retrieve_skills", map[string]any{"query": "heat an egg"}), &got)
	if len(got.Results) == 0 {
		t.Error("no results after the bad calls")
	}
}

// retrieve_skills takes requests up to the limits every surface shares, and its schema says
// what they are.
func TestRetrieveSkillsLimits(t *testing.T) {
	g := sample(t)
	cs := connect(t, g, mcpserver.Options{})
	var got retrieved
	structured(t, call(t, cs, "retrieve_skills", map[string]any{"query": "heat an egg", "k": service.MaxK, "render": false}), &got)
	// Skills no seed's relevance reaches are left out, so fewer than k may come back.
	if n := len(got.Results); n <= engine.DefaultK || n > service.MaxK {
		t.Errorf("k = %d: %d results, want more than the default %d", service.MaxK, n, engine.DefaultK)
	}
	if res := call(t, cs, "retrieve_skills", map[string]any{"query": strings.Repeat("egg ", service.MaxQueryBytes/4)}); res.IsError {
		t.Errorf("a query of %d bytes: %s", service.MaxQueryBytes, text(t, res))
	}

	tools := testlib.Tools(t, context.Background(), cs)
	i := slices.IndexFunc(tools, func(tool *mcp.Tool) bool { return tool.Name == "retrieve_skills" })
	if i < 0 {
		t.Fatal("no retrieve_skills")
	}
	b, _ := json.Marshal(tools[i].InputSchema)
	var schema struct {
		Properties struct {
			Query struct{ MaxLength int }
			K     struct{ Maximum int }
		}
	}
	if err := json.Unmarshal(b, &schema); err != nil || schema.Properties.Query.MaxLength != service.MaxQueryBytes || schema.Properties.K.Maximum != service.MaxK {
		t.Errorf("schema %s: want query maxLength %d and k maximum %d (%v)", b, service.MaxQueryBytes, service.MaxK, err)
	}
}

// skillText is get_skill's structured content.
type skillText struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Complete bool   `json:"complete"`
	Text     string `json:"text"`
	Note     string `json:"note"`
}

func TestGetSkill(t *testing.T) {
	g := sample(t)
	withLib := connect(t, g, mcpserver.Options{Library: sampleLib})
	noLib := connect(t, g, mcpserver.Options{})
	for _, name := range []string{"pick-up-object", "heat-object-in-microwave", "find-lamp"} {
		file := filepath.Join(sampleLib, name, "SKILL.md")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		res := call(t, withLib, "get_skill", map[string]any{"name": name})
		var got skillText
		structured(t, res, &got)
		if !got.Complete || got.Name != name || got.Text != string(data) || text(t, res) != string(data) {
			t.Errorf("get_skill(%s) with the library: complete %v, name %q, text %q; want the file %s",
				name, got.Complete, got.Name, got.Text, file)
		}
		if got.Source != filepath.ToSlash(file) {
			t.Errorf("get_skill(%s): source %q, want %q", name, got.Source, filepath.ToSlash(file))
		}

		res = call(t, noLib, "get_skill", map[string]any{"name": name})
		got = skillText{}
		structured(t, res, &got)
		id := skillID(t, g, name)
		if got.Complete || !strings.Contains(got.Text, g.Description(id)) || !strings.Contains(got.Text, strings.TrimSpace(g.Body(id))) {
			t.Errorf("get_skill(%s) without a library: complete %v, text %q; want the description and body head", name, got.Complete, got.Text)
		}
		if !strings.Contains(got.Note, "head of the body") || !strings.Contains(got.Note, "--library") ||
			!strings.Contains(text(t, res), got.Note) {
			t.Errorf("get_skill(%s) without a library: note %q, text %q; want the head explained in both", name, got.Note, text(t, res))
		}
	}
	// Names are found in another spelling when it is unique.
	var got skillText
	structured(t, call(t, noLib, "get_skill", map[string]any{"name": "Pick_Up_Object"}), &got)
	if got.Name != "pick-up-object" {
		t.Errorf("get_skill(Pick_Up_Object) = %q, want pick-up-object", got.Name)
	}
}

func skillID(t *testing.T, g *graphs.Graph, name string) int {
	t.Helper()
	for i := range g.NumSkills() {
		if g.Name(i) == name {
			return i
		}
	}
	t.Fatalf("no skill %q", name)
	return -1
}

// TestGetSkillLibraryFiles checks that get_skill reads the file fresh and reads nothing but the
// files the library load found, inside the folder.
func TestGetSkillLibraryFiles(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	outside := filepath.Join(dir, "secret.md")
	skill := func(name, desc, body string) string {
		return fixture.SkillMD("\n"+body+"\n", "name: "+name, "description: "+desc)
	}
	fixture.WriteFiles(t, dir, fixture.Files{
		"lib/boil-water/SKILL.md": skill("boil-water", "Boil water in a kettle.", "## Steps\n1. Fill the kettle.\n2. Switch it on."),
		"lib/brew-tea/SKILL.md":   skill("brew-tea", "Brew tea with boiled water.", "## Steps\n1. Pour the water on the leaves."),
		"lib/serve-tea/SKILL.md":  skill("serve-tea", "Serve tea in cups.", "## Steps\n1. Pour."),
		// A SKILL.md that is a symlink out of the folder: the library load reads it, get_skill must not.
		"secret.md": skill("leak-secret", "Secret text outside the library.", "TOP SECRET"),
	})
	if err := os.MkdirAll(filepath.Join(lib, "leak-secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(lib, "leak-secret", "SKILL.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	g := buildGraph(t, lib)
	cs := connect(t, g, mcpserver.Options{Library: lib})

	get := func(name string) skillText {
		t.Helper()
		var got skillText
		structured(t, call(t, cs, "get_skill", map[string]any{"name": name}), &got)
		return got
	}
	if got := get("brew-tea"); !got.Complete || !strings.Contains(got.Text, "Pour the water") {
		t.Errorf("brew-tea: %+v", got)
	}
	// Fresh from disk: an edit after the server started shows.
	edited := skill("brew-tea", "Brew tea with boiled water.", "## Steps\n1. Warm the pot first.")
	fixture.WriteFiles(t, lib, fixture.Files{"brew-tea/SKILL.md": edited})
	if got := get("brew-tea"); !got.Complete || got.Text != edited {
		t.Errorf("after an edit: %+v, want the new file", got)
	}
	// The escaping symlink is not followed: the library load skips it (no such skill), or, if
	// the graph has it, get_skill serves the graph's head instead.
	if res := call(t, cs, "get_skill", map[string]any{"name": "leak-secret"}); res.IsError {
		wantError(t, res, `unknown skill "leak-secret"`)
	} else if got := get("leak-secret"); got.Complete || !strings.Contains(got.Note, "could not be read") {
		t.Errorf("symlink out of the library: %+v; want the head and a note", got)
	}
	// A file replaced by a symlink out of the folder after the load is not followed either.
	if err := os.Remove(filepath.Join(lib, "serve-tea", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(lib, "serve-tea", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if got := get("serve-tea"); got.Complete || strings.Contains(got.Text, "Secret") {
		t.Errorf("serve-tea replaced by a symlink: %+v", got)
	}
	// A deleted file: the head, with the reason.
	if err := os.Remove(filepath.Join(lib, "boil-water", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if got := get("boil-water"); got.Complete || !strings.Contains(got.Text, "Boil water in a kettle.") || !strings.Contains(got.Note, "could not be read") {
		t.Errorf("deleted file: %+v", got)
	}
	// The reason leaves out the path the server tried.
	if got := get("boil-water"); !strings.Contains(got.Note, "could not be read from the library (no such file or directory)") {
		t.Errorf("deleted file: note %q", got.Note)
	}
}

func TestNewLibraryErrors(t *testing.T) {
	g := sample(t)
	file := filepath.Join(sampleLib, "find-lamp", "SKILL.md")
	for _, lib := range []string{filepath.Join(t.TempDir(), "missing"), file, t.TempDir()} {
		if _, err := mcpserver.New(g, mcpserver.Options{Library: lib}); err == nil || !strings.HasPrefix(err.Error(), "mcpserver: library") {
			t.Errorf("New(library %s) error %v, want one naming the library", lib, err)
		}
	}
}

// neighbors is skill_neighbors' structured content.
type neighbors struct {
	Name     string `json:"name"`
	Out, In  []edge
	OutTotal int `json:"out_total"`
	InTotal  int `json:"in_total"`
}

type edge struct {
	Skill, State, Type, Evidence string
	Weight, Assoc                float32
}

func TestSkillNeighbors(t *testing.T) {
	g := sample(t)
	cs := connect(t, g, mcpserver.Options{})
	// The edges straight from the graph, as "skill state type weight" per direction.
	key := func(skill string, e int) string {
		return skill + " " + g.State(e).String() + " " + g.Type(e).String() + " " + jsonFloat(g.Weight(e))
	}
	wantOut, wantIn := map[string][]string{}, map[string][]string{}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			v := g.Target(e)
			wantOut[g.Name(u)] = append(wantOut[g.Name(u)], key(g.Name(v), e))
			wantIn[g.Name(v)] = append(wantIn[g.Name(v)], key(g.Name(u), e))
		}
	}
	checked := 0
	for i := range g.NumSkills() {
		name := g.Name(i)
		var got neighbors
		res := call(t, cs, "skill_neighbors", map[string]any{"name": name, "limit": 1000})
		structured(t, res, &got)
		for _, part := range []struct {
			dir   string
			edges []edge
			total int
			want  []string
		}{{"out", got.Out, got.OutTotal, wantOut[name]}, {"in", got.In, got.InTotal, wantIn[name]}} {
			var keys []string
			for j, e := range part.edges {
				keys = append(keys, e.Skill+" "+e.State+" "+e.Type+" "+jsonFloat(e.Weight))
				if j > 0 && e.Weight > part.edges[j-1].Weight {
					t.Errorf("%s %s: edges not strongest first", name, part.dir)
				}
				if !strings.Contains(e.Evidence, e.Skill) || !strings.Contains(text(t, res), "- "+e.Evidence+"\n") {
					t.Errorf("%s %s: evidence %q not about %s or not in the text", name, part.dir, e.Evidence, e.Skill)
				}
			}
			slices.Sort(keys)
			want := slices.Clone(part.want)
			slices.Sort(want)
			if !cmp.Equal(keys, want, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })) || part.total != len(want) {
				t.Errorf("%s %s: %v (total %d), want %v", name, part.dir, keys, part.total, want)
			}
		}
		checked += len(got.Out)
	}
	if checked != g.NumEdges() || checked == 0 {
		t.Errorf("%d edges seen out, graph has %d", checked, g.NumEdges())
	}

	// A dependency seen from both ends: the prerequisite is "needed by", the other "needs".
	var pick neighbors
	structured(t, call(t, cs, "skill_neighbors", map[string]any{"name": "pick-up-object"}), &pick)
	found := false
	for _, e := range pick.In {
		if e.Type == "dependency" {
			found = true
			if !strings.HasPrefix(e.Evidence, "needs "+e.Skill+" (") {
				t.Errorf("in-edge evidence %q", e.Evidence)
			}
		}
	}
	for _, e := range pick.Out {
		if e.Type == "dependency" && !strings.HasPrefix(e.Evidence, "needed by "+e.Skill+" (") {
			t.Errorf("out-edge evidence %q", e.Evidence)
		}
	}
	if !found {
		t.Error("pick-up-object has no dependency edge in; the sample graph changed?")
	}

	// limit keeps the strongest and says how many more there are.
	var two neighbors
	res := call(t, cs, "skill_neighbors", map[string]any{"name": "pick-up-object", "limit": 2})
	structured(t, res, &two)
	if len(two.Out) != min(2, pick.OutTotal) || len(two.In) != min(2, pick.InTotal) || two.OutTotal != pick.OutTotal ||
		!cmp.Equal(two.Out, pick.Out[:len(two.Out)]) {
		t.Errorf("limit 2: %d out, %d in (totals %d, %d)", len(two.Out), len(two.In), two.OutTotal, two.InTotal)
	}
	if pick.OutTotal > 2 && !strings.Contains(text(t, res), "more (raise limit)") {
		t.Errorf("limit 2: the text does not say more edges exist:\n%s", text(t, res))
	}

}

func jsonFloat(f float32) string { b, _ := json.Marshal(f); return string(b) }

func TestGraphInfo(t *testing.T) {
	g := sample(t)
	for _, lib := range []string{"", sampleLib} {
		cs := connect(t, g, mcpserver.Options{Library: lib, Artifact: "sample.skg"})
		var got mcpcore.Info
		res := call(t, cs, "graph_info", map[string]any{})
		structured(t, res, &got)
		maj, minor := g.Version()
		if got.Artifact != "sample.skg" || got.Version != itoa(maj)+"."+itoa(minor) || got.Bytes != g.Size() ||
			got.Skills != g.NumSkills() || got.Edges != g.NumEdges() || got.Terms != g.NumTerms() {
			t.Errorf("graph_info = %+v", got)
		}
		sum := 0
		for _, n := range got.ByState {
			sum += n
		}
		if sum != g.NumEdges() || len(got.ByState) != len(graphs.States()) || len(got.ByType) != len(graphs.Relations()) {
			t.Errorf("by_state %v, by_type %v for %d edges", got.ByState, got.ByType, g.NumEdges())
		}
		if got.Params["body_head"] != float64(builder.DefaultOptions().BodyHead) {
			t.Errorf("params %v lack body_head", got.Params)
		}
		// The sample is built from text alone: graph_info says so, and how the graph learns.
		if l := got.Learning; !l.Cold || l.Runs != 0 || l.Live == 0 || !strings.Contains(l.Note, "learned nothing from use yet") ||
			!strings.Contains(l.Note, "caskg gateway") || !strings.Contains(l.Note, "report_skill_use") {
			t.Errorf("learning %+v, want cold with live edges and a note on how it learns", l)
		}
		switch {
		case lib == "" && got.Library != nil:
			t.Errorf("library %+v without one", got.Library)
		case lib != "" && (got.Library == nil || got.Library.Served != g.NumSkills() || got.Library.Skills != g.NumSkills()):
			t.Errorf("library %+v, want all %d skills served", got.Library, g.NumSkills())
		}
		// The text is the same information as JSON.
		var fromText mcpcore.Info
		if err := json.Unmarshal([]byte(text(t, res)), &fromText); err != nil || !cmp.Equal(fromText, got) {
			t.Errorf("text content %s does not hold the info: %v", text(t, res), err)
		}
		wantError(t, call(t, cs, "graph_info", map[string]any{"verbose": true}), "verbose")
	}
}

func TestUnknownTool(t *testing.T) {
	cs := connect(t, sample(t), mcpserver.Options{})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_skills", Arguments: map[string]any{}})
	if err == nil {
		t.Error("calling an unknown tool succeeded")
	}
	// The session survives it.
	if res := call(t, cs, "graph_info", map[string]any{}); res.IsError {
		t.Errorf("graph_info after an unknown tool: %s", text(t, res))
	}
}

// TestConcurrentCalls is meant for -race: one server, many sessions and calls at once.
func TestConcurrentCalls(t *testing.T) {
	g := sample(t)
	srv, err := mcpserver.New(g, mcpserver.Options{Library: sampleLib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ms := srv.MCP()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		cs := testlib.InMemory(t, ctx, ms)
		wg.Go(func() {
			for j := range 10 {
				var res *mcp.CallToolResult
				var err error
				switch (w + j) % 3 {
				case 0:
					res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "retrieve_skills", Arguments: map[string]any{"query": "heat an egg"}})
				case 1:
					res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_skill", Arguments: map[string]any{"name": "find-lamp"}})
				default:
					res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill_neighbors", Arguments: map[string]any{"name": "find-lamp"}})
				}
				if err != nil || res.IsError {
					t.Errorf("worker %d call %d: %v %v", w, j, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
}
