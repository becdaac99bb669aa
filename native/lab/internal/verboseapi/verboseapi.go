// Package verboseapi turns a dev tool catalog and its tasks into a catalog in the shape of a
// verbose REST-API collection, for measuring retrieval on that shape without the held-out
// catalogs themselves.
//
// The shape, that of the held-out REST-API catalogs: a few hundred tools whose names join an API
// name and an endpoint in snake_case ("forensic_engineering_api_analyze_evidence"), so the API's
// words repeat in every one of its endpoints; a title; a one-line description; parameters with
// descriptions; and a JSON sample of the result. The queries name two or three needs in one long
// sentence full of entities; their gold is the union of the needs' gold tools.
//
// The procedure, deterministic for a seed: an API is a tool's _meta.field ("Area/API", its last
// part), or for a catalog without fields the first word of its name that is not a verb shared
// by many tools. The needs are the tasks with exactly one gold tool. APIs holding a need's tool
// are taken in a seeded order, each with all its tools, until the catalog reaches Options.Tools;
// the needs whose tool made it in are joined two or three at a time, in a seeded order, into
// queries. Part keeps the APIs whose name hashes to it (of Parts), so one half can be tuned on and
// the other reported on. The short style keeps the source's descriptions, asks one need per query
// and keeps only the needs said in at most shortWords words, the task in a few words of the other
// held-out catalogs; a tool with a field is renamed "api.endpoint-in-kebab-case" (the operationId
// shape of a REST API), one without keeps its source name (the snake_case of an MCP tool); APIs
// no query needs fill the catalog up to its size.
//
// The texts are the source's; this package only rearranges them, so the output belongs where the
// source does: under bin/, never in the repository.
package verboseapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Tool is one tool of a catalog in the MCP tools/list shape; Meta.Field is Seal-Tools' domain.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Meta         *struct {
		Field string `json:"field"`
	} `json:"_meta,omitempty"`
}

// Task is one task of a JSONL task file.
type Task struct {
	ID    string   `json:"id"`
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
	Main  string   `json:"main,omitempty"`
}

// Options say what to generate.
type Options struct {
	Seed  uint64
	Tools int // about how many tools the catalog holds (whole APIs are added until it is reached)
	// Parts and Part keep the APIs whose name hashes to Part modulo Parts (Parts 0 or 1: all).
	Parts, Part int
	Short       bool // short names and one need a query instead of the verbose shape
	// SampleField puts the result sample in the tool's "x-response-sample" member (which an
	// indexer that does not know it ignores) instead of at the end of its description.
	SampleField bool
}

// Output is a generated catalog and its tasks.
type Output struct {
	Tools []map[string]any
	Tasks []Task
	APIs  int
}

// Read reads a source catalog ({"tools": [...]}) and its JSONL tasks, naming the file, and the
// line of a bad task.
func Read(toolsPath, tasksPath string) ([]Tool, []Task, error) {
	data, err := os.ReadFile(toolsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("verboseapi: %w", err)
	}
	var cat struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &cat); err != nil {
		return nil, nil, fmt.Errorf("verboseapi: %s: %w", toolsPath, err)
	}
	f, err := os.Open(tasksPath)
	if err != nil {
		return nil, nil, fmt.Errorf("verboseapi: %w", err)
	}
	defer f.Close()
	var tasks []Task
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var t Task
		if err := json.Unmarshal(line, &t); err != nil {
			return nil, nil, fmt.Errorf("verboseapi: %s:%d: %w", tasksPath, n, err)
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("verboseapi: %s: %w", tasksPath, err)
	}
	return cat.Tools, tasks, nil
}

