// Package engine is caskg's retrieval core: given a decoded skill graph and a task text, it
// ranks seed skills lexically (BM25 over the artifact's index, typo-tolerant terms, fuzzy skill
// identifiers), fuses the rankings, and spreads relevance from the seeds over the published
// graph with personalized PageRank (DESIGN §4). It is pure Go with no host concerns, so the
// native CLI and every WebAssembly host run the same code and give the same answers.
package engine

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"

	"github.com/caskg/caskg/graphs"
)

// Defaults of DESIGN §4.
const (
	DefaultK          = 8
	DefaultSeeds      = 5
	DefaultGamma      = 0.2
	MaxIterations     = 50
	Tolerance         = 1e-6 // L1 change between PPR iterations that counts as converged
	MaxK              = 1000
	MaxSeeds          = 100
	MaxQueryBytes     = 64 << 10
	MaxSemanticWeight = 100
	maxVia            = 3
	rrfK              = 60 // reciprocal-rank-fusion constant
)

// ReverseWeight is the share of an edge's weight that flows against its direction, by relation
// type: a follow-up pulls in its prerequisite at full strength, a look-alike barely pulls back.
var ReverseWeight = [...]float64{
	graphs.Dependency:  1.0,
	graphs.Workflow:    0.5,
	graphs.Semantic:    0.2,
	graphs.Alternative: 0.1,
}

// ErrEmptyQuery is returned for a query with no text.
var ErrEmptyQuery = errors.New("engine: empty query")

// Request is one retrieval call. Zero values mean the defaults.
type Request struct {
	Query   string  `json:"query"`
	K       int     `json:"k,omitempty"`
	Seeds   int     `json:"seeds,omitempty"`
	Gamma   float64 `json:"gamma,omitempty"`
	NoGraph bool    `json:"no_graph,omitempty"`
	// Vector is an exact embedding of Query by the model that made the artifact's skill
	// vectors (Engine.VectorModel), of dimension Engine.VectorDim. Without it, semantic seeding
	// uses the artifact's query encoder.
	Vector []float32 `json:"vector,omitempty"`
	// SemanticWeight is the semantic list's weight in the seed fusion; 0 means
	// DefaultSemanticWeight. NoSemantic turns semantic seeding off.
	SemanticWeight float64 `json:"semantic_weight,omitempty"`
	NoSemantic     bool    `json:"no_semantic,omitempty"`
	// NoLexical drops the BM25 and fuzzy-name lists: seeds come from the vectors alone (the
	// vector-only baseline). It needs an artifact with vectors.
	NoLexical bool `json:"no_lexical,omitempty"`
	// Render asks for Response.Rendered: the results' text for an agent within SkillBudget
	// characters per skill and TotalBudget in all (0 means DefaultSkillBudget and
	// DefaultTotalBudget; characters are Unicode code points).
	Render      bool `json:"render,omitempty"`
	SkillBudget int  `json:"skill_budget,omitempty"`
	TotalBudget int  `json:"total_budget,omitempty"`
}

// Via is a published edge that carried relevance to a result. From is the neighbour the
// relevance came from; Reverse means the published edge points from the result to From (the
// result is a prerequisite of From) and was walked backwards.
type Via struct {
	From    string  `json:"from"`
	State   string  `json:"state"`
	Weight  float64 `json:"weight"`
	Type    string  `json:"type"`
	Reverse bool    `json:"reverse,omitempty"`
}

// Result is one ranked skill.
type Result struct {
	ID       int     `json:"-"`
	Name     string  `json:"name"`
	Score    float64 `json:"score"`
	SeedRank int     `json:"seed_rank,omitempty"` // 1-based rank among the seeds; 0 when not a seed
	Via      []Via   `json:"via,omitempty"`
}

// Response is the answer to a Request.
type Response struct {
	Results    []Result `json:"results"`
	Iterations int      `json:"iterations,omitempty"` // PPR power iterations run
	Pushes     int      `json:"pushes,omitempty"`     // forward pushes run (large graphs)
	Residual   float64  `json:"residual,omitempty"`   // forward push: L1 error bound of the scores
	// Rendered is the bundle text of Request.Render: a header, then each result's name,
	// description, source, evidence and body head, cut to the budgets (see render.go).
	Rendered string `json:"rendered,omitempty"`
}

