package engine

import "math"

// A query's work must not grow with the library beyond what it touches: at 100,000 skills a
// fresh set of per-skill arrays costs more than the rest of the query (and, in WebAssembly, a
// garbage collection every few queries). Each query therefore borrows a scratch — per-skill
// arrays that are all zero (or false) between queries — and gives it back clean, resetting only
// the entries it touched. Concurrent queries each borrow their own.

// scratch is one query's per-skill workspace. Every array has one entry per skill.
type scratch struct {
	bm25   []float64 // BM25 scores of the query's lexical candidates
	pi     []float64 // PPR restart vector
	p, q   []float64 // PPR estimate; power iteration's next iterate or forward push's residual
	mark   []uint32  // per-pass visit marks: a skill is visited in the pass whose stamp it holds
	stamp  uint32
	want   []int32   // the answer's skills whose reach Via asks for (viaSources)
	count  []uint32  // name matching: the identifier's stamp << 8 | bigrams the name shares with it
	nstamp uint32    // the last identifier's stamp (24 bits)
	nodes  []int32   // forward push: every node whose residual became non-zero
	queue  []int32   // forward push: the queue (any contents between queries)
	sketch []int32   // semantic prefilter: every skill's sketch score, or nearest16's q̃·x (any values between queries)
	cos    []float64 // exact semantic scan: every skill's approximate cosine (any values between queries)
	sums   []int64   // exact semantic scan: q̃·x for each packed word (any values between queries)
	pass   []int32   // exact semantic scan: the skills whose approximate cosine passes the cut

	// Buffers reused from query to query (any contents between queries): a query at 100,000
	// skills would otherwise allocate hundreds of KB in them, and in WebAssembly the garbage
	// collections that follow were a tenth of the time.
	grams    []uint32     // name matching: the identifier's tagged bigrams
	hit      []int32      // name matching: names found in enough of the scanned bigram lists
	lists    []gramList   // name matching: the identifier's bigrams by postings length
	spans    []postSpan   // name matching: per bigram, where its postings for each name length are
	needs    []int        // name matching: the bigrams a name of each length must share
	live     []int32      // name matching: found names not yet known to share enough bigrams, or not to
	cols     []int32      // name matching: per name length, the live names, or -1 when the list is marked
	pool     []candidate  // semantic prefilter: the skills whose vectors are compared
	hist     []int32      // semantic prefilter: skills per sketch score
	cscore   []float32    // vector clusters: each centroid's cosine to the query (up to scale), then -Inf once probed
	cdots    []int32      // vector clusters: each centroid's integer dot product with the rounded query
	probed   []int32      // vector clusters: the members of the clusters probed
	tokens   []queryToken // the query's distinct terms (analyze)
	terms    []queryTerm  // their lexicon terms (seedRanking), which matchStrength reads
	acc      []float64    // the query encoder's sum (embedTokens)
	qvec     []float32    // the query vector embedTokens makes (valid until the query ends)
	qi       []int16      // the query vector rounded to 16-bit lanes (roundQuery16)
	seedIDs  []int32      // rank: the seeds in ascending order, as push starts from
	linkIDs  []int        // rank: the seeds' neighbours, in the order first linked
	linkMiss []float64    // rank: per linked skill, Π (1 − f_u·c) over the seeds linked to it
	sem      []candidate  // the semantic list (semanticRanking), until the query ends
	head     []candidate  // seedRanking: the BM25 head
	fused    []candidate  // seedRanking: the fused list, until the query ends
	top      []candidate  // rank: the answer's candidates
	via      []candidate  // via: the entries into one result

	// Per-skill look-ups of one query without a map: listed (seedRanking's fused list, then the
	// answer) and linked (name matches, then the seeds' neighbours).
	listed, linked slots

	// analyze: per vocabulary term, its index in tokens, so a repeated term is counted without
	// a map.
	vocabSeen slots

	// The memory of past tasks (memory.go): per memory document its score and the query tokens
	// it matched (zero between queries), the nearest documents, the query's terms in the order
	// recall adds them and what the terms after each can add, the documents that can still
	// reach the nearest, and per skill its place among the votes.
	memScore   []float64
	memHit     []uint64
	memTop     []candidate
	memTouched []int32 // the documents the query's postings reached (any contents between queries)
	memTerms   []memTerm
	memRest    []float64
	memCand    []int32
	voted      slots
}

// slots maps skills (or vocabulary terms) to small integers (an index into a list) for one use at a time: an entry
// holds the use's stamp above 32 bits and the value below, so starting a use clears nothing.
type slots struct {
	v     []uint64
	stamp uint32
}