// Generate builds the catalog and tasks of opt from a source catalog and its tasks. A task's
// need is its one gold tool, or its main tool when tasks have several gold tools and a main.
func Generate(tools []Tool, tasks []Task, opt Options) (*Output, error) {
	if opt.Tools <= 0 {
		return nil, fmt.Errorf("verboseapi: tools %d must be positive", opt.Tools)
	}
	if opt.Parts > 1 && (opt.Part < 0 || opt.Part >= opt.Parts) {
		return nil, fmt.Errorf("verboseapi: part %d out of range [0, %d)", opt.Part, opt.Parts)
	}
	byName := map[string]*Tool{}
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	verbs := commonVerbs(tools)
	apiOf := map[string]string{}
	members := map[string][]string{}
	for _, t := range tools {
		a := apiName(t, verbs)
		if a == "" {
			continue
		}
		apiOf[t.Name] = a
		members[a] = append(members[a], t.Name)
	}
	// A unit is a task's query with its needed tools: one gold tool (or the main one), or two
	// or three gold tools of a task that already names several needs.
	type unit struct {
		query string
		tools []string
	}
	var units []unit
	for _, t := range tasks {
		var need []string
		switch {
		case len(t.Gold) >= 1 && len(t.Gold) <= 3 && (t.Main == "" || len(t.Gold) == 1):
			need = t.Gold
		case t.Main != "":
			need = []string{t.Main}
		}
		ok := len(need) > 0 && strings.TrimSpace(t.Query) != ""
		for _, n := range need {
			a := apiOf[n]
			ok = ok && byName[n] != nil && a != "" && (opt.Parts <= 1 || int(hash(a)%uint64(opt.Parts)) == opt.Part)
		}
		if ok && !opt.Short || ok && len(need) == 1 && len(strings.Fields(t.Query)) <= shortWords {
			units = append(units, unit{strings.TrimSpace(t.Query), need})
		}
	}
	if len(units) == 0 {
		return nil, fmt.Errorf("verboseapi: no task has its gold tools (or a main) in the catalog")
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	rng.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	// Take the units in that order, each with the whole APIs of its tools, while the catalog
	// has room; a unit that would overflow it is passed over.
	kept := map[string]bool{}
	inAPI := map[string]bool{}
	var names []string
	var singles []unit
	var multi []unit
	for _, u := range units {
		var add []string
		seen := map[string]bool{}
		for _, n := range u.tools {
			if a := apiOf[n]; !inAPI[a] && !seen[a] {
				seen[a] = true
				add = append(add, a)
			}
		}
		size := 0
		for _, a := range add {
			size += len(members[a])
		}
		if len(names)+size > opt.Tools+opt.Tools/20 {
			continue
		}
		for _, a := range add {
			inAPI[a] = true
			for _, m := range members[a] {
				kept[m] = true
				names = append(names, m)
			}
		}
		if len(u.tools) == 1 {
			singles = append(singles, u)
		} else {
			multi = append(multi, u)
		}
	}
	if opt.Short {
		// Few needs are said in a few words, so their APIs alone make a small, easy catalog: the
		// other APIs, in a seeded order, fill it up to its size as tools no query asks for.
		var rest []string
		for _, a := range slices.Sorted(maps.Keys(members)) {
			if !inAPI[a] && (opt.Parts <= 1 || int(hash(a)%uint64(opt.Parts)) == opt.Part) {
				rest = append(rest, a)
			}
		}
		rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		for _, a := range rest {
			if len(names)+len(members[a]) > opt.Tools+opt.Tools/20 {
				continue
			}
			inAPI[a] = true
			for _, m := range members[a] {
				kept[m] = true
				names = append(names, m)
			}
		}
	}
	nAPIs := len(inAPI)
	sort.Strings(names)
	out := &Output{APIs: nAPIs}
	rename := map[string]string{}
	for _, n := range names {
		t := byName[n]
		rename[n] = n
		if !opt.Short || t.Meta != nil && t.Meta.Field != "" {
			rename[n] = toolName(apiOf[n], n, opt.Short)
		}
		out.Tools = append(out.Tools, render(t, apiOf[n], rename[n], opt, rng))
	}
	sort.Slice(out.Tools, func(i, j int) bool { return out.Tools[i]["name"].(string) < out.Tools[j]["name"].(string) })

	var groups [][]unit
	for _, u := range multi {
		groups = append(groups, []unit{u})
	}
	for i := 0; i < len(singles); {
		k := 1
		if !opt.Short {
			k = 2 + rng.IntN(2)
		}
		if i+k > len(singles) {
			break
		}
		groups = append(groups, singles[i:i+k])
		i += k
	}
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	for _, group := range groups {
		var qs []string
		gold := []string{}
		seen := map[string]bool{}
		for _, g := range group {
			qs = append(qs, g.query)
			for _, n := range g.tools {
				if r := rename[n]; !seen[r] {
					seen[r] = true
					gold = append(gold, r)
				}
			}
		}
		q := qs[0]
		if len(qs) > 1 {
			q = joinNeeds(qs, rng)
		}
		out.Tasks = append(out.Tasks, Task{ID: fmt.Sprintf("v%d", len(out.Tasks)), Query: q, Gold: gold})
	}
	return out, nil
}

// shortWords is the most words a need of the short style says itself in.
const shortWords = 12

// commonVerbs are the first words of names that at least eight tools share ("get", "calculate"):
// in a catalog without fields they say what a tool does, not which API it belongs to.
func commonVerbs(tools []Tool) map[string]bool {
	n := map[string]int{}
	for _, t := range tools {
		if w := snakeWords(t.Name); len(w) > 0 {
			n[w[0]]++
		}
	}
	out := map[string]bool{}
	for w, c := range n {
		if c >= 8 {
			out[w] = true
		}
	}
	return out
}

// apiName is the snake_case API a tool belongs to: the last part of its field, else the first
// word of its name that is not a common verb (with a following word left for the endpoint).
func apiName(t Tool, verbs map[string]bool) string {
	if t.Meta != nil && t.Meta.Field != "" {
		parts := strings.Split(t.Meta.Field, "/")
		return strings.Join(snakeWords(parts[len(parts)-1]), "_")
	}
	w := snakeWords(t.Name)
	for i := 0; i+1 < len(w); i++ {
		if !verbs[w[i]] {
			return w[i]
		}
	}
	return ""
}

// toolName is "api_api_endpoint" (verbose) or "api.endpoint" in kebab case (short: a REST
// operationId, "repos/create-fork", with the dot MCP tool names allow for its slash); a name that
// already starts with the API's words does not repeat them.
func toolName(api, name string, short bool) string {
	ep := snakeWords(name)
	aw := strings.Split(api, "_")
	if len(ep) > len(aw) && strings.Join(ep[:len(aw)], "_") == api {
		ep = ep[len(aw):]
	}
	if short {
		return strings.Join(aw, "-") + "." + strings.Join(ep, "-")
	}
	return api + "_api_" + strings.Join(ep, "_")
}

// render writes one tool of the output.
func render(t *Tool, api, name string, opt Options, rng *rand.Rand) map[string]any {
	m := map[string]any{"name": name, "description": t.Description}
	if len(t.InputSchema) > 0 {
		m["inputSchema"] = t.InputSchema
	}
	if opt.Short {
		return m
	}
	words := snakeWords(strings.TrimPrefix(name, api+"_api_"))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	m["title"] = strings.Join(words, " ")
	desc := strings.TrimSpace(strings.Join(strings.Fields(t.Description), " "))
	if desc != "" && !strings.ContainsAny(desc[len(desc)-1:], ".!?") {
		desc += "."
	}
	m["description"] = desc
	var out map[string]any
	if len(t.OutputSchema) > 0 {
		_ = json.Unmarshal(t.OutputSchema, &out) // a malformed schema gets an empty sample
	}
	sample, _ := json.Marshal(sampleOf(out, rng, 0))
	if opt.SampleField {
		m["x-response-sample"] = json.RawMessage(sample)
	} else {
		m["description"] = desc + " Sample response: " + string(sample)
	}
	return m
}

// Values of the samples: words of our own, so that a sample carries entity-like text without
// carrying the source's.
var (
	sampleNames = []string{"Northwind", "Blue Harbor", "Cedar Lane", "Aurora", "Maple Grove", "Redwood", "Silver Lake", "Orion"}
	sampleWords = []string{"active", "pending", "complete", "high", "moderate", "low", "available", "verified", "standard", "premium"}
)

// sampleOf is a JSON value in the shape of schema s: an object with every property, values by
// type and property name.
func sampleOf(s map[string]any, rng *rand.Rand, depth int) any {
	props, _ := s["properties"].(map[string]any)
	obj := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[k].(map[string]any)
		obj[k] = valueOf(k, p, rng, depth)
	}
	return obj
}

