package engine

// Match strength (matchStrength). The constants were chosen on the dev task sets and on 20
// queries about what no library holds (RATIONALE.md, "Why is the match strength the bundle's
// cover of the query?").
const (
	// matchBundle is how many of the answer's first results the strength counts: the bundle
	// an agent is given at the default k, whatever k a request asks for.
	matchBundle = DefaultK
	// matchRare caps the query's weight at this many terms no skill has: a long task text is
	// matched by a bundle that covers its distinctive words, not every word it says.
	matchRare = 3
	// matchUnknown is how many words the index lacks count in the query's weight: a task names
	// files, objects and people no skill does, and a query of only such words is already 0.
	matchUnknown = 2
	// matchFull is the share of the most a term's frequency factor gives (k1+1) at which a
	// skill's text covers the term fully: a word its name or description says, not one in
	// passing in a long body.
	matchFull = 0.5
	// WeakMatch is the Response.Match below which no skill matches the task well, and
	// WeakMatchNote the answer's note then.
	WeakMatch     = 0.4
	WeakMatchNote = "no skill matches this task well (match below 0.4)"
)

// matchStrength is the answer's match strength (Response.Match) for the ranked answer, read
// from the query's terms that seedRanking left in sc: each term's weight is its BM25 weight
// (query weight times IDF) and each word the index lacks weighs as a term no skill has, up to
// matchUnknown of them; the query's weight is their sum, capped at matchRare such terms. A term
// is covered as well as the best of the first matchBundle results covers it: its frequency
// factor over matchFull·(k1+1), at most 1; a misspelt word as well as the best of its
// corrections. The strength is the covered weight over the query's weight, at most 1.
//
// A task with several needs is covered by several skills together, so it is strong where no
// one skill is; a query about what the library lacks leaves its weight uncovered however its
// relative scores fall.
func (e *Engine) matchStrength(sc *scratch, ranked []candidate) float64 {
	// Comparisons written out: the min and max builtins on floats carry NaN and signed-zero
	// cases the WebAssembly module pays for at each use.
	g := e.g
	bundle := ranked[:min(matchBundle, len(ranked))]
	n := float64(g.NumSkills())
	k1, _, _ := g.BM25()
	full := matchFull * float64(k1+1)
	rare := idf(n, 0)
	doc := func(p int) int { d, _ := g.Posting(p); return d }
	weight := float64(min(sc.unknown, matchUnknown)) * rare
	var covered, tw, tc float64 // the current token's weight and covered weight
	for i, qt := range sc.terms {
		if i > 0 && qt.tok != sc.terms[i-1].tok {
			weight, covered, tw, tc = weight+tw, covered+tc, 0, 0
		}
		first, last := g.Postings(qt.term)
		w := qt.weight * idf(n, last-first)
		if w > tw {
			tw = w
		}
		for _, c := range bundle {
			// Postings are in ascending document order.
			p := first + search(last-first, func(j int) bool { return doc(first+j) >= c.id })
			if p < last && doc(p) == c.id {
				x := e.impacts[p] / full
				if x > 1 {
					x = 1
				}
				if x *= w; x > tc {
					tc = x
				}
			}
		}
	}
	weight, covered = weight+tw, covered+tc
	if cap := matchRare * rare; weight > cap {
		weight = cap
	}
	if weight <= 0 || covered >= weight {
		return float64(b2i(weight > 0))
	}
	return covered / weight
}

// strength sets each result's Match from the answer's and the weak-match note when no other
// note is set, and drops the results whose Match is below minScore.
func (r *Response) strength(minScore float64) {
	s := r.Match
	if r.Note == "" && s < WeakMatch {
		r.Note = WeakMatchNote
	}
	for i := range r.Results {
		m := r.Results[i].Score * s
		if m < minScore {
			r.Results = r.Results[:i]
			return
		}
		r.Results[i].Match = m
	}
}
