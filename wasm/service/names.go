package service

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"

	"github.com/caskg/caskg/wasm/engine"
)

// maxSuggestions is how many close names an unknown one gets.
const maxSuggestions = 5

// Names finds skills by the names callers give: exactly, else by a unique normalized form
// ("Heat_Object" finds heat-object); an unknown name gets the closest names. The MCP tools
// resolve get_skill, skill_neighbors and report_skill_use names with it.
type Names struct {
	eng    *engine.Engine
	byName map[string]int
	byNorm map[string][]int
	norms  []string
}

// NewNames indexes the skill names of eng's graph.
func NewNames(eng *engine.Engine) *Names {
	g := eng.Graph()
	n := &Names{eng: eng, byName: make(map[string]int, g.NumSkills()), byNorm: map[string][]int{}, norms: make([]string, g.NumSkills())}
	for i := range g.NumSkills() {
		n.byName[g.Name(i)] = i
		n.norms[i] = normName(g.Name(i))
		n.byNorm[n.norms[i]] = append(n.byNorm[n.norms[i]], i)
	}
	return n
}

// Exact returns the skill called exactly name.
func (n *Names) Exact(name string) (int, bool) {
	id, ok := n.byName[name]
	return id, ok
}

// Lookup finds the skill a caller means by name; the error names the field "name" and
// suggests the closest names.
func (n *Names) Lookup(name string) (int, error) {
	switch {
	case strings.TrimSpace(name) == "":
		return 0, errors.New(`field "name": empty`)
	case len(name) > MaxNameBytes:
		return 0, errors.New(`field "name": ` + strconv.Itoa(len(name)) + " bytes, at most " + strconv.Itoa(MaxNameBytes))
	case !utf8.ValidString(name):
		return 0, errors.New(`field "name": not valid UTF-8`)
	}
	if id, ok := n.Resolve(name); ok {
		return id, nil
	}
	if close := n.Closest(name); len(close) > 0 {
		return 0, errors.New("unknown skill " + strconv.Quote(Echo(name)) + "; the closest names are: " + strings.Join(close, ", "))
	}
	return 0, errors.New("unknown skill " + strconv.Quote(Echo(name)) + ", and no name is close to it; call retrieve_skills to search by task")
}

// resolve finds name exactly, trimmed, or by its normalized form when that is unique.
func (n *Names) Resolve(name string) (int, bool) {
	if id, ok := n.byName[name]; ok {
		return id, true
	}
	if id, ok := n.byName[strings.TrimSpace(name)]; ok {
		return id, true
	}
	if ids := n.byNorm[normName(name)]; len(ids) == 1 {
		return ids[0], true
	}
	return 0, false
}

// Closest returns up to maxSuggestions skill names for a name that matched none: first those
// within a small edit distance of its normalized form (a swap of two neighbouring letters
// counts as one edit), nearest first, then what the engine's lexical and fuzzy-name ranking
// finds for it.
func (n *Names) Closest(name string) []string {
	norm := normName(name)
	g := n.eng.Graph()
	var out []string
	seen := map[int]bool{}
	add := func(id int) {
		if !seen[id] && len(out) < maxSuggestions {
			seen[id] = true
			out = append(out, g.Name(id))
		}
	}
	type cand struct{ id, d int }
	var cs []cand
	for i, s := range n.norms {
		longer := max(len(s), len(norm))
		if d := len(s) - len(norm); max(d, -d) > longer/3 {
			continue // the distance is at least the length difference
		}
		d := levenshtein.ComputeDistance(norm, s)
		if transposed(norm, s) {
			d = 1
		}
		if d <= max(1, longer/3) {
			cs = append(cs, cand{i, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.id, b.id)) })
	for _, c := range cs {
		add(c.id)
	}
	if resp, err := n.eng.Query(engine.Request{Query: name, K: maxSuggestions, NoGraph: true}); err == nil {
		for _, r := range resp.Results {
			add(r.ID)
		}
	}
	return out
}

// transposed reports whether a and b differ by one swap of neighbouring bytes ("pfd", "pdf").
func transposed(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// normName folds a name to lower-case words joined by single spaces, as the engine's fuzzy
// name matching does.
func normName(s string) string { return strings.Join(engine.Words(s), " ") }
