package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

// Budgets of search_tools' text.
const (
	searchTextBudget = 12000 // characters of the whole text
	schemaTextBudget = 3000  // characters of one tool's schema in the text (the structured content has it whole)
)

// searchResult is search_tools' structured content.
type searchResult struct {
	Query   string      `json:"query"`
	Ranking string      `json:"ranking"` // "graph", or "lexical" before the first graph and when retrieval fails
	Tools   []foundTool `json:"tools"`
	Note    string      `json:"note,omitempty"`
}

// foundTool is one tool search_tools returns.
type foundTool struct {
	Name        string       `json:"name"`
	Score       float64      `json:"score"`
	SeedRank    int          `json:"seed_rank,omitempty"` // rank among the tools matching the task's words
	Description string       `json:"description"`
	InputSchema any          `json:"inputSchema"`
	Via         []engine.Via `json:"via,omitempty"` // graph edges that brought the tool in
	// Recalled is set when the graph's memory of past tasks raised the tool: sessions whose
	// searches shared the task's words used it (engine.Result.Recalled).
	Recalled    *engine.Recall `json:"recalled,omitempty"`
	Server      string         `json:"server"`
	ServerState string         `json:"server_state"`
}

// search ranks the catalog for a query, narrowed by f (checked) and keep (a client's filter;
// nil keeps all): over the learner's graph when there is one, lexically otherwise and whenever
// retrieval fails or finds nothing live, narrowed alike in both. Tools of the graph the catalog
// no longer has (server gone, tool denied) never appear. The result is empty only when the
// catalog is, or when f and keep leave out every live tool.
func (g *Gateway) search(query string, k int, f engine.Filter, keep func(string) bool) *searchResult {
	c := g.cat.Load()
	res := &searchResult{Query: query, Tools: []foundTool{}}
	if len(c.entries) == 0 {
		res.Ranking = "lexical"
		res.Note = "no server has listed any tool yet"
		if st := g.starting(); len(st) > 0 {
			res.Note += "; still starting: " + strings.Join(st, ", ")
		}
		return res
	}
	if l := g.opt.Learner; l != nil {
		if gr, eng := l.Graph(); gr != nil && eng != nil {
			if m := missingFromGraph(c, gr); m > 0 {
				// A server listed after the graph was built: until its rebuild lands, a graph
				// search could not return its tools at all.
				res.Note = "the graph is being rebuilt for " + plural(m, "new tool") + "; ranked by the task's words"
			} else if ok := g.graphSearch(c, gr.NumSkills(), eng, query, k, f, keep, res); ok {
				return res
			} else {
				res.Note = "the graph found none of the live tools; ranked by the task's words"
			}
		}
	}
	res.Ranking = "lexical"
	res.Tools = res.Tools[:0]
	for _, h := range lexical(c, query, k, f, keep) {
		res.Tools = append(res.Tools, g.found(c.byName[h.name], h.score, h.seedRank, nil, nil))
	}
	switch {
	case len(res.Tools) == 0:
		res.Note = "the filter (allow, deny, namespaces) leaves out every tool"
	case res.Note == "":
		res.Note = unknownNote(c, query)
	default:
		if n := unknownNote(c, query); n != "" {
			res.Note = n + "; " + res.Note
		}
	}
	return res
}

// missingFromGraph counts the catalog's tools the graph gr does not hold, once per catalog and
// graph (catalog.cover): both are immutable, and a search would otherwise look up every skill.
func missingFromGraph(c *catalog, gr *graphs.Graph) int {
	if p := c.cover.Load(); p != nil && p.g == gr {
		return p.missing
	}
	held := 0
	for i := range gr.NumSkills() {
		if c.byName[gr.Name(i)] != nil {
			held++
		}
	}
	c.cover.Store(&graphCover{g: gr, missing: len(c.entries) - held})
	return len(c.entries) - held
}