// reset starts a use over n skills: every skill unset.
func (s *slots) reset(n int) {
	if len(s.v) < n {
		s.v = make([]uint64, n)
	}
	s.stamp++
	if s.stamp == 0 {
		clear(s.v)
		s.stamp = 1
	}
}

// get returns skill i's value, and whether it is set in this use.
func (s *slots) get(i int) (int, bool) {
	x := s.v[i]
	return int(uint32(x)), uint32(x>>32) == s.stamp
}

// set sets skill i's value (at most 1<<32 − 1).
func (s *slots) set(i, x int) { s.v[i] = uint64(s.stamp)<<32 | uint64(uint32(x)) }

func (e *Engine) getScratch() *scratch {
	for i := range e.pool {
		if s := e.pool[i].Swap(nil); s != nil {
			return s
		}
	}
	n := e.g.NumSkills()
	return &scratch{bm25: make([]float64, n), pi: make([]float64, n), p: make([]float64, n),
		q: make([]float64, n), mark: make([]uint32, n),
		count: make([]uint32, n), want: make([]int32, 0, MaxK)}
}

// nextStamp returns a stamp no entry of s.mark holds yet.
func (s *scratch) nextStamp() uint32 {
	s.stamp++
	if s.stamp == 0 { // wrapped: no old mark may look current
		clear(s.mark)
		s.stamp = 1
	}
	return s.stamp
}

// nextNameStamp returns a 24-bit stamp no entry of s.count holds yet.
func (s *scratch) nextNameStamp() uint32 {
	s.nstamp++
	if s.nstamp == 1<<24 {
		clear(s.count)
		s.nstamp = 1
	}
	return s.nstamp
}

// putScratch returns s to the pool; its arrays must be zero again.
func (e *Engine) putScratch(s *scratch) {
	s.nodes = s.nodes[:0]
	for i := range e.pool {
		if e.pool[i].CompareAndSwap(nil, s) {
			return
		}
	}
}

// scratchSlots is how many scratches an engine keeps for reuse: as many queries can run at once
// without allocating (a WebAssembly instance runs one). A slot array of atomic pointers rather
// than a sync.Pool, which would add about 10 KB gzip to the module.
const scratchSlots = 8

// topCandidates keeps the best k candidates offered to it (score descending, then id), in a
// heap whose root is the worst kept, so that selecting the top k of m candidates costs
// O(m + k log k · log m) instead of sorting all m.
type topCandidates struct {
	k int
	h []candidate
}

// worse reports whether a ranks after b.
func worse(a, b candidate) bool { return better(b, a) }

// offer considers c.
func (t *topCandidates) offer(c candidate) {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		// Sift up: the root must be the worst.
		for i := len(t.h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(t.h[i], t.h[parent]) {
				break
			}
			t.h[i], t.h[parent] = t.h[parent], t.h[i]
			i = parent
		}
		return
	}
	if t.k == 0 || !better(c, t.h[0]) {
		return
	}
	t.h[0] = c
	for i := 0; ; {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == i {
			break
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// b2i is 1 for true and 0 for false. The compiler turns it into a select on integers, without a
// branch: the hot loops count with it instead of branching (see offerPositive).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// offerPositive offers every skill with a positive score in scores (none is negative): four at
// a time, with one branch for the four unless one of them can enter. In WebAssembly each taken
// branch goes through the function's block dispatcher (how Go compiles for it), and a branch per
// skill made this scan, over the 73,000 BM25-scored skills of a query at 100,000 skills, three
// times as slow. Positive scores order as their bits do, compared as integers without a branch.
func (t *topCandidates) offerPositive(scores []float64) {
	d := 0
	for ; d < len(scores) && len(t.h) < t.k; d++ {
		if scores[d] > 0 {
			t.offer(candidate{d, scores[d]})
		}
	}
	if t.k == 0 {
		return
	}
	for ; d+4 <= len(scores); d += 4 {
		q := scores[d : d+4 : d+4]
		bound := math.Float64bits(t.h[0].score) // positive: unscored skills stay below
		if b2i(math.Float64bits(q[0]) >= bound)|b2i(math.Float64bits(q[1]) >= bound)|
			b2i(math.Float64bits(q[2]) >= bound)|b2i(math.Float64bits(q[3]) >= bound) != 0 {
			for j, s := range q {
				t.offer(candidate{d + j, s})
			}
		}
	}
	for ; d < len(scores); d++ {
		if scores[d] > 0 {
			t.offer(candidate{d, scores[d]})
		}
	}
}

// sorted returns the kept candidates, best first.
func (t *topCandidates) sorted() []candidate {
	sortCandidates(t.h)
	return t.h
}
