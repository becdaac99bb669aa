package engine

import (
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// The memory of past tasks: which words asked for which tools. Runs that carry their task
// text teach it (BuildMemory); the artifact keeps, per tool set, the terms of the tasks that
// used it, and only terms enough runs shared, never the text (graphs/memory.go). At query time
// the query's terms find the nearest tool sets by BM25, each of the nearest memDepth votes for
// its skills with its score over the best one (a failed set votes against), and the votes are
// added to the ranking with the weight the build calibrated on held-out runs (FitMemory): where
// past tasks recur in other words the weight is high and memory decides; where they do not it
// is zero and memory is silent. docs/rationale.md ("Why tool-set documents …") says why this design.

// Memory defaults.
const (
	// DefaultTaskMinRuns is how many distinct runs must share a term of their tasks before it
	// enters the artifact: a term of one prompt, a key or an address pasted into one task,
	// never does.
	DefaultTaskMinRuns = 3
	// DefaultPerSet bounds the distinct task texts one tool set keeps, newest first, so a
	// long-lived gateway's memory grows with the tool sets it has seen, not with its runs.
	DefaultPerSet = 64
	// memDepth is how many nearest tool sets vote, as in the reference method's 20 nearest runs.
	memDepth = 20
	// memFolds and memHeldOut bound the calibration: at most memHeldOut runs are held out, in
	// memFolds folds, each answered by a memory of the runs outside its fold.
	memFolds   = 5
	memHeldOut = 1000
	// memCalibK is how many graph results calibration reads per held-out run: a skill below
	// them has graph evidence too small to matter beside a vote.
	memCalibK = 50
)

// memWeights are the fusion weights calibration chooses from; the last is "memory decides".
var memWeights = []float64{0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 1000}

// PastRun is one run as the memory takes it: what it was asked, the skills it used (ids of the
// artifact's skills, any order), whether it failed, and who reported it ("" for a trusted run).
type PastRun struct {
	Task     string
	Skills   []int
	Failed   bool
	Reporter string
}

// MemoryOptions are BuildMemory's rules. Zero values mean the defaults.
type MemoryOptions struct {
	MinRuns      int // DefaultTaskMinRuns
	MinReporters int // reporters that must agree on a reported tool set or term; 2
	PerSet       int // DefaultPerSet
}

func (o MemoryOptions) orDefaults() MemoryOptions {
	o.MinRuns = orDefault(o.MinRuns, DefaultTaskMinRuns)
	o.MinReporters = orDefault(o.MinReporters, 2)
	o.PerSet = orDefault(o.PerSet, DefaultPerSet)
	return o
}

// MemoryStats says what BuildMemory kept and why not the rest, for build reports and inspect.
type MemoryStats struct {
	Runs         int       `json:"runs"`                  // runs remembered
	NoTask       int       `json:"runs_without_task"`     // runs with no task text (or no known skill)
	Capped       int       `json:"runs_capped"`           // runs beyond a tool set's newest PerSet tasks
	Unagreed     int       `json:"reported_unagreed"`     // reported runs of tool sets too few reporters gave
	Sets         int       `json:"tool_sets"`             // documents: distinct tool sets (failed apart)
	TermsKept    int       `json:"terms_kept"`            // terms enough runs shared
	TermsDropped int       `json:"terms_dropped"`         // terms of too few runs: never written
	Weight       float64   `json:"weight"`                // the calibrated fusion weight (FitMemory)
	HeldOut      int       `json:"held_out,omitempty"`    // runs calibration held out
	Hits         []int     `json:"calibration,omitempty"` // held-out runs complete in the top 10, per weight of memWeights
	Weights      []float64 `json:"weights,omitempty"`     // memWeights
}

// BuildMemory makes the memory of past tasks from runs: their tool sets, each with the terms of
// its tasks (Tokenize, as queries are analyzed) that at least opt.MinRuns distinct task texts
// share; nil when no run has a task with a kept term. Trusted runs count as they are, identical
// task texts of a tool set merged, at most opt.PerSet distinct texts a set, newest first. A
// reported run counts once per reporter and tool set, and only for a set that opt.MinReporters
// reporters gave: one reporter, however often it reports, makes no word point at a tool. A term
// of reported tasks counts once per reporter, and only when opt.MinReporters reporters used it.
// The fusion weight is left 0: FitMemory calibrates it.
func BuildMemory(runs []PastRun, opt MemoryOptions) (*graphs.Memory, MemoryStats) {
	return newMemCorpus(runs).build(opt.orDefaults(), nil)
}

// setKey identifies a tool set (ascending ids) and whether its runs failed.
func setKey(ids []int, failed bool) string {
	var b strings.Builder
	if failed {
		b.WriteByte('!')
	}
	for _, id := range ids {
		b.WriteString(errtext.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// recallIndex is a memory ready to answer queries.
type recallIndex struct {
	weight float64
	depth  int
	terms  []string  // ascending
	off    []int32   // postings of term t: [off[t], off[t+1])
	doc    []int32   // per posting: its document
	imp    []float64 // per posting: BM25's term-frequency factor times the term's idf
	bound  []float64 // per term: its postings' largest impact, what it can add to a score
	long   []int32   // per term: its place among the long lists (longList), -1 for a short one
	lbits  []uint64  // per long list: a bitmap over the documents, 64 to a word
	lrank  []int32   // per long list and word: the list's postings before the word's documents
	runs   []int32   // per document
	failed []bool    // per document
	soff   []int32   // skills of document d: skills[soff[d]:soff[d+1]]
	skills []int32
}

// memoryOf reads g's memory of past tasks, nil without one: each posting's BM25 term-frequency
// factor times its term's idf computed once, as bm25Impacts does for the lexicon.
func memoryOf(g *graphs.Graph) *recallIndex {
	if !g.HasMemory() || g.NumMemoryDocs() == 0 {
		return nil
	}
	k1f, bf, avgf, weight, depth, _ := g.MemoryParams()
	nd, nt := g.NumMemoryDocs(), g.NumMemoryTerms()
	r := &recallIndex{weight: float64(weight), depth: depth, terms: make([]string, nt),
		off: make([]int32, nt+1), runs: make([]int32, nd), failed: make([]bool, nd), soff: make([]int32, nd+1)}
	norm := make([]float64, nd)
	k1, b, avg := float64(k1f), float64(bf), max(float64(avgf), 1e-9)
	for d := range nd {
		l, runs, failed := g.MemoryDoc(d)
		norm[d] = k1 * (1 - b + b*float64(l)/avg)
		r.runs[d], r.failed[d] = int32(runs), failed
		ids := g.MemorySkills(d)
		for i := 0; i+4 <= len(ids); i += 4 {
			r.skills = append(r.skills, int32(binary.LittleEndian.Uint32(ids[i:])))
		}
		r.soff[d+1] = int32(len(r.skills))
	}
	for t := range nt {
		r.terms[t] = g.MemoryTerm(t)
		ps := g.MemoryPostingBytes(t)
		r.off[t+1] = r.off[t] + int32(len(ps)/8)
		df := float64(len(ps) / 8)
		idf := math.Log(1 + (float64(nd)-df+0.5)/(df+0.5))
		for i := 0; i+8 <= len(ps); i += 8 {
			d, tf := int32(binary.LittleEndian.Uint32(ps[i:])), float64(math.Float32frombits(binary.LittleEndian.Uint32(ps[i+4:])))
			r.doc = append(r.doc, d)
			r.imp = append(r.imp, idf*tf*(k1+1)/(tf+norm[d]))
		}
	}
	return r.withBounds()
}

// withBounds sets each term's bound, its postings' largest impact, and the bitmaps of the long
// lists (longList), and returns r.
func (r *recallIndex) withBounds() *recallIndex {
	nd, words, nl := len(r.runs), (len(r.runs)+63)/64, 0
	r.bound, r.long = make([]float64, len(r.terms)), make([]int32, len(r.terms))
	for t := range r.bound {
		r.long[t] = -1
		if int(r.off[t+1]-r.off[t])*longList >= nd {
			r.long[t] = int32(nl)
			nl++
		}
		for _, v := range r.imp[r.off[t]:r.off[t+1]] {
			r.bound[t] = max(r.bound[t], v)
		}
	}
	r.lbits, r.lrank = make([]uint64, nl*words), make([]int32, nl*words)
	for t, k := range r.long {
		if k < 0 {
			continue
		}
		set, rank := r.bitsOf(int32(t))
		for _, d := range r.doc[r.off[t]:r.off[t+1]] {
			set[d>>6] |= 1 << (d & 63)
		}
		n := int32(0)
		for w, x := range set {
			rank[w] = n
			n += int32(bits.OnesCount64(x))
		}
	}
	return r
}

// bitsOf is long term t's bitmap over the documents and, per 64 of them, how many of its
// postings come before.
func (r *recallIndex) bitsOf(t int32) ([]uint64, []int32) {
	words := (len(r.runs) + 63) / 64
	k := int(r.long[t]) * words
	return r.lbits[k : k+words], r.lrank[k : k+words]
}

// find returns the index of term s, or -1.
func (r *recallIndex) find(s string) int {
	i := search(len(r.terms), func(i int) bool { return r.terms[i] >= s })
	if i < len(r.terms) && r.terms[i] == s {
		return i
	}
	return -1
}

// vote is a skill's standing in the memory's answer to a query.
type vote struct {
	id    int
	score float64 // Σ ±s_d/s_best over the voting documents that hold it (− for failed ones)
	runs  int     // runs of the successful voting documents that hold it
	terms uint64  // the query's tokens (by place, the first 64) those documents matched
}

// memTerm is a query term the memory holds, as recall visits it: its index, the query token's
// bit (its place, the first 64), its postings' largest impact and whether its list is long.
type memTerm struct {
	_     [0]func() // not comparable: no equality function in the WebAssembly module
	t     int32
	long  bool
	bit   uint64
	bound float64
}

// boundSlack widens a sum of impact bounds to cover the rounding of the sums it bounds, which
// add the same or smaller impacts in another order: a document is dropped only when even the
// widened bound cannot reach the threshold.
const boundSlack = 1 + 1e-9

// longList is how many times a term's postings must number fewer than the documents for recall
// to read its list whole: a longer list (a word most tasks share) is looked up, a document at a
// time, only for the documents that can still reach the nearest.
const longList = 8

// recall returns the votes of the depth nearest documents for the query's distinct terms toks,
// in no particular order, with the largest |score|; nil when no document shares a term.
//
// A document's score is the sum of its terms' impacts, added in one order: the terms with
// short lists first, then the long ones, each group in the query's order. Recall prunes as MaxScore does. It reads the short lists
// whole. When at least depth documents already score above what the long lists can add
// together, no document only those reach can be among the nearest: the long lists (the common
// words, most of a query's postings) are looked up through their bitmaps only for the
// documents whose score with the most the unread terms add still reaches the depth-th, and
// that set shrinks term by term. Otherwise they are read whole as well. Either way the sums
// are bit for bit what adding every posting gives (TestRecallExhaustive), and the nearest are
// the same as over every document.
func (r *recallIndex) recall(sc *scratch, toks []queryToken) ([]vote, float64) {
	if r == nil || r.depth <= 0 {
		return nil, 0
	}
	nd, nd4 := len(r.runs), (len(r.runs)+3)&^3
	if len(sc.memScore) < nd4 {
		sc.memScore, sc.memHit = make([]float64, nd4), make([]uint64, nd4)
	}
	scores, hits := sc.memScore[:nd4], sc.memHit[:nd]
	// The query's terms the memory holds: those with short lists, then the long ones, each
	// in the query's order (the long ones copied past the end, then moved up).
	qs, np := sc.memTerms[:0], 0
	for qi, tk := range toks {
		t := r.find(tk.text)
		if t < 0 {
			continue
		}
		var bit uint64
		if qi < 64 {
			bit = 1 << qi
		}
		qs = append(qs, memTerm{t: int32(t), long: r.long[t] >= 0, bit: bit, bound: r.bound[t]})
		np += int(r.off[t+1] - r.off[t])
	}
	n, k := len(qs), 0
	for i := range n {
		if qs[i].long {
			qs = append(qs, qs[i])
		}
	}
	for i := range n {
		if !qs[i].long {
			qs[k] = qs[i]
			k++
		}
	}
	k += copy(qs[k:], qs[n:])
	qs = qs[:k]
	sc.memTerms = qs
	if len(qs) == 0 {
		return nil, 0
	}
	if cap(sc.memRest) <= len(qs) {
		sc.memRest = make([]float64, len(qs)+1)
	}
	rest := sc.memRest[:len(qs)+1] // rest[j]: Σ bound of qs[j:]
	rest[len(qs)] = 0
	for j := len(qs) - 1; j >= 0; j-- {
		rest[j] = rest[j+1] + qs[j].bound
	}
	sc.memRest = rest
	short := 0 // the short lists' postings
	for _, q := range qs {
		short += b2i(!q.long) * int(r.off[q.t+1]-r.off[q.t])
	}
	// Few postings against the documents: a document joins the touched list at its first
	// posting (written at the list's end, kept by advancing the count, as forward push keeps its
	// queue) and only the touched ones are read back and cleared. Otherwise every document is
	// read back by one pass over the score array, cheaper when most are reached.
	sparse := short*2 < nd
	if cap(sc.memTouched) < np {
		sc.memTouched = make([]int32, np)
	}
	if cap(sc.memCand) < max(np, nd4) {
		sc.memCand = make([]int32, max(np, nd4))
	}
	touched, cand := sc.memTouched[:np], sc.memCand[:max(np, nd4)]
	nt, nc, j := 0, 0, 0
	if !sparse {
		touched = nil // read adds to every document's score, offer reads them all back
	}
	top := topCandidates{k: r.depth, h: sc.memTop[:0]}
	for pass := 0; pass < 2; pass++ {
		// Pass 0 reads the short lists; pass 1, when fewer than depth documents stand above
		// what the long lists add, the long ones too, whole.
		for ; j < len(qs) && (pass == 1 || !qs[j].long); j++ {
			nt = r.read(qs[j], scores, hits, touched, nt)
		}
		top.h = top.h[:0]
		if sparse {
			nc = top.offerTouched(scores, touched[:nt], cand, rest[j])
		} else {
			nc = top.offerAll(scores, cand, rest[j])
		}
		if j == len(qs) || (len(top.h) == top.k && top.h[0].score > rest[j]*boundSlack) {
			break
		}
	}
	for ; j < len(qs); j++ {
		theta, k := top.h[0].score, 0
		for _, d := range cand[:nc] {
			cand[k] = d
			k += b2i((scores[d]+rest[j])*boundSlack >= theta)
		}
		nc = k
		q := qs[j]
		base := r.off[q.t]
		set, rank := r.bitsOf(q.t)
		top.h = top.h[:0]
		for _, d := range cand[:nc] {
			w, b := d>>6, uint64(1)<<(d&63)
			if set[w]&b != 0 {
				scores[d] += r.imp[base+rank[w]+int32(bits.OnesCount64(set[w]&(b-1)))]
				hits[d] |= q.bit
			}
			top.offer(candidate{int(d), scores[d]})
		}
	}
	docs := top.sorted()
	sc.memTop = docs
	if len(docs) == 0 {
		r.clear(scores, hits, touched[:nt], !sparse)
		return nil, 0
	}
	best := docs[0].score
	var votes []vote
	at := &sc.voted
	at.reset(len(sc.bm25))
	for _, c := range docs {
		w := c.score / best
		if r.failed[c.id] {
			w = -w
		}
		hit := sc.memHit[c.id]
		for _, s := range r.skills[r.soff[c.id]:r.soff[c.id+1]] {
			k, ok := at.get(int(s))
			if !ok {
				k = len(votes)
				at.set(int(s), k)
				votes = append(votes, vote{id: int(s)})
			}
			v := &votes[k]
			v.score += w
			if !r.failed[c.id] {
				v.runs += int(r.runs[c.id])
				v.terms |= hit
			}
		}
	}
	r.clear(scores, hits, touched[:nt], !sparse)
	var norm float64
	for _, v := range votes {
		norm = max(norm, math.Abs(v.score))
	}
	return votes, norm
}

// read adds term q's impacts to the scores of its documents and marks them hit by it. With a
// touched list, it lists there each document at its first posting (written at the list's end,
// kept by advancing the count, as forward push keeps its queue) and returns the new count.
// In WebAssembly the loops are kernels (packed_wasm.s): a branch per posting, the bounds
// checks', goes through the function's block dispatcher there.
func (r *recallIndex) read(q memTerm, scores []float64, hits []uint64, touched []int32, nt int) int {
	docs, imps := r.doc[r.off[q.t]:r.off[q.t+1]], r.imp[r.off[q.t]:r.off[q.t+1]]
	if touched == nil {
		addPostings(scores, hits, docs, imps, q.bit)
		return nt
	}
	return addPostingsTouched(scores, hits, docs, imps, touched, q.bit, nt)
}

// addPostingsGo adds imps[i] to scores[docs[i]] and bit to hits[docs[i]], each posting i.
func addPostingsGo(scores []float64, hits []uint64, docs []int32, imps []float64, bit uint64) {
	imps = imps[:len(docs)]
	for i, d := range docs {
		scores[d] += imps[i]
		hits[d] |= bit
	}
}

// addPostingsTouchedGo is addPostingsGo that writes each document at touched[nt] and keeps it
// (nt+1) when nothing was added to it before (impacts are positive); it returns nt.
func addPostingsTouchedGo(scores []float64, hits []uint64, docs []int32, imps []float64, touched []int32, bit uint64, nt int) int {
	imps = imps[:len(docs)]
	for i, d := range docs {
		touched[nt] = d
		nt += b2i(math.Float64bits(scores[d]) == 0)
		scores[d] += imps[i]
		hits[d] |= bit
	}
	return nt
}

// offerTouched offers t the touched documents' scores and lists in cand, returning how many,
// those that with rest added reach the depth-th score so far: a superset of those that can reach
// the final depth-th.
func (t *topCandidates) offerTouched(scores []float64, touched, cand []int32, rest float64) int {
	nc, theta, lo := 0, 0.0, 0.0 // lo: below the least score listed
	for _, d := range touched {
		s := scores[d]
		if s < lo {
			continue
		}
		if s > 0 && s >= theta {
			t.offer(candidate{int(d), s})
			if len(t.h) == t.k {
				theta = t.h[0].score
				lo = theta/boundSlack - rest - theta*1e-9
			}
		}
		cand[nc] = d
		nc += b2i(s > 0) & b2i((s+rest)*boundSlack >= theta)
	}
	return nc
}

// offerAll is offerTouched over every document (scores has a multiple of 4, those past the
// documents 0): offerPositive gives the depth best, then the documents that with rest added
// reach the depth-th are listed, four at a time: nextAbove skips the fours none of which can.
func (t *topCandidates) offerAll(scores []float64, cand []int32, rest float64) int {
	t.offerPositive(scores)
	if len(t.h) < t.k {
		return 0 // recall reads the long lists whole, and offers again
	}
	// Below the least score listed by a margin far above the rounding of its test.
	nc, theta, lo := 0, t.h[0].score, uint64(1)
	if v := theta/boundSlack - rest - theta*1e-9; v > 0 {
		lo = math.Float64bits(v)
	}
	for d := 0; ; d += 4 {
		if d = nextAbove(scores, d, lo); d+4 > len(scores) {
			return nc
		}
		for i, s := range scores[d : d+4] {
			cand[nc] = int32(d + i)
			nc += b2i(s > 0) & b2i((s+rest)*boundSlack >= theta)
		}
	}
}

// nextAboveGo is the first d' ≥ d, d' ≡ d mod 4, whose four scores from d' hold one whose bits
// are lo or more, or the first d' past len(scores) − 4: one branch for four scores.
func nextAboveGo(scores []float64, d int, lo uint64) int {
	for ; d+4 <= len(scores); d += 4 {
		q := scores[d : d+4 : d+4]
		if b2i(math.Float64bits(q[0]) >= lo)|b2i(math.Float64bits(q[1]) >= lo)|
			b2i(math.Float64bits(q[2]) >= lo)|b2i(math.Float64bits(q[3]) >= lo) != 0 {
			return d
		}
	}
	return d
}

// clear zeroes the scores and matched terms of the documents recall touched, or of all.
func (r *recallIndex) clear(scores []float64, hits []uint64, touched []int32, all bool) {
	if all {
		clear(scores)
		clear(hits)
		return
	}
	for _, d := range touched {
		scores[d], hits[d] = 0, 0
	}
}

// Recall is the memory's evidence for a result: how many past runs whose tasks shared the
// query's words used it, and those words.
type Recall struct {
	Runs  int      `json:"runs"`
	Terms []string `json:"terms"`
}

// Evidence says in a few words what the memory recalled, in the words every door prints, e.g.
// "recalled: 14 past runs (stock, news)": the runs and the query's terms (as the index keeps
// them, stemmed) their tasks shared.
func (rc *Recall) Evidence() string {
	s := "recalled: " + errtext.Itoa(rc.Runs) + " past run"
	if rc.Runs != 1 {
		s += "s"
	}
	for i, t := range rc.Terms {
		if i == 0 {
			s += " ("
		} else {
			s += ", "
		}
		s += t
	}
	if len(rc.Terms) > 0 {
		s += ")"
	}
	return s
}

// recallOf is the evidence of v among toks, the query's distinct terms.
func recallOf(v vote, toks []queryToken) *Recall {
	rc := &Recall{Runs: v.runs}
	for i := range min(len(toks), 64) {
		if v.terms&(1<<i) != 0 {
			rc.Terms = append(rc.Terms, toks[i].text)
		}
	}
	return rc
}

// memVotes are the memory's votes for one query, with the fusion weight they carry.
type memVotes struct {
	list   []vote
	weight float64
	norm   float64 // the largest |score|: a vote counts score/norm ∈ [−1, 1] times weight
}

// memoryVotes recalls the query's nearest past tasks; nil where the memory is silent: none in
// the artifact, a weight of 0, req.NoMemory, or no past task sharing a term. Skills the filter
// (allow) drops get no vote. The slots sc.voted map a skill to its vote until the next call.
func (e *Engine) memoryVotes(sc *scratch, req *Request, toks []queryToken, allow []uint64) *memVotes {
	if e.mem == nil || e.mem.weight == 0 || req.NoMemory {
		return nil
	}
	list, norm := e.mem.recall(sc, toks)
	if norm == 0 {
		return nil
	}
	for i := range list {
		if !kept(allow, list[i].id) {
			list[i].score = 0
		}
	}
	return &memVotes{list: list, weight: e.mem.weight, norm: norm}
}

// of is the memory's addition to skill v's score: weight·score/norm, 0 without a vote.
func (m *memVotes) of(sc *scratch, v int) float64 {
	if m == nil {
		return 0
	}
	k, ok := sc.voted.get(v)
	if !ok {
		return 0
	}
	return m.weight * m.list[k].score / m.norm
}

// evidence is Result.Recalled of skill v: set when the memory raised it.
func (m *memVotes) evidence(sc *scratch, v int, toks []queryToken) *Recall {
	if m == nil {
		return nil
	}
	k, ok := sc.voted.get(v)
	if !ok || m.list[k].score <= 0 || m.list[k].runs == 0 {
		return nil
	}
	return recallOf(m.list[k], toks)
}

// recalledBy is the mask of the query's tokens (their places, the first 64) by which the
// memory raised any of cs's skills; 0 for nil.
func (m *memVotes) recalledBy(sc *scratch, cs []candidate) (mask uint64) {
	if m == nil {
		return 0
	}
	for _, c := range cs {
		if k, ok := sc.voted.get(c.id); ok && m.list[k].score > 0 && m.list[k].runs > 0 {
			mask |= m.list[k].terms
		}
	}
	return mask
}

// scale is the factor that reports the answer ranked (best first) relative to its best, as
// scores are without the memory: its additions can take the best above 1.
func (m *memVotes) scale(ranked []candidate) float64 {
	if m == nil || len(ranked) == 0 || ranked[0].score <= 1 {
		return 1
	}
	return 1 / ranked[0].score
}

// voters are the votes, none for nil.
func (m *memVotes) voters() []vote {
	if m == nil {
		return nil
	}
	return m.list
}

// FitMemory makes the memory of past tasks of the corpus's runs (BuildMemory) for g, an artifact
// without one, and calibrates its fusion weight on held-out runs, as the edges are calibrated on
// probes: at most memHeldOut trusted successful runs with a task, in memFolds folds, are each
// asked of g's engine and of a memory of the runs outside their fold, and the weight of
// memWeights under which the most of them find their whole tool set in the first 10 wins (the
// smallest on a tie, so memory speaks only where it helps). Where past tasks recur in other words
// that is a high weight; where they do not, 0: the memory is kept, and silent. Reported runs are
// never held out, so a reporter cannot steer the weight. taskOf returns the task text of run i
// (as MemoryCorpus.Add numbered it), which a held-out run is asked with.
//
// g is art without a memory, decoded: the graph whose answers the memory's votes are added to.
// A corpus prepared with the same options (MemoryCorpus.Prepare) is not built again, nor are
// the folds' votes it made.
func FitMemory(art *graphs.Artifact, g *graphs.Graph, corpus *MemoryCorpus, taskOf func(run int) (string, error), opt MemoryOptions) (*graphs.Memory, MemoryStats, error) {
	opt = opt.orDefaults()
	c := &corpus.c
	var m *graphs.Memory
	var st MemoryStats
	var main *memBuild
	var plan *calPlan
	if p := corpus.prep; p != nil && p.opt == opt {
		m, st, main, plan = p.m, p.st, p.main, p.plan // Prepare's
		corpus.prep = nil
	} else {
		c.sort()
		m, st, main = c.buildAll(opt, nil, true)
	}
	if m == nil {
		return nil, st, nil
	}
	if plan == nil || plan.skills != g.NumSkills() {
		var err error
		if plan, err = c.calibration(opt, main, m, g.NumSkills(), taskOf); err != nil {
			return nil, st, err
		}
	}
	// The held-out runs' asks of g's engine, on every core. Each worker adds up hits of its
	// own, and the sums do not depend on which worker asked what.
	e := New(g)
	work := make(chan int, len(plan.runs))
	for k := range plan.runs {
		work <- k
	}
	close(work)
	workers := max(1, min(runtime.GOMAXPROCS(0), len(plan.runs)))
	tallies := make([][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		tallies[w] = make([]int, len(memWeights))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var t *calTally
			for k := range work {
				if !plan.asked[k] {
					continue
				}
				if t == nil {
					t = newCalTally(g.NumSkills())
				}
				e.calibrate(plan.votes[k], plan.norm[k], plan.runs[k], tallies[w], t)
			}
		}()
	}
	wg.Wait()
	hits := make([]int, len(memWeights))
	for _, t := range tallies {
		for w := range hits {
			hits[w] += t[w]
		}
	}
	best := 0
	for w := range hits {
		if hits[w] > hits[best] {
			best = w
		}
	}
	m.Weight = float32(memWeights[best])
	st.Weight, st.HeldOut, st.Hits, st.Weights = memWeights[best], len(plan.runs), hits, memWeights
	return m, st, nil
}

// recallIndexOf is memoryOf of an artifact whose memory is m, without encoding one: the same
// values, from the same float32 fields the artifact would hold.
func recallIndexOf(m *graphs.Memory) *recallIndex {
	nd, nt := len(m.Docs), len(m.Terms)
	if nd == 0 {
		return nil
	}
	r := &recallIndex{weight: float64(m.Weight), depth: m.Depth, terms: m.Terms,
		off: make([]int32, nt+1), runs: make([]int32, nd), failed: make([]bool, nd), soff: make([]int32, nd+1)}
	norm := make([]float64, nd)
	k1, b, avg := float64(m.K1), float64(m.B), max(float64(m.AvgDL), 1e-9)
	total := 0
	for d := range m.Docs {
		total += len(m.Docs[d].Skills)
	}
	r.skills = make([]int32, 0, total)
	for d, doc := range m.Docs {
		norm[d] = k1 * (1 - b + b*float64(doc.Len)/avg)
		r.runs[d], r.failed[d] = int32(doc.Runs), doc.Failed
		for _, id := range doc.Skills {
			r.skills = append(r.skills, int32(id))
		}
		r.soff[d+1] = int32(len(r.skills))
	}
	np := 0
	for _, ps := range m.Postings {
		np += len(ps)
	}
	r.doc, r.imp = make([]int32, 0, np), make([]float64, 0, np)
	for t, ps := range m.Postings {
		r.off[t+1] = r.off[t] + int32(len(ps))
		df := float64(len(ps))
		idf := math.Log(1 + (float64(nd)-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.TF)
			r.doc = append(r.doc, int32(p.Doc))
			r.imp = append(r.imp, idf*tf*(k1+1)/(tf+norm[p.Doc]))
		}
	}
	return r.withBounds()
}

// calTally is one calibration worker's buffers, indexed by skill: each held-out run's
// engine score, memory vote and whether its tool set holds the skill, zero between runs.
type calTally struct {
	score, vote []float64
	gold, seen  []bool
	ids         []int
}

func newCalTally(n int) *calTally {
	return &calTally{score: make([]float64, n), vote: make([]float64, n), gold: make([]bool, n), seen: make([]bool, n)}
}

// calibrate adds to hits[w], for each weight w of memWeights, whether run r's whole tool set is
// in the first 10 of the engine's answer to its task fused at that weight with votes, its
// fold's memory's (calPlan), whose largest |score| is norm.
func (e *Engine) calibrate(votes []vote, norm float64, r PastRun, hits []int, t *calTally) {
	req := Request{Query: r.Task, K: memCalibK, NoMemory: true}
	if req.normalize() != nil {
		return
	}
	resp, err := e.rank(req, true)
	if err != nil {
		return
	}
	// The candidates: the engine's results and the voted skills, each once, in id order.
	ids := t.ids[:0]
	for _, res := range resp.Results {
		if !t.seen[res.ID] {
			t.seen[res.ID] = true
			ids = append(ids, res.ID)
		}
		t.score[res.ID] = res.Score
	}
	for _, v := range votes {
		if !t.seen[v.id] {
			t.seen[v.id] = true
			ids = append(ids, v.id)
		}
		t.vote[v.id] = v.score / norm
	}
	slices.Sort(ids)
	gold := 0
	for _, s := range r.Skills {
		if !t.gold[s] {
			t.gold[s] = true
			gold++
		}
	}
	// The first 10 under each weight: better is a total order, so the 10 a bounded heap keeps
	// are the first 10 of the sorted list, whatever order they come in.
	top := topCandidates{k: 10, h: make([]candidate, 0, 10)}
	for w, beta := range memWeights {
		top.h = top.h[:0]
		for _, id := range ids {
			top.offer(candidate{id, t.score[id] + beta*t.vote[id]})
		}
		found := 0
		for _, c := range top.h {
			found += b2i(t.gold[c.id])
		}
		hits[w] += b2i(found == gold)
	}
	for _, id := range ids {
		t.score[id], t.vote[id], t.seen[id] = 0, 0, false
	}
	for _, s := range r.Skills {
		t.gold[s] = false
	}
	t.ids = ids
}