// unknownNote is engine.NoTermNote of query when the catalog's lexical index has none of its
// terms, else "": the tools lexical lists then stand in, matched by nothing the task says.
func unknownNote(c *catalog, query string) string {
	c.lexOnce.Do(func() { c.lex = newLexIndex(c) })
	var terms []string
	seen := map[string]bool{}
	for _, t := range engine.Tokenize(query) {
		if c.lex.postings[t] != nil {
			return ""
		}
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return engine.NoTermNote(terms)
}

// graphSearch fills res from the engine and reports whether it found any live tool. A panic in
// retrieval is a failure like any other: the caller falls back.
func (g *Gateway) graphSearch(c *catalog, graphSize int, eng *engine.Engine, query string, k int, f engine.Filter, keep func(string) bool, res *searchResult) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			g.logf("gateway: retrieval failed (%v); ranking lexically", r)
			ok = false
		}
	}()
	// Ask for enough to fill k after the tools the catalog lacks are dropped.
	missing := max(0, graphSize-len(c.entries))
	want := min(k+missing, service.MaxK)
	want = max(want, k)
	if keep != nil {
		// The client's filter drops tools after ranking; ask for all a query may return.
		want = max(service.MaxK, k)
	}
	resp, err := eng.Query(engine.Request{Query: query, K: want, Filter: f})
	if err != nil {
		g.logf("gateway: retrieval failed (%v); ranking lexically", err)
		return false
	}
	res.Ranking = "graph"
	res.Note = resp.Note
	for _, r := range resp.Results {
		e := c.byName[r.Name]
		if e == nil || keep != nil && !keep(r.Name) {
			continue
		}
		var via []engine.Via
		for _, v := range r.Via {
			if c.byName[v.From] != nil && (keep == nil || keep(v.From)) {
				via = append(via, v)
			}
		}
		res.Tools = append(res.Tools, g.found(e, r.Score, r.SeedRank, via, r.Recalled))
		if len(res.Tools) == k {
			break
		}
	}
	return len(res.Tools) > 0
}

func (g *Gateway) found(e *entry, score float64, seedRank int, via []engine.Via, rc *engine.Recall) foundTool {
	st := g.byServer[e.Server].status()
	return foundTool{Name: e.Name, Score: score, SeedRank: seedRank, Description: e.Def.Description,
		InputSchema: e.Def.InputSchema, Via: via, Recalled: rc, Server: e.Server, ServerState: st.State}
}

type lexHit struct {
	name     string
	score    float64
	seedRank int
}

// lexIndex is the catalog's BM25 index for lexical: built at the first lexical search of a
// catalog (tokenizing thousands of tools for every query would cost tens of milliseconds).
type lexIndex struct {
	postings map[string][]posting // word -> the entries holding it, in entry order
	lens     []int                // words of each entry
	avg      float64              // mean of lens, at least a little above 0
}

type posting struct {
	entry int
	tf    int
}

func newLexIndex(c *catalog) *lexIndex {
	x := &lexIndex{postings: map[string][]posting{}, lens: make([]int, len(c.entries))}
	total := 0
	for i, e := range c.entries {
		tf := map[string]int{}
		for _, w := range engine.Tokenize(e.text) {
			tf[w]++
			x.lens[i]++
		}
		for _, w := range engine.Tokenize(e.Name) {
			tf[w]++
			x.lens[i]++
		}
		for w, f := range tf {
			x.postings[w] = append(x.postings[w], posting{i, f})
		}
		total += x.lens[i]
	}
	x.avg = float64(total) / float64(max(len(c.entries), 1))
	if x.avg == 0 {
		x.avg = 1
	}
	return x
}

// lexical ranks the tools of the catalog f keeps by BM25 over each tool's name, title,
// description and argument names, the name's words counting twice. When no word matches, the
// first k kept tools by name stand in, so that an agent always has tools to look at. The
// statistics are the whole catalog's, so that a filter narrows the ranking without changing it.
func lexical(c *catalog, query string, k int, f engine.Filter, keep func(string) bool) []lexHit {
	allows := func(name string) bool { return f.Allows(name) && (keep == nil || keep(name)) }
	c.lexOnce.Do(func() { c.lex = newLexIndex(c) })
	x := c.lex
	n := float64(len(c.entries))
	scores := make([]float64, len(c.entries))
	// Each entry's score adds its terms in the query's order, repeats included, as a loop over
	// the terms for each entry would.
	for _, t := range engine.Tokenize(query) {
		ps := x.postings[t]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			scores[p.entry] += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(x.lens[p.entry])/x.avg))
		}
	}
	q := strings.TrimSpace(query)
	var hits []lexHit
	for i, e := range c.entries {
		s := scores[i]
		if strings.EqualFold(q, e.Name) || strings.EqualFold(q, e.Tool) {
			s += 100
		}
		if s > 0 && allows(e.Name) {
			hits = append(hits, lexHit{name: e.Name, score: s})
		}
	}
	hits = topHits(hits, k)
	if len(hits) == 0 {
		for i := 0; i < len(c.entries) && len(hits) < k; i++ {
			if allows(c.entries[i].Name) {
				hits = append(hits, lexHit{name: c.entries[i].Name})
			}
		}
	}
	return hits
}

