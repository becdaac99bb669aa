package engine

import "encoding/binary"

// Match strength (matchStrength). The constants were chosen on the dev task sets and on 20
// queries about what no library holds (docs/rationale.md, "Why is the match strength the bundle's
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

// matchStrength is the answer's match strength (Response.Match) for the first matchBundle
// results of ranked, read from the query's tokens toks and their terms, which seedRanking left
// in sc: each token weighs its BM25 weight (query weight times IDF; a misspelt word its best
// correction's), a word the index lacks that of a term no skill has, up to matchUnknown of
// them; the query's weight is their sum, capped at matchRare such terms. A token is covered as
// well as the best result covers one of its terms: its frequency factor over matchFull·(k1+1),
// at most 1; and fully when the memory of past tasks raised a result by it (recalled, a mask
// of token places). The strength is the covered weight over the query's weight, at most 1.
//
// A task with several needs is covered by several skills together, so it is strong where no
// one skill is; a query about what the library lacks leaves its weight uncovered however its
// relative scores fall.
func (e *Engine) matchStrength(sc *scratch, toks []queryToken, ranked []candidate, recalled uint64) float64 {
	// Comparisons written out: the min and max builtins on floats carry NaN and signed-zero
	// cases the WebAssembly module pays for at each use.
	g := e.g
	bundle := ranked[:min(matchBundle, len(ranked))]
	n := float64(g.NumSkills())
	k1, _, _ := g.BM25()
	full := matchFull * float64(k1+1)
	rare := idf(n, 0)
	var weight, covered float64
	terms, unknown := sc.terms, 0
	for i := range toks {
		var tw, tc float64 // the token's weight and covered weight
		for ; len(terms) > 0 && terms[0].tok == i; terms = terms[1:] {
			qt := terms[0]
			first, last := g.Postings(qt.term)
			w := qt.weight * idf(n, last-first)
			if w > tw {
				tw = w
			}
			// Postings are in ascending document order; their documents are read in place
			// (graphs.Graph.Posting is a call a posting in WebAssembly, and decodes the
			// frequency too).
			ps := g.PostingBytes(qt.term)
			np := len(ps) / 8
			for _, c := range bundle {
				// The last posting at or before c.id, halving as hasPosting does.
				p, n := 0, np
				for n > 1 {
					half := n >> 1
					p += half & -b2i(int(binary.LittleEndian.Uint32(ps[8*(p+half):])) <= c.id)
					n -= half
				}
				if np > 0 && int(binary.LittleEndian.Uint32(ps[8*p:])) == c.id {
					x := e.impacts[first+p] / full
					if x > 1 {
						x = 1
					}
					if x *= w; x > tc {
						tc = x
					}
				}
			}
		}
		byMemory := i < 64 && recalled&(1<<i) != 0
		if tw == 0 { // a word the index lacks
			if !byMemory && unknown == matchUnknown {
				continue
			}
			unknown += b2i(!byMemory)
			tw = rare
		}
		if byMemory {
			tc = tw
		}
		weight, covered = weight+tw, covered+tc
	}
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
