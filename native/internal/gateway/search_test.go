package gateway

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/wasm/engine"
)

// TestLexicalIndex: the indexed lexical search ranks exactly as the plain BM25 loop over every
// tool it replaced (lexicalReference), scores bit for bit, on a small catalog and, when the
// shared data is there, on Seal-Tools with its task texts.
func TestLexicalIndex(t *testing.T) {
	small := map[string][]*mcp.Tool{"a": {
		{Name: "read_file", Description: "Read a file's text from the disk.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}}}},
		{Name: "write_file", Description: "Write text to a file on the disk; the file is created."},
		{Name: "stat", Title: "File status", Description: "Size and dates of a file."},
		{Name: "empty"},
	}}
	cfg := &Config{Servers: []ServerConfig{{Name: "a"}}}
	queries := []string{"read a file", "file file disk", "a__stat", "STAT", "nothing matches", "", "text text"}
	check := func(t *testing.T, c *catalog, queries []string, ks ...int) {
		for _, q := range queries {
			for _, k := range ks {
				got, want := lexical(c, q, k, engine.Filter{}, nil), lexicalReference(c, q, k)
				if d := cmp.Diff(want, got, cmp.AllowUnexported(lexHit{})); d != "" {
					t.Fatalf("query %q, k %d (-reference +indexed):\n%s", q, k, d)
				}
			}
		}
	}
	c, err := buildCatalog(cfg, small)
	if err != nil {
		t.Fatal(err)
	}
	check(t, c, queries, 1, 3, 8)

	_, sc := sealCatalog(t)
	seal, err := buildCatalog(&Config{Servers: []ServerConfig{{Name: "seal"}}}, map[string][]*mcp.Tool{"seal": sc.Tools})
	if err != nil {
		t.Fatal(err)
	}
	qs := sealQueries(t)
	check(t, seal, qs[:min(len(qs), 60)], 8)
}

// lexical ranks the catalog by BM25 over each tool's name, title, description and argument
// names, the name's words counting twice. When no word matches, the first k tools by name
// stand in, so that an agent always has tools to look at.
func lexicalReference(c *catalog, query string, k int) []lexHit {
	terms := engine.Tokenize(query)
	df := map[string]int{}
	docs := make([]map[string]int, len(c.entries))
	lens := make([]int, len(c.entries))
	total := 0
	for i, e := range c.entries {
		tf := map[string]int{}
		for _, w := range engine.Tokenize(e.text) {
			tf[w]++
			lens[i]++
		}
		for _, w := range engine.Tokenize(e.Name) {
			tf[w]++
			lens[i]++
		}
		for w := range tf {
			df[w]++
		}
		docs[i] = tf
		total += lens[i]
	}
	avg := float64(total) / float64(len(c.entries))
	if avg == 0 {
		avg = 1
	}
	n := float64(len(c.entries))
	var hits []lexHit
	for i, e := range c.entries {
		s := 0.0
		for _, t := range terms {
			f := float64(docs[i][t])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(lens[i])/avg))
		}
		if strings.EqualFold(strings.TrimSpace(query), e.Name) || strings.EqualFold(strings.TrimSpace(query), e.Tool) {
			s += 100
		}
		if s > 0 {
			hits = append(hits, lexHit{name: e.Name, score: s})
		}
	}
	// The order of the hits is topHits' in both: the reference checks the scores.
	hits = topHits(hits, k)
	if len(hits) == 0 {
		for i := 0; i < len(c.entries) && i < k; i++ {
			hits = append(hits, lexHit{name: c.entries[i].Name})
		}
	}
	return hits
}

// TestSearchStaleGraph: a graph built before a server listed its tools cannot rank them, so
// until the rebuild lands search ranks the live catalog by its words and says why; a graph that
// holds every live tool ranks as before.
func TestSearchStaleGraph(t *testing.T) {
	rec, g, cat := alphaWithGraph(t)
	full, _ := json.Marshal(cat)
	tests := []struct {
		name    string
		drop    int // tools left out of the graph
		ranking string
	}{{"graph lacks a tool", 1, "lexical"}, {"graph holds every tool", 0, "graph"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			part := cat
			part.Tools = cat.Tools[tt.drop:]
			data, _ := json.Marshal(part)
			if tt.drop == 0 {
				data = full
			}
			gr := catalogGraph(t, data)
			rec.mu.Lock()
			rec.graph, rec.eng = gr, engine.New(gr)
			rec.mu.Unlock()
			dropped := cat.Tools[0]["name"].(string)
			desc, _ := cat.Tools[0]["description"].(string)
			_, out := connect(t, g).search(t, dropped+" "+desc, 8)
			if out.Ranking != tt.ranking {
				t.Fatalf("ranking %q, want %q (note %q)", out.Ranking, tt.ranking, out.Note)
			}
			if !slices.Contains(names(out), dropped) {
				t.Errorf("%s is not found: %v", dropped, names(out))
			}
			if got := strings.Contains(out.Note, "the graph is being rebuilt for 1 new tool"); got != (tt.drop > 0) {
				t.Errorf("note %q", out.Note)
			}
		})
	}
}
