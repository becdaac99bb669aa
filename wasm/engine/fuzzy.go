package engine

import (
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/caskg/caskg/graphs"
)

// Fuzzy matching covers what exact terms miss: typos in query words and skill identifiers
// written into a query ("run extract_tables", "use pdf-extarct").
const (
	typoWeight     = 0.7  // a corrected query term counts this much of an exact one
	nameMatchMin   = 0.75 // least name similarity (1 - distance/length) that counts as a mention
	minTypoLength  = 4    // shorter words have too many neighbours at distance 1
	maxIdentifiers = 32   // identifiers of one query compared with the skill names
)

// typoTerms returns lexicon terms within a small edit distance of word, which is not itself a
// lexicon term: distance 1 up to 7 bytes, 2 beyond. Only terms with the same first byte are
// considered; a typo in the first letter is rare and the restriction keeps the scan cheap.
func typoTerms(g *graphs.Graph, word string) []int {
	if len(word) < minTypoLength {
		return nil
	}
	maxd := 1
	if len(word) >= 8 {
		maxd = 2
	}
	// Terms are sorted, so those sharing the first byte form one run.
	lo, _ := g.FindTerm(word[:1])
	best, bestd := []int(nil), maxd+1
	for t := lo; t < g.NumTerms(); t++ {
		term := g.Term(t)
		if term[0] != word[0] {
			break
		}
		if diff := len(term) - len(word); diff > maxd || -diff > maxd {
			continue
		}
		d := levenshtein.ComputeDistance(word, term)
		switch {
		case d < bestd:
			best, bestd = append(best[:0], t), d
		case d == bestd:
			best = append(best, t)
		}
	}
	return best
}

// isNamePunct reports whether r is one of the separators _ - . / : of skill names.
func isNamePunct(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' || r == ':' }

// identifiers returns the distinct tokens of a query that look like skill identifiers — runs of
// letters and digits joined by '_', '-', '.', '/' or ':', or camelCase — normalized by normName,
// at most maxIdentifiers of them.
func identifiers(query string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(query, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	}) {
		// strings.Trim(f, "_-./:") and strings.ContainsAny(f, "_-.:/"), with functions the
		// WebAssembly module links anyway.
		f = strings.TrimFunc(f, isNamePunct)
		if strings.ContainsFunc(f, isNamePunct) || hasInnerUpper(f) {
			if id := normName(f); id != "" && !seen[id] {
				seen[id] = true
				out = append(out, id)
				if len(out) == maxIdentifiers {
					break
				}
			}
		}
	}
	return out
}

func hasInnerUpper(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// normName folds an identifier to lower-case words joined by single spaces, so that
// "Get_Current-Time", "getCurrentTime" and "get current time" compare equal.
func normName(s string) string { return strings.Join(Words(s), " ") }

// nameSimilarity is 1 - editDistance/maxLength of two normalized names.
func nameSimilarity(a, b string) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 0
	}
	if d := len(a) - len(b); float64(max(d, -d)) > (1-nameMatchMin)*float64(n) {
		return 0
	}
	return 1 - float64(levenshtein.ComputeDistance(a, b))/float64(n)
}

// nameIndex finds skill names similar to an identifier without comparing it to every name. It
// relies on the q-gram lemma: two strings within edit distance d share at least
// max(len) − 1 − 2d bigrams (counted with multiplicity), so only names reaching that count
// need the exact Levenshtein check.
type nameIndex struct {
	names []string
	grams map[string][]int32 // bigram with its occurrence number → names holding it
	short []int32            // names too short for the bigram bound to exclude anything
}

func newNameIndex(g *graphs.Graph) nameIndex {
	ix := nameIndex{names: make([]string, g.NumSkills()), grams: map[string][]int32{}}
	for i := range ix.names {
		name := normName(g.Name(i))
		ix.names[i] = name
		if gramBound(len(name), len(name)) <= 0 {
			ix.short = append(ix.short, int32(i))
		}
		for _, q := range bigrams(name) {
			ix.grams[q] = append(ix.grams[q], int32(i))
		}
	}
	return ix
}

// bigrams lists the byte bigrams of s, each tagged with how many times it occurred before.
func bigrams(s string) []string {
	seen := map[string]int{}
	out := make([]string, 0, max(0, len(s)-1))
	for i := 0; i+1 < len(s); i++ {
		b := s[i : i+2]
		out = append(out, b+string(rune('0'+min(seen[b], 70))))
		seen[b]++
	}
	return out
}

// gramBound is the least number of shared bigrams of strings of lengths la and lb whose
// similarity can reach nameMatchMin.
func gramBound(la, lb int) int {
	n := max(la, lb)
	d := int((1 - nameMatchMin) * float64(n))
	return n - 1 - 2*d
}

// match returns the names similar to any of ids, with their best similarity.
func (ix *nameIndex) match(ids []string) []candidate {
	best := map[int32]float64{}
	check := func(id string, v int32) {
		if s := nameSimilarity(id, ix.names[v]); s >= nameMatchMin && s > best[v] {
			best[v] = s
		}
	}
	shared := make([]int32, len(ix.names))
	var hit []int32
	for _, id := range ids {
		for _, v := range hit {
			shared[v] = 0
		}
		hit = hit[:0]
		for _, q := range bigrams(id) {
			for _, v := range ix.grams[q] {
				if shared[v] == 0 {
					hit = append(hit, v)
				}
				shared[v]++
			}
		}
		for _, v := range hit {
			if int(shared[v]) >= gramBound(len(id), len(ix.names[v])) {
				check(id, v)
			}
		}
		for _, v := range ix.short {
			if shared[v] == 0 {
				check(id, v)
			}
		}
		if gramBound(len(id), len(id)) <= 0 {
			// A very short identifier can match names it shares no bigram with.
			for v := range ix.names {
				check(id, int32(v))
			}
		}
	}
	out := make([]candidate, 0, len(best))
	for v, s := range best {
		out = append(out, candidate{int(v), s})
	}
	return out
}