// Engine answers queries over one graph. It is safe for concurrent use.
type Engine struct {
	g     *graphs.Graph
	names nameIndex // normalized skill names for fuzzy matching

	// The propagation matrix T in CSR form, rows normalized: every published edge u→v gives an
	// entry u→v and a reverse entry v→u weighted by ReverseWeight. edge and rev record which
	// published edge an entry came from, for the Via evidence.
	off  []int32
	to   []int32
	w    []float64
	edge []int32
	rev  []bool
	// The transpose's CSR (entries into each node), as indexes into the arrays above.
	inOff []int32
	in    []int32

	invNorm []float32 // 1/‖quantized vector‖ per skill; nil without vectors
	signs   []uint64  // sign bits of every skill vector, for the large-library prefilter (semantic.go)
	zeroVec []int32   // the skills whose vector is zero (invNorm 0), for the prefilter
	impacts []float64 // BM25 term-frequency factor per posting (bm25Impacts)
	terms   termIndex // lexicon terms' lengths and character masks, for typo correction
	vecs    []int8    // every skill's quantized vector (graphs.Graph.Vectors)

	pool [scratchSlots]atomic.Pointer[scratch] // scratches for reuse (scratch.go)
}

// New prepares an engine over g. Its cost is linear in the graph's size.
func New(g *graphs.Graph) *Engine {
	n := g.NumSkills()
	e := &Engine{g: g, names: newNameIndex(g), invNorm: vectorNorms(g), impacts: bm25Impacts(g), terms: newTermIndex(g), vecs: g.Vectors()}
	if n >= LargeLibrary {
		e.signs = vectorSigns(g)
	}
	for i, x := range e.invNorm {
		if x == 0 {
			e.zeroVec = append(e.zeroVec, int32(i))
		}
	}
	deg := make([]int32, n+1)
	for u := range n {
		lo, hi := g.Out(u)
		for k := lo; k < hi; k++ {
			// Zero-weight edges carry nothing; leaving them out keeps a row of them dangling,
			// so the node keeps its mass instead of losing it to a zero row.
			if g.Weight(k) == 0 {
				continue
			}
			deg[u]++
			if ReverseWeight[g.Type(k)] > 0 {
				deg[g.Target(k)]++
			}
		}
	}
	e.off = make([]int32, n+1)
	for u := range n {
		e.off[u+1] = e.off[u] + deg[u]
	}
	m := e.off[n]
	e.to, e.w, e.edge, e.rev = make([]int32, m), make([]float64, m), make([]int32, m), make([]bool, m)
	fill := append([]int32(nil), e.off[:n]...)
	put := func(u, v, k int, w float64, rev bool) {
		i := fill[u]
		fill[u]++
		e.to[i], e.w[i], e.edge[i], e.rev[i] = int32(v), w, int32(k), rev
	}
	for u := range n {
		lo, hi := g.Out(u)
		for k := lo; k < hi; k++ {
			v := g.Target(k)
			w := float64(g.Weight(k))
			if w == 0 {
				continue
			}
			put(u, v, k, w, false)
			if rw := ReverseWeight[g.Type(k)]; rw > 0 {
				put(v, u, k, w*rw, true)
			}
		}
	}
	for u := range n {
		var sum float64
		for i := e.off[u]; i < e.off[u+1]; i++ {
			sum += e.w[i]
		}
		for i := e.off[u]; i < e.off[u+1]; i++ {
			if sum > 0 {
				e.w[i] /= sum
			}
		}
	}
	e.inOff = make([]int32, n+1)
	for _, v := range e.to {
		e.inOff[v+1]++
	}
	for v := range n {
		e.inOff[v+1] += e.inOff[v]
	}
	e.in = make([]int32, m)
	fill = append(fill[:0], e.inOff[:n]...)
	for i, v := range e.to {
		e.in[fill[v]] = int32(i)
		fill[v]++
	}
	return e
}

