package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/caskg/caskg/graphs"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sep joins a server's name and its tool's name into the catalog name SERVER__TOOL.
const sep = "__"

// entry is one catalog tool.
type entry struct {
	Name   string // SERVER__TOOL
	Server string
	Tool   string    // the server's own name
	Def    *mcp.Tool // as the server gave it, renamed to Name
	text   string    // lower-case words of name, title, description and argument names, for lexical search
}

// catalog is the tools every server gave, namespaced and filtered, with their deterministic JSON.
// It is immutable once built; the gateway swaps whole catalogs.
type catalog struct {
	entries []*entry // sorted by Name
	byName  map[string]*entry
	servers []string // the servers with at least one tool, sorted
	invalid []string // SERVER__TOOL of the tools left out for their names (validToolName)
	json    []byte   // {"tools": [...]} sorted by name

	lexOnce sync.Once
	lex     *lexIndex // lexical search's index, built at its first use

	// cover is the learner's graph last compared with this catalog and how many of the
	// catalog's tools it lacks (missingFromGraph): counted once per graph, not per search.
	cover atomic.Pointer[graphCover]
}

// graphCover is a graph and the count of a catalog's tools it does not hold.
type graphCover struct {
	g       *graphs.Graph
	missing int
}

// catalogTool is a catalog entry as written: the fields the contract keeps, in a fixed order.
// Schemas are re-encoded from their decoded form, whose maps encoding/json writes with sorted
// keys, so the same tools always give the same bytes.
type catalogTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// buildCatalog makes the catalog of the servers' tools under cfg's filters. A server's own
// allow and deny see its tool names; the top-level ones see SERVER__TOOL.
func buildCatalog(cfg *Config, tools map[string][]*mcp.Tool) (*catalog, error) {
	c := &catalog{byName: map[string]*entry{}}
	for _, s := range cfg.Servers {
		n := 0
		for _, t := range tools[s.Name] {
			name := s.Name + sep + t.Name
			if t.Name == "" || !validToolName(name) {
				c.invalid = append(c.invalid, name)
				continue
			}
			if !s.keeps(t.Name) || !cfg.keeps(name) || c.byName[name] != nil {
				continue
			}
			def := *t
			def.Name = name
			def.Meta = nil
			if def.InputSchema == nil {
				def.InputSchema = map[string]any{"type": "object"}
			}
			e := &entry{Name: name, Server: s.Name, Tool: t.Name, Def: &def}
			e.text = searchText(&def)
			c.entries = append(c.entries, e)
			c.byName[name] = e
			n++
		}
		if n > 0 {
			c.servers = append(c.servers, s.Name)
		}
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Name < c.entries[j].Name })
	out := struct {
		Tools []catalogTool `json:"tools"`
	}{Tools: make([]catalogTool, 0, len(c.entries))}
	for _, e := range c.entries {
		d := e.Def
		out.Tools = append(out.Tools, catalogTool{Name: d.Name, Title: d.Title, Description: d.Description,
			InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Annotations: d.Annotations})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("gateway: catalog: %w", err)
	}
	c.json = buf.Bytes()
	return c, nil
}

// validToolName reports whether name follows the MCP specification's rules for tool names
// (2025-11-25, "Tool names"; the Go SDK's validateToolName): 1 to 128 characters, each an ASCII
// letter or digit, '_', '-' or '.'. A tool named otherwise is left out of the catalog, so it is
// neither listed nor callable: clients refuse such names or rewrite them, and a name with '/',
// spaces or look-alike letters is where a filter and a reader's eye part ways.
func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for i := range len(name) {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// names are the catalog's tool names, sorted.
func (c *catalog) names() []string {
	out := make([]string, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.Name
	}
	return out
}

// visibleNames are the names keep passes (nil: all), sorted.
func (c *catalog) visibleNames(keep func(string) bool) []string {
	if keep == nil {
		return c.names()
	}
	var out []string
	for _, e := range c.entries {
		if keep(e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
}

// visible counts the tools keep passes (nil: all) and names the servers they are of, sorted.
func (c *catalog) visible(keep func(string) bool) (int, []string) {
	if keep == nil {
		return len(c.entries), c.servers
	}
	n := 0
	var servers []string
	for _, e := range c.entries {
		if !keep(e.Name) {
			continue
		}
		n++
		if len(servers) == 0 || servers[len(servers)-1] != e.Server {
			servers = append(servers, e.Server)
		}
	}
	return n, servers
}

// parseCatalog reads a catalog the gateway wrote before ({"tools": [...]}) back into each
// server's tools under their own names, so that a server down at start keeps the tools it had.
// Tools of servers no longer configured are dropped.
func parseCatalog(data []byte, cfg *Config) (map[string][]*mcp.Tool, error) {
	var in struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("gateway: previous catalog: %w", err)
	}
	known := map[string]bool{}
	for _, s := range cfg.Servers {
		known[s.Name] = true
	}
	out := map[string][]*mcp.Tool{}
	for _, t := range in.Tools {
		if t == nil {
			continue
		}
		server, tool, ok := strings.Cut(t.Name, sep)
		if !ok || !known[server] || tool == "" {
			continue
		}
		t.Name = tool
		out[server] = append(out[server], t)
	}
	return out, nil
}

// searchText is what lexical search matches a tool against.
func searchText(t *mcp.Tool) string {
	var b strings.Builder
	b.WriteString(t.Name)
	b.WriteByte(' ')
	b.WriteString(t.Title)
	b.WriteByte(' ')
	b.WriteString(t.Description)
	if m, ok := t.InputSchema.(map[string]any); ok {
		if props, ok := m["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b.WriteByte(' ')
				b.WriteString(k)
			}
		}
	}
	return b.String()
}