// topHits sorts hits by score, best first (ties by name), keeps the first k and numbers them
// from 1.
func topHits(hits []lexHit, k int) []lexHit {
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].name < hits[j].name
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	for i := range hits {
		hits[i].seedRank = i + 1
	}
	return hits
}

// plural is "1 tool", "2 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// renderSearch is search_tools' text: each tool with its evidence, description and input
// schema, then the chain the tools form, within searchTextBudget characters.
func (g *Gateway) renderSearch(query string, res *searchResult, keep func(string) bool) string {
	var b strings.Builder
	c := g.cat.Load()
	n, servers := c.visible(keep)
	how := "ranked over the tool graph"
	if res.Ranking == "lexical" {
		how = "ranked by the task's words (no graph yet, or retrieval found nothing)"
	}
	fmt.Fprintf(&b, "%s for %q, %s; %s from %s behind this gateway. Run one with call_tool {\"name\", \"arguments\"}.\n",
		plural(len(res.Tools), "tool"), short(query), how, plural(n, "tool"), plural(len(servers), "server"))
	if res.Note != "" {
		fmt.Fprintf(&b, "Note: %s.\n", res.Note)
	}
	used := len([]rune(b.String()))
	shown := 0
	for i, t := range res.Tools {
		var s strings.Builder
		fmt.Fprintf(&s, "\n%d. %s", i+1, t.Name)
		if e := c.byName[t.Name]; e != nil && e.Def.Title != "" {
			fmt.Fprintf(&s, " (%s)", e.Def.Title)
		}
		s.WriteString("\n")
		switch {
		case t.SeedRank > 0:
			fmt.Fprintf(&s, "   found: matches the task (seed #%d)\n", t.SeedRank)
		case len(t.Via) > 0:
			s.WriteString("   found: over the graph\n")
		case t.Recalled != nil:
			s.WriteString("   found: past tasks in these words used it\n")
		default:
			s.WriteString("   found: no word of the task matched; listed so there is something to look at\n")
		}
		for _, v := range t.Via {
			fmt.Fprintf(&s, "   - %s\n", v.Evidence())
		}
		if t.Recalled != nil {
			fmt.Fprintf(&s, "   - %s\n", t.Recalled.Evidence())
		}
		if t.ServerState != stateReady {
			fmt.Fprintf(&s, "   server %s: %s; calls fail until it is back\n", t.Server, t.ServerState)
		}
		if d := strings.TrimSpace(t.Description); d != "" {
			fmt.Fprintf(&s, "   %s\n", strings.ReplaceAll(d, "\n", "\n   "))
		}
		schema, _ := json.Marshal(t.InputSchema)
		st := string(schema)
		if r := []rune(st); len(r) > schemaTextBudget {
			st = string(r[:schemaTextBudget]) + "... (cut; the structured content has the whole schema)"
		}
		fmt.Fprintf(&s, "   inputSchema: %s\n", st)
		n := len([]rune(s.String()))
		if shown > 0 && used+n > searchTextBudget {
			fmt.Fprintf(&b, "\n%d more tools did not fit in the text; the structured content lists them all.\n", len(res.Tools)-i)
			break
		}
		b.WriteString(s.String())
		used += n
		shown++
	}
	if chain := chainText(res); chain != "" && used+len([]rune(chain)) <= searchTextBudget {
		b.WriteString(chain)
	}
	return b.String()
}

// chainText states what the returned tools need and lead to, from the graph edges that
// brought them: a tool reached backwards over an edge into X comes before X (a prerequisite),
// forwards after it (a follow-up).
func chainText(res *searchResult) string {
	type rel struct{ before, after []string }
	rels := map[string]*rel{}
	var order []string
	get := func(name string) *rel {
		if rels[name] == nil {
			rels[name] = &rel{}
			order = append(order, name)
		}
		return rels[name]
	}
	for _, t := range res.Tools {
		for _, v := range t.Via {
			switch v.Type {
			case "semantic", "alternative":
				continue
			}
			r := get(v.From)
			if v.Reverse {
				r.before = appendNew(r.before, t.Name)
			} else {
				r.after = appendNew(r.after, t.Name)
			}
		}
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nChain:\n")
	for _, name := range order {
		r := rels[name]
		fmt.Fprintf(&b, "- %s", name)
		if len(r.before) > 0 {
			fmt.Fprintf(&b, "; first: %s", strings.Join(r.before, ", "))
		}
		if len(r.after) > 0 {
			fmt.Fprintf(&b, "; then: %s", strings.Join(r.after, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
