package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/caskg/caskg/graphs"
)

// directionCatalog is a gateway catalog of a filesystem and a memory server, as their
// tools/list describe them: nothing in the text orders reading a file before creating entities,
// so the order can come from the runs alone.
const directionCatalog = `{"tools": [
 {"name": "fs__read_text_file", "description": "Read the complete contents of a file from the file system as text.",
  "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "number"}}, "required": ["path"]}},
 {"name": "fs__write_file", "description": "Create a new file or completely overwrite an existing file with new content.",
  "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}},
 {"name": "fs__list_directory", "description": "Get a detailed listing of all files and directories in a specified path.",
  "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
 {"name": "memory__create_entities", "description": "Create multiple new entities in the knowledge graph.",
  "inputSchema": {"type": "object", "properties": {"entities": {"type": "array", "items": {"type": "object"}}}, "required": ["entities"]}},
 {"name": "memory__create_relations", "description": "Create multiple new relations between entities in the knowledge graph.",
  "inputSchema": {"type": "object", "properties": {"relations": {"type": "array", "items": {"type": "object"}}}, "required": ["relations"]}},
 {"name": "memory__search_nodes", "description": "Search for nodes in the knowledge graph based on a query.",
  "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
 {"name": "memory__read_graph", "description": "Read the entire knowledge graph.",
  "inputSchema": {"type": "object", "properties": {}}}
]}`

// TestRunsGiveDirection checks that the order of calls in trusted runs gives learned edges
// their direction: a workflow that always reads a file and then creates entities makes
// read_text_file → create_entities a dependency and never the reverse, while a pair the runs
// used in both orders is linked both ways as a workflow, with no direction.
func TestRunsGiveDirection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, []byte(directionCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	skills := loadLib(t, path)
	const (
		read   = "fs__read_text_file"
		create = "memory__create_entities"
		list   = "fs__list_directory"
		search = "memory__search_nodes"
	)
	type edgeOf struct {
		state graphs.State
		typ   graphs.Relation
		ok    bool
	}
	build := func(runs []Trace) func(from, to string) edgeOf {
		opt := DefaultOptions()
		opt.traces = runs
		g, _ := buildGraph(t, skills, opt)
		id := map[string]int{}
		for i := range g.NumSkills() {
			id[g.Name(i)] = i
		}
		return func(from, to string) edgeOf {
			lo, hi := g.Out(id[from])
			for e := lo; e < hi; e++ {
				if g.Target(e) == id[to] {
					return edgeOf{g.State(e), g.Type(e), true}
				}
			}
			return edgeOf{}
		}
	}
	var oneWay, bothWays []Trace
	for k := range 20 {
		// As a gateway records them: these runs happen to be sorted by name, and another
		// workflow's are not, which tells that the runs' order is the order they ran.
		oneWay = append(oneWay, Trace{ID: fmt.Sprint("r", k), Skills: []string{read, create}},
			Trace{ID: fmt.Sprint("w", k), Skills: []string{"memory__read_graph", "fs__write_file"}})
		bothWays = append(bothWays, Trace{ID: fmt.Sprint("r", k), Skills: []string{read, create}})
		run := []string{list, search}
		if k%2 == 1 {
			run = []string{search, list}
		}
		bothWays = append(bothWays, Trace{ID: fmt.Sprint("b", k), Skills: run})
	}
	tests := []struct {
		name string
		runs []Trace
	}{
		{"one order", oneWay},
		{"with a pair in both orders", bothWays},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edge := build(tt.runs)
			if fwd := edge(read, create); !fwd.ok || fwd.state != graphs.Confirmed || fwd.typ != graphs.Dependency {
				t.Errorf("%s → %s: %+v, want a confirmed dependency", read, create, fwd)
			}
			if rev := edge(create, read); rev.ok && (rev.state == graphs.Confirmed || rev.typ == graphs.Dependency) {
				t.Errorf("%s → %s: %s %s edge, want none that is confirmed or a dependency: the runs always read first",
					create, read, rev.state, rev.typ)
			}
		})
	}
	t.Run("both orders", func(t *testing.T) {
		edge := build(bothWays)
		for _, p := range [][2]string{{list, search}, {search, list}} {
			if e := edge(p[0], p[1]); !e.ok || e.state != graphs.Confirmed || e.typ != graphs.Workflow {
				t.Errorf("%s → %s: %+v, want a confirmed workflow edge (the runs used both orders)", p[0], p[1], e)
			}
		}
	})
}
