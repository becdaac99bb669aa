package engine

import "github.com/caskg/caskg/graphs/errtext"

// Limits bound the fields of a request that a caller gives: the query's length, k, seeds and
// the sizes of a filter's lists. Bounds are the engine's own, which keep the core sound for any
// host; a service holds its callers to a tighter table (wasm/service's Service) through the same
// Check, so that every surface validates a request in one place.
type Limits struct {
	K, Seeds, QueryBytes, FilterPatterns, PatternBytes int
}

// Bounds are the engine's limits, which Query holds every request to.
var Bounds = Limits{K: MaxK, Seeds: MaxSeeds, QueryBytes: MaxQueryBytes, FilterPatterns: MaxFilterPatterns,
	PatternBytes: MaxPatternBytes}

// FieldError is a field of a request outside its limits. Field names it as the request's JSON
// does ("k", "filter.allow[2]") and Problem says how ("101 is outside [1, 100]"), so that each
// surface can name the field as its caller gave it: a flag, a GET parameter, an MCP argument.
type FieldError struct {
	_              [0]func() // not comparable: no equality function in the WebAssembly module
	Field, Problem string
}

func (e *FieldError) Error() string { return "engine: field \"" + e.Field + "\": " + e.Problem }

// Check is the one validation of a retrieval request's limits, which Query and every surface
// call: it holds r to l on the query's length, k, seeds and the sizes of the filter's lists,
// and returns nil or a *FieldError. A zero k or seeds means the engine's default, unless given
// names the field ("k", "seeds"): there the caller wrote the zero (a flag, a GET parameter, an
// MCP argument). The other fields, and the filter's syntax (Filter.Check), are the engine's
// alone and checked when it answers.
func (l *Limits) Check(r Request, given ...string) error {
	if len(r.Query) > l.QueryBytes {
		return &FieldError{Field: "query", Problem: errtext.Itoa(len(r.Query)) + " bytes, at most " + errtext.Itoa(l.QueryBytes)}
	}
	for _, f := range [...]struct {
		name   string
		v, max int
	}{{"k", r.K, l.K}, {"seeds", r.Seeds, l.Seeds}} {
		if (f.v != 0 || isGiven(given, f.name)) && (f.v < 1 || f.v > f.max) {
			return &FieldError{Field: f.name, Problem: outside(f.v, f.max)}
		}
	}
	// A list's field name is built only for its error: built up front, it was an allocation a
	// list on every request.
	for i, v := range [...][]string{r.Filter.Allow, r.Filter.Deny, r.Filter.Namespaces} {
		if len(v) > l.FilterPatterns {
			return &FieldError{Field: "filter." + filterLists[i], Problem: errtext.Itoa(len(v)) + " entries, at most " + errtext.Itoa(l.FilterPatterns)}
		}
		for j, p := range v {
			if len(p) > l.PatternBytes {
				return &FieldError{Field: "filter." + filterLists[i] + "[" + errtext.Itoa(j) + "]", Problem: errtext.Itoa(len(p)) + " bytes, at most " + errtext.Itoa(l.PatternBytes)}
			}
		}
	}
	return nil
}

// outside is the problem of an integer field v outside [1, max].
func outside(v, max int) string {
	return errtext.Itoa(v) + " is outside [1, " + errtext.Itoa(max) + "]"
}

func isGiven(given []string, name string) bool {
	for _, g := range given {
		if g == name {
			return true
		}
	}
	return false
}
