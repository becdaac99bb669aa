package engine

import (
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/caskg/caskg/graphs"
)

// Fuzzy matching covers what exact terms miss: typos in query words and skill identifiers
// written into a query ("run extract_tables", "use pdf-extarct").
const (
	typoWeight    = 0.7  // a corrected query term counts this much of an exact one
	nameMatchMin  = 0.75 // least name similarity (1 - distance/length) that counts as a mention
	minTypoLength = 4    // shorter words have too many neighbours at distance 1
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

// identifiers returns the tokens of a query that look like skill identifiers: runs of letters
// and digits joined by '_', '-', '.', '/' or ':', normalized by normName.
func identifiers(query string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(query, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
	}) {
		f = strings.Trim(f, "_-./:")
		if strings.ContainsAny(f, "_-.:/") || hasInnerUpper(f) {
			out = append(out, normName(f))
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