// Graph returns the graph the engine serves.
func (e *Engine) Graph() *graphs.Graph { return e.g }

// normalize fills in defaults and rejects out-of-range options, naming the field.
func (r *Request) normalize() error {
	if strings.TrimSpace(r.Query) == "" {
		return ErrEmptyQuery
	}
	if len(r.Query) > MaxQueryBytes {
		return newError("engine: query is " + itoa(len(r.Query)) + " bytes, at most " + itoa(MaxQueryBytes))
	}
	if r.K == 0 {
		r.K = DefaultK
	}
	if r.Seeds == 0 {
		r.Seeds = DefaultSeeds
	}
	if r.Gamma == 0 {
		r.Gamma = DefaultGamma
	}
	if r.SemanticWeight == 0 {
		r.SemanticWeight = DefaultSemanticWeight
	}
	if r.SkillBudget == 0 {
		r.SkillBudget = DefaultSkillBudget
	}
	if r.TotalBudget == 0 {
		r.TotalBudget = DefaultTotalBudget
	}
	switch {
	case r.K < 1 || r.K > MaxK:
		return newError("engine: field \"k\": " + itoa(r.K) + " is outside [1, " + itoa(MaxK) + "]")
	case r.Seeds < 1 || r.Seeds > MaxSeeds:
		return newError("engine: field \"seeds\": " + itoa(r.Seeds) + " is outside [1, " + itoa(MaxSeeds) + "]")
	case !(r.Gamma > 0 && r.Gamma <= 1):
		return newError("engine: field \"gamma\": " + ftoa(r.Gamma) + " is outside (0, 1]")
	case !(r.SemanticWeight > 0 && r.SemanticWeight <= MaxSemanticWeight):
		return newError("engine: field \"semantic_weight\": " + ftoa(r.SemanticWeight) + " is outside (0, " + itoa(MaxSemanticWeight) + "]")
	case r.SkillBudget < 1 || r.SkillBudget > MaxBudget:
		return newError("engine: field \"skill_budget\": " + itoa(r.SkillBudget) + " is outside [1, " + itoa(MaxBudget) + "]")
	case r.TotalBudget < 1 || r.TotalBudget > MaxBudget:
		return newError("engine: field \"total_budget\": " + itoa(r.TotalBudget) + " is outside [1, " + itoa(MaxBudget) + "]")
	}
	return nil
}

// Query ranks the graph's skills for req and, when req.Render is set, renders them.
func (e *Engine) Query(req Request) (Response, error) {
	if err := req.normalize(); err != nil {
		return Response{}, err
	}
	resp, err := e.rank(req)
	if err == nil && req.Render {
		resp.Rendered = e.render(&req, resp.Results)
	}
	return resp, err
}