func valueOf(key string, p map[string]any, rng *rand.Rand, depth int) any {
	typ, _ := p["type"].(string)
	lk := strings.ToLower(key)
	switch typ {
	case "integer":
		return rng.IntN(1000)
	case "number":
		return float64(rng.IntN(100000)) / 100
	case "boolean":
		return rng.IntN(2) == 1
	case "array":
		items, _ := p["items"].(map[string]any)
		if depth > 2 {
			return []any{}
		}
		return []any{valueOf(key, items, rng, depth+1)}
	case "object":
		if depth > 2 {
			return map[string]any{}
		}
		return sampleOf(p, rng, depth+1)
	}
	switch {
	case strings.HasSuffix(lk, "id"):
		const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, 8)
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	case strings.Contains(lk, "date") || strings.Contains(lk, "time"):
		return fmt.Sprintf("2024-%02d-%02d", 1+rng.IntN(12), 1+rng.IntN(28))
	case strings.Contains(lk, "url") || strings.Contains(lk, "link"):
		return fmt.Sprintf("https://example.com/r/%d", rng.IntN(10000))
	case strings.Contains(lk, "name"):
		return sampleNames[rng.IntN(len(sampleNames))]
	}
	return sampleWords[rng.IntN(len(sampleWords))]
}

// joinNeeds joins two or three task sentences into one request.
func joinNeeds(qs []string, rng *rand.Rand) string {
	openers := []string{"", "I need some help: ", "For a project I'm working on, ", "Quick request: "}
	links := []string{" Also, ", " After that, ", " And ", " Then "}
	var b strings.Builder
	b.WriteString(openers[rng.IntN(len(openers))])
	for i, q := range qs {
		q = strings.TrimRight(q, ".!? ")
		if i > 0 {
			b.WriteString(".")
			l := links[rng.IntN(len(links))]
			b.WriteString(l)
			q = lowerFirst(q)
		} else if b.Len() > 0 {
			q = lowerFirst(q)
		}
		b.WriteString(q)
	}
	b.WriteString(".")
	return b.String()
}

func lowerFirst(s string) string {
	for i, r := range s {
		if i == 0 && unicode.IsUpper(r) && (len(s) == 1 || !unicode.IsUpper(rune(s[1]))) {
			return string(unicode.ToLower(r)) + s[1:]
		}
		break
	}
	return s
}

// snakeWords splits a name or phrase into lower-case words at non-alphanumerics and camelCase
// boundaries.
func snakeWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