// rank answers a normalized request.
func (e *Engine) rank(req Request) (Response, error) {
	var qvec []float32
	if len(req.Vector) > 0 {
		var err error
		if qvec, err = e.checkVector(req.Vector); err != nil {
			return Response{}, err
		}
	} else if !req.NoSemantic {
		qvec = e.Embed(req.Query)
	}
	if req.NoSemantic {
		qvec = nil
	}
	if req.NoLexical && qvec == nil {
		return Response{}, newError("engine: field \"no_lexical\": no semantic seeds to rank by (the artifact has no vectors or no_semantic is set)")
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	// The caller reads at most the first max(Seeds, 2K) fused entries: the seeds, and without
	// the graph the top K; with it, when fewer than K skills are reached, the fill-up below
	// skips at most the (fewer than K) reached ones.
	fused := e.seedRanking(sc, req.Query, qvec, req.SemanticWeight, req.NoLexical, max(req.Seeds, 2*req.K))
	n := e.g.NumSkills()
	if req.NoGraph {
		res := make([]Result, 0, min(req.K, len(fused)))
		for i, c := range fused[:min(req.K, len(fused))] {
			r := Result{ID: c.id, Name: e.g.Name(c.id), Score: c.score}
			if i < req.Seeds {
				r.SeedRank = i + 1
			}
			res = append(res, r)
		}
		return Response{Results: res}, nil
	}

	seeds := fused[:min(req.Seeds, len(fused))]
	pi := sc.pi
	var mass float64
	for i := range seeds {
		mass += 1 / float64(i+1)
	}
	for i, c := range seeds {
		pi[c.id] = 1 / float64(i+1) / mass
	}
	var p []float64
	var iters, pushes int
	var residual float64
	top := topCandidates{k: req.K}
	if n >= LargeLibrary {
		// The seeds in ascending order (insertion sort: a few dozen at most).
		seedIDs := make([]int32, len(seeds))
		for i, c := range seeds {
			seedIDs[i] = int32(c.id)
			for j := i; j > 0 && seedIDs[j] < seedIDs[j-1]; j-- {
				seedIDs[j], seedIDs[j-1] = seedIDs[j-1], seedIDs[j]
			}
		}
		p, residual, pushes = e.push(sc, seedIDs, req.Gamma, PushEpsilon)
		for _, v := range sc.nodes {
			if p[v] > 0 {
				top.offer(candidate{int(v), p[v]})
			}
		}
	} else {
		p, iters = e.ppr(sc, req.Gamma)
		for v, x := range p {
			if x > 0 {
				top.offer(candidate{v, x})
			}
		}
	}
	for _, c := range seeds {
		pi[c.id] = 0
	}

	seedRank := make(map[int]int, len(seeds))
	for i, c := range seeds {
		seedRank[c.id] = i + 1
	}
	reached := top.sorted()
	ids := make([]int, 0, req.K)
	for _, c := range reached {
		ids = append(ids, c.id)
	}
	// Too few skills reached: fill up with the next lexical candidates, at score 0.
	for _, c := range fused {
		if len(ids) >= req.K {
			break
		}
		if p[c.id] == 0 {
			ids = append(ids, c.id)
		}
	}
	inResult := make(map[int]bool, len(ids))
	for _, v := range ids {
		inResult[v] = true
	}
	res := make([]Result, len(ids))
	for i, v := range ids {
		res[i] = Result{ID: v, Name: e.g.Name(v), Score: p[v], SeedRank: seedRank[v],
			Via: e.via(v, p, inResult)}
	}
	if n >= LargeLibrary {
		for _, v := range sc.nodes {
			sc.p[v], sc.q[v] = 0, 0
		}
	} else {
		clear(sc.p)
		clear(sc.q)
	}
	return Response{Results: res, Iterations: iters, Pushes: pushes, Residual: residual}, nil
}

// ppr runs p ← γπ + (1−γ)Tᵀp from p = π, π in sc.pi, and returns p (sc.p or sc.q; the caller
// clears both) and the iterations run.
func (e *Engine) ppr(sc *scratch, gamma float64) ([]float64, int) {
	return e.powerIteration(sc.pi, sc.p, sc.q, gamma, Tolerance, MaxIterations)
}

// powerIteration runs p ← γπ + (1−γ)Tᵀp from p = π until the L1 change is below tol or after
// maxIter iterations, in the buffers p and next (each len(pi)), and returns the one holding the
// result and the iterations run. Rows without entries keep their mass.
func (e *Engine) powerIteration(pi, p, next []float64, gamma, tol float64, maxIter int) ([]float64, int) {
	copy(p, pi)
	iters := 0
	for iters < maxIter {
		iters++
		for v := range next {
			next[v] = gamma * pi[v]
		}
		for u, pu := range p {
			if pu == 0 {
				continue
			}
			lo, hi := e.off[u], e.off[u+1]
			if lo == hi {
				next[u] += (1 - gamma) * pu
				continue
			}
			share := (1 - gamma) * pu
			to, w := e.to[lo:hi], e.w[lo:hi]
			w = w[:len(to)] // one length for both: no bounds check on w[i]
			// Two entries a pass, in order (a row can hold the same node twice): half the
			// loop's own branches, which in WebAssembly go through Go's block dispatcher.
			i := 0
			for ; i+2 <= len(to); i += 2 {
				v, x := to[i:i+2:i+2], w[i:i+2:i+2]
				next[v[0]] += share * x[0]
				next[v[1]] += share * x[1]
			}
			if i < len(to) {
				next[to[i]] += share * w[i]
			}
		}
		var diff float64
		for v, x := range p {
			diff += math.Abs(next[v] - x)
		}
		p, next = next, p
		if diff < tol {
			break
		}
	}
	return p, iters
}

// via lists the published edges that carried the most relevance into v from the seeds or other
// results, strongest first.
func (e *Engine) via(v int, p []float64, inResult map[int]bool) []Via {
	// Each candidate is an entry of T (its id) and the relevance that flowed over it (its
	// score): sorted by flow descending, then by entry.
	var cs []candidate
	for _, i := range e.in[e.inOff[v]:e.inOff[v+1]] {
		u := e.source(i)
		if !inResult[u] || p[u] == 0 {
			continue
		}
		cs = append(cs, candidate{int(i), p[u] * e.w[i]})
	}
	sortCandidates(cs)
	var out []Via
	for _, c := range cs[:min(maxVia, len(cs))] {
		k := int(e.edge[c.id])
		out = append(out, Via{
			From:    e.g.Name(e.source(int32(c.id))),
			State:   e.g.State(k).String(),
			Weight:  float64(e.g.Weight(k)),
			Type:    e.g.Type(k).String(),
			Reverse: e.rev[c.id],
		})
	}
	return out
}

// source returns the row an entry of T belongs to.
func (e *Engine) source(i int32) int {
	// Rows are contiguous in CSR order: binary search the row offsets.
	return search(len(e.off)-1, func(u int) bool { return e.off[u+1] > i })
}

// candidate is a skill with its fused seed score.
type candidate struct {
	id    int
	score float64
}

// seedRanking ranks skills for query by fusing BM25 (with typo-corrected terms), fuzzy
// identifier matches and, when qvec is not nil, the skills closest to the unit query vector qvec
// with reciprocal-rank fusion (the semantic list weighted by semWeight), and returns the first
// need entries of the fused ranking. The fused score keeps the BM25 order when there is nothing
// else to fuse, and an identifier written into the query wins outright.
//
// Only the head of the fused ranking is computed, not all of it: a skill that is neither in the
// BM25 top need nor on the name or semantic list scores 1/(rrfK+r+1) for its BM25 rank r ≥ need,
// below each of the BM25 top need, so it cannot be among the first need. The BM25 rank of each
// name or semantic candidate outside that head is counted exactly, so every fused score is the
// one a full sort would give.
func (e *Engine) seedRanking(sc *scratch, query string, qvec []float32, semWeight float64, noLexical bool, need int) []candidate {
	g := e.g
	counts := map[string]int{}
	var order []string
	for _, t := range Tokenize(query) {
		if counts[t] == 0 {
			order = append(order, t)
		}
		counts[t]++
	}
	var terms []queryTerm
	if noLexical {
		order = nil
	}
	for _, t := range order {
		if idx, ok := g.FindTerm(t); ok {
			terms = append(terms, queryTerm{idx, float64(counts[t])})
			continue
		}
		for _, idx := range typoTerms(g, &e.terms, t) {
			terms = append(terms, queryTerm{idx, typoWeight * float64(counts[t])})
		}
	}
	scores := sc.bm25
	bm25(g, e.impacts, terms, scores)

	var names []candidate
	if ids := identifiers(query); len(ids) > 0 && !noLexical {
		names = e.names.match(sc, ids)
		sortCandidates(names)
	}
	var sem []candidate
	if qvec != nil {
		sem = e.semanticRanking(sc, qvec)
	}

	// The BM25 head, and the exact BM25 rank of every other listed skill.
	// The passes below read the score array in order: a long task text scores most of a large
	// library, and in order there is no random access per skill (a short query pays a scan of
	// the array, four skills a step, and a bulk clear).
	head := topCandidates{k: need}
	head.offerPositive(scores)
	lex := head.sorted()
	// lexRank holds 1 + the BM25 rank (0: not scored; -1 while a deep rank is counted), so that
	// lookups need no second result.
	lexRank := make(map[int]int, len(lex)+len(names)+len(sem))
	for r, c := range lex {
		lexRank[c.id] = r + 1
	}
	var deep []candidate // listed skills with a BM25 score below the head, best first
	for _, list := range [][]candidate{names, sem} {
		for _, c := range list {
			if lexRank[c.id] == 0 && scores[c.id] > 0 {
				lexRank[c.id] = -1
				deep = append(deep, candidate{c.id, scores[c.id]})
			}
		}
	}
	if len(deep) > 0 {
		sortCandidates(deep)
		// above[k] counts the skills outside the head that rank before deep[k] but not before
		// deep[k-1]; its prefix sums are the ranks.
		above := make([]int, len(deep)+1)
		last := deep[len(deep)-1]
		// Only skills scoring at least as high as the last listed one can rank before it:
		// select them without a branch (scores are positive, so their bits order as they do),
		// then place each. At 100,000 skills that is about 2,000 of 73,000.
		if len(sc.sel) <= len(scores) {
			sc.sel = make([]int, len(scores)+1)
		}
		sel := sc.sel
		ns := atLeast(sel, scores, math.Float64bits(last.score))
		for _, d := range sel[:ns] {
			c := candidate{d, scores[d]}
			if !better(c, last) || lexRank[d] > 0 { // not before last, or in the head
				continue
			}
			above[search(len(deep), func(k int) bool { return better(c, deep[k]) })]++
		}
		r := len(lex)
		for k, c := range deep {
			r += above[k]
			lexRank[c.id] = r + 1
		}
	}
	clear(scores)

	// The fused scores, added up in the order of the full computation: BM25, names, semantic,
	// then the name similarity.
	type fusion struct {
		id             int
		lex, name, sem int // 0-based ranks; -1 when not on the list
		nameScore      float64
	}
	at := make(map[int]int, len(lex)+len(names)+len(sem)) // skill → 1 + index in listed
	listed := make([]fusion, 0, len(lex)+len(names)+len(sem))
	entry := func(id int) *fusion {
		k := at[id] - 1
		if k < 0 {
			k = len(listed)
			at[id] = k + 1
			listed = append(listed, fusion{id: id, lex: lexRank[id] - 1, name: -1, sem: -1})
		}
		return &listed[k]
	}
	for _, c := range lex {
		entry(c.id)
	}
	for r, c := range names {
		f := entry(c.id)
		f.name, f.nameScore = r, c.score
	}
	for r, c := range sem {
		entry(c.id).sem = r
	}
	out := make([]candidate, 0, len(listed))
	for _, f := range listed {
		var s float64
		if f.lex >= 0 {
			s += 1 / float64(rrfK+f.lex+1)
		}
		if f.name >= 0 {
			s += 1 / float64(rrfK+f.name+1)
		}
		if f.sem >= 0 {
			s += semWeight / float64(rrfK+f.sem+1)
		}
		if f.name >= 0 {
			s += f.nameScore
		}
		out = append(out, candidate{f.id, s})
	}
	sortCandidates(out)
	return out[:min(need, len(out))]
}

// sortCandidates orders by score descending, then by id, so ties never depend on map order. It
// is a heap sort rather than slices.SortFunc: the order is total (ids are distinct), so any
// correct sort gives the same result, and this one is a fraction of pdqsort's code in the module.
func sortCandidates(cs []candidate) {
	n := len(cs)
	for i := n/2 - 1; i >= 0; i-- {
		siftCandidates(cs, i, n)
	}
	for end := n - 1; end > 0; end-- {
		cs[0], cs[end] = cs[end], cs[0]
		siftCandidates(cs, 0, end)
	}
}

// siftCandidates restores the heap below root in cs[:n]; the root is the candidate that sorts
// last.
func siftCandidates(cs []candidate, root, n int) {
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && better(cs[child], cs[child+1]) {
			child++
		}
		if !better(cs[root], cs[child]) {
			return
		}
		cs[root], cs[child] = cs[child], cs[root]
		root = child
	}
}

// search is sort.Search: the smallest index in [0, n) at which f is true, or n if there is none;
// f must be false and then true. Written out so that the module does not link package sort.
func search(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !f(h) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}
