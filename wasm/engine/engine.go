// Package engine is caskg's retrieval core: given a decoded skill graph and a task text, it
// ranks seed skills lexically (BM25 over the artifact's index, typo-tolerant terms, fuzzy skill
// identifiers), fuses the rankings, and spreads relevance from the seeds over the published
// graph with personalized PageRank. It is pure Go with no host concerns, so the
// native CLI and every WebAssembly host run the same code and give the same answers.
package engine

import (
	"errors"
	"math"
	"sync/atomic"
	"unicode"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// Version is caskg's version: the caskg command, the WebAssembly module and the edge worker all
// report this one constant.
const Version = "0.1.0"

// Retrieval defaults and limits.
const (
	DefaultK          = 8
	DefaultSeeds      = 5
	DefaultGamma      = 0.2
	MaxIterations     = 50
	Tolerance         = 1e-6 // L1 change between PPR iterations that counts as converged (PowerIteration)
	MaxK              = 1000
	MaxSeeds          = 100
	MaxQueryBytes     = 64 << 10
	MaxSemanticWeight = 100
	maxVia            = 3
	// GraphWeight scales the graph's evidence against the seed evidence (rank): a prerequisite
	// linked with full confidence to a seed scores as much as that seed, so the chain a
	// confident seed needs comes with it. Chosen on the SkillsBench, Seal-Tools and ToolLinkOS
	// task sets (docs/evaluation-results.md).
	GraphWeight = 1.0
	// agreementDepth is how many of the first lexical and semantic candidates agreement
	// compares.
	agreementDepth = 10
	// semanticFloorRank is the semantic entry whose cosine is zero evidence when the list is
	// fused with a lexical one. A built-in model's cosines are flat below its first few
	// entries: measured from the 50th, the 11th to 50th of a multi-need query's list, the
	// neighbours of its wordiest need, got enough to push the tools of its other needs out of
	// the first ten. Seal-Tools, verbose-API half 0: COMP@10 of the seeds .917 → .930.
	semanticFloorRank = 2 * agreementDepth
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
	NoGraph bool    `json:"no_graph,omitempty"` // the seeds alone: neither the graph nor the memory of past tasks
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
	// Filter narrows the answer to the skills it keeps (filter.go); the zero Filter keeps all.
	Filter Filter `json:"filter,omitzero"`
	// NoMemory leaves the memory of past tasks out of the ranking (memory.go).
	NoMemory bool `json:"no_memory,omitempty"`
	// MinScore, in [0, 1], drops the results whose Match is below it: at WeakMatch, a weak
	// answer is empty.
	MinScore float64 `json:"min_score,omitempty"`
}

// Via is a published edge that carried relevance to a result. From is the neighbour the
// relevance came from; Reverse means the published edge points from the result to From (the
// result is a prerequisite of From) and was walked backwards.
type Via struct {
	From  string `json:"from"`
	State string `json:"state"`
	// Weight is the published weight as the artifact stores it: a float32, so that JSON
	// writes its own digits (0.8), not those of its float64 expansion (0.800000011920929).
	Weight  float32 `json:"weight"`
	Type    string  `json:"type"`
	Reverse bool    `json:"reverse,omitempty"`
}

// Result is one ranked skill. Its evidence says what put it where it is: SeedRank when it is
// one of the seeds, Graph when a published edge from a seed raised its score above its own
// match, and neither for a match beyond the seeds (its own fused score, below the seed cut,
// with nothing from the graph). Via lists the edges that link it to the other results, which a
// skill can have without the graph having raised it.
type Result struct {
	ID    int     `json:"-"`
	Name  string  `json:"name"`
	Score float64 `json:"score"` // relative to the best result, which has 1
	// Match is Score times the answer's match strength (Response.Match): comparable across the
	// queries of one artifact, as Score is not.
	Match    float64 `json:"match"`
	SeedRank int     `json:"seed_rank,omitempty"` // 1-based rank among the seeds; 0 when not a seed
	Graph    bool    `json:"graph,omitempty"`     // the graph raised the score above the skill's own match
	Via      []Via   `json:"via,omitempty"`
	// Recalled is set when the memory of past tasks raised the result: past runs whose tasks
	// shared the query's words used it.
	Recalled *Recall `json:"recalled,omitempty"`
}

// Response is the answer to a Request.
type Response struct {
	Results []Result `json:"results"`
	// Match is the answer's match strength in [0, 1], comparable across the queries of one
	// artifact: the share of the query's weight that the words of its first matchBundle
	// results cover together (matchStrength). Below WeakMatch no skill matches the task well.
	Match float64 `json:"match"`
	// Note says, for people, why the answer may be empty or weak: set when no term of the query
	// is in the library's index (NoTermNote), so that a query in another language than the
	// library's does not get an empty list without a word, and else when Match is below
	// WeakMatch (WeakMatchNote).
	Note       string  `json:"note,omitempty"`
	Iterations int     `json:"iterations,omitempty"` // PPR power iterations run (0: the engine pushes)
	Pushes     int     `json:"pushes,omitempty"`     // PPR forward pushes run, until the linked results were reached
	Residual   float64 `json:"residual,omitempty"`   // L1 error bound of the PPR estimate those pushes left (push.go)
	// Rendered is the bundle text of Request.Render: a header, then each result's name,
	// description, source, evidence and body head, cut to the budgets (see render.go).
	Rendered string `json:"rendered,omitempty"`
}

// Engine answers queries over one graph. It is safe for concurrent use.
type Engine struct {
	g     *graphs.Graph
	names nameIndex  // normalized skill names for fuzzy matching
	vocab vocabulary // the artifact's terms, for analyzing queries (terms.go)

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
	// conf is each entry's weight before the row normalization: the published weight (times
	// ReverseWeight for a reverse entry), which is the calibrated confidence the graph's
	// evidence is scaled by (rank).
	conf []float32
	// fanOut is, per node, the sum of conf over its forward entries (its follow-ups): a skill
	// whose output many skills can take says little about which one comes next (rank).
	fanOut []float32

	invNorm []float32     // 1/‖quantized vector‖ per skill; nil without vectors
	signs   []uint64      // sign bits of every skill vector, for the large-library prefilter (semantic.go)
	lists   *clusterLists // the artifact's vector clusters from LargeLibrary skills on (semantic.go); nil: none
	zeroVec []int32       // the skills whose vector is zero (invNorm 0), for the prefilter
	impacts []float64     // BM25 term-frequency factor per posting (bm25Impacts)
	terms   termIndex     // lexicon terms' lengths and character masks, for typo correction
	vecs    []int8        // every skill's quantized vector (graphs.Graph.Vectors)
	packed  []int64       // the vectors three skills to a word below LargeLibrary skills (packVectors), else nil
	mem     *recallIndex  // the memory of past tasks; nil without one

	pool [scratchSlots]atomic.Pointer[scratch] // scratches for reuse (scratch.go)

	filters    [filterSlots]atomic.Pointer[compiledFilter] // the filters compiled last (filter.go)
	nextFilter atomic.Uint32                               // the slot the next compiled filter takes

	// exactPPR, when set, propagates queries in place of forward push (power iteration to
	// convergence, the reference tests hold the engine to: export_test.go). Only tests set it,
	// so the module does not carry power iteration.
	exactPPR func(pi, p, next []float64, gamma float64) ([]float64, int)
}

// New prepares an engine over g. Its cost is linear in the graph's size.
func New(g *graphs.Graph) *Engine {
	n := g.NumSkills()
	e := &Engine{g: g, names: newNameIndex(g), invNorm: vectorNorms(g), impacts: bm25Impacts(g), terms: newTermIndex(g), vecs: g.Vectors(), packed: packVectors(g), vocab: newVocabulary(g), mem: memoryOf(g)}
	if n >= LargeLibrary {
		if e.lists = newClusterLists(g); e.lists == nil {
			e.signs = vectorSigns(g)
		}
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
	e.conf = make([]float32, m)
	e.fanOut = make([]float32, n)
	for u := range n {
		for i := e.off[u]; i < e.off[u+1]; i++ {
			e.conf[i] = float32(min(e.w[i], 1))
			if !e.rev[i] {
				e.fanOut[u] += e.conf[i]
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
	if trimLeft(r.Query, unicode.IsSpace) == "" {
		return ErrEmptyQuery
	}
	if err := Bounds.Check(*r); err != nil {
		return err
	}
	// An option left zero takes its default.
	r.K = orDefault(r.K, DefaultK)
	r.Seeds = orDefault(r.Seeds, DefaultSeeds)
	r.Gamma = orDefault(r.Gamma, DefaultGamma)
	r.SemanticWeight = orDefault(r.SemanticWeight, DefaultSemanticWeight)
	r.SkillBudget = orDefault(r.SkillBudget, DefaultSkillBudget)
	r.TotalBudget = orDefault(r.TotalBudget, DefaultTotalBudget)
	// The budgets are checked by one function: its message written out at each cost the
	// WebAssembly module 0.3 KB a field.
	switch {
	case !(r.Gamma > 0 && r.Gamma <= 1):
		return errtext.New("engine: field \"gamma\": " + errtext.Ftoa(r.Gamma) + " is outside (0, 1]")
	case !(r.SemanticWeight > 0 && r.SemanticWeight <= MaxSemanticWeight):
		return errtext.New("engine: field \"semantic_weight\": " + errtext.Ftoa(r.SemanticWeight) + " is outside (0, " + errtext.Itoa(MaxSemanticWeight) + "]")
	case !(r.MinScore >= 0 && r.MinScore <= 1):
		return errtext.New("engine: field \"min_score\": " + errtext.Ftoa(r.MinScore) + " is outside [0, 1]")
	}
	if err := inRange("skill_budget", r.SkillBudget, MaxBudget); err != nil {
		return err
	}
	if err := inRange("total_budget", r.TotalBudget, MaxBudget); err != nil {
		return err
	}
	if len(r.Filter.Allow)+len(r.Filter.Deny)+len(r.Filter.Namespaces) > 0 {
		return r.Filter.Check()
	}
	return nil
}

// inRange checks that the request's field name, of value v, is in [1, max].
func inRange(name string, v, max int) error {
	if v < 1 || v > max {
		return &FieldError{Field: name, Problem: outside(v, max)}
	}
	return nil
}

// orDefault is v, or def when v is zero: cmp.Or of two values, without its loop over a
// variadic slice, which the WebAssembly module would carry for every type.
func orDefault[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Query ranks the graph's skills for req and, when req.Render is set, renders them.
func (e *Engine) Query(req Request) (Response, error) {
	if err := req.normalize(); err != nil {
		return Response{}, err
	}
	resp, err := e.rank(req, false)
	if err != nil {
		return resp, err
	}
	resp.strength(req.MinScore)
	if req.Render {
		resp.Rendered = e.render(&req, resp.Results, resp.Note)
	}
	return resp, err
}

// rank answers a normalized request.
//
// Every skill's seed evidence f ∈ [0, 1] is its fused score over the best one (seedRanking).
// The graph adds evidence; it never replaces the seed ranking: a skill the published graph links
// to the seeds gets x = 1 − Π_u (1 − f_u·c(u→v)) over the seeds u, where c is the entry's
// evidence (entryEvidence: the published weight, its calibrated confidence, times ReverseWeight
// when walked backwards; a follow-up's shared among the seed's follow-ups), so independent seeds
// that need the same prerequisite add up, and an edge carries as much as the calibration trusts
// it. The final score is max(f, GraphWeight·x): a skill the query supports
// keeps its place, and the prerequisites and follow-ups of confident seeds rise beside them.
// Personalized PageRank from the seeds (restart mass ∝ f), by forward push at every library size
// (push.go), decides which edges carried relevance to each result (Result.Via); the ranking
// does not depend on its error, which Response.Residual bounds.
// queryVector is the semantic query of req: its own Vector, checked, or the encoder's embedding
// of its terms toks; nil with NoSemantic (a given Vector is checked all the same).
func (e *Engine) queryVector(sc *scratch, req *Request, toks []queryToken) ([]float32, error) {
	if len(req.Vector) > 0 {
		v, err := e.checkVector(req.Vector)
		if req.NoSemantic {
			v = nil
		}
		return v, err
	}
	if req.NoSemantic {
		return nil, nil
	}
	return e.embedTokens(sc, toks), nil
}

// scoresOnly skips the propagation, which decides only Via: the memory's calibration reads the
// ranking alone, a thousand times a build.
func (e *Engine) rank(req Request, scoresOnly bool) (Response, error) {
	sc := e.getScratch()
	defer e.putScratch(sc)
	toks := e.analyze(sc, req.Query)
	qvec, err := e.queryVector(sc, &req, toks)
	if err != nil {
		return Response{}, err
	}
	note := e.unknownNote(toks)
	if req.NoLexical && qvec == nil {
		return Response{}, errtext.New("engine: field \"no_lexical\": no semantic seeds to rank by (the artifact has no vectors or no_semantic is set)")
	}
	// The filter's skills, compiled once for the request; nil keeps every skill at no cost.
	allow := e.compile(&req.Filter)
	// The fused head holds every listed skill and the BM25 top max(Seeds, K); a skill outside
	// it scores below each of the BM25 top K, so it can only enter the answer through the graph,
	// where its BM25 score is read from sc.bm25 (cleared on return).
	fused, lexMax := e.seedRanking(sc, req.Query, toks, qvec, req.SemanticWeight, req.NoLexical, max(req.Seeds, req.K), allow)
	scores := sc.bm25
	defer clear(scores)
	// Scores are reported relative to the best seed; a list whose evidence is all zero (a name
	// match at the threshold, a flat semantic list) keeps its order with zero scores.
	fmax := 1.0
	if len(fused) > 0 && fused[0].score > 0 {
		fmax = fused[0].score
	}
	seeds := fused[:seedCount(fused, req.Seeds)]
	if req.NoGraph {
		res := make([]Result, 0, min(req.K, len(fused)))
		for i, c := range fused[:min(req.K, len(fused))] {
			r := Result{ID: c.id, Name: e.g.Name(c.id), Score: c.score / fmax}
			if i < len(seeds) {
				r.SeedRank = i + 1
			}
			res = append(res, r)
		}
		return Response{Results: res, Note: note, Match: e.matchStrength(sc, toks, fused, 0)}, nil
	}
	// The memory's votes (memory.go); nil where it is silent. What was learned from use, the
	// graph's edges and the memory's words, comes in together: no_graph is the seeds alone.
	votes := e.memoryVotes(sc, &req, toks, allow)

	pi := sc.pi
	restart(pi, seeds)
	// The seeds in ascending order (insertion sort: a few dozen at most), as push starts from.
	if cap(sc.seedIDs) < len(seeds) {
		sc.seedIDs = make([]int32, len(seeds))
	}
	seedIDs := sc.seedIDs[:len(seeds)]
	for i, c := range seeds {
		seedIDs[i] = int32(c.id)
		for j := i; j > 0 && seedIDs[j] < seedIDs[j-1]; j-- {
			seedIDs[j], seedIDs[j-1] = seedIDs[j-1], seedIDs[j]
		}
	}
	resp := Response{Note: note}

	// Seed evidence of every listed skill (its place in fused), then the graph's evidence from
	// each seed's row: Π (1 − f_u·c) over the seeds linked to a skill, in linkMiss, the skills
	// in linkIDs in the order first linked.
	n := e.g.NumSkills()
	listed, linked := &sc.listed, &sc.linked
	listed.reset(n)
	for i, c := range fused {
		listed.set(c.id, i)
	}
	linked.reset(n)
	linkIDs, linkMiss := sc.linkIDs[:0], sc.linkMiss[:0]
	for _, c := range seeds {
		fu := c.score / fmax
		for i := e.off[c.id]; i < e.off[c.id+1]; i++ {
			v := int(e.to[i])
			k, ok := linked.get(v)
			if !ok {
				k = len(linkIDs)
				linked.set(v, k)
				linkIDs, linkMiss = append(linkIDs, v), append(linkMiss, 1)
			}
			linkMiss[k] *= 1 - fu*e.entryEvidence(c.id, i)
		}
	}
	sc.linkIDs, sc.linkMiss = linkIDs, linkMiss
	// own is a skill's seed evidence, graph its evidence from the seeds' edges (0 unlinked).
	own := func(v int) float64 {
		if i, ok := listed.get(v); ok {
			return fused[i].score / fmax
		}
		if lexMax > 0 {
			return scores[v] / lexMax / fmax
		}
		return 0
	}
	graph := func(v int) float64 {
		if k, ok := linked.get(v); ok {
			return GraphWeight * (1 - linkMiss[k])
		}
		return 0
	}
	final := func(v int) float64 { return max(own(v), graph(v)) + votes.of(sc, v) }
	// The answer is drawn from the listed skills and the seeds' neighbours with graph evidence:
	// any other skill has none and scores below each of the BM25 top K (seedRanking), so neither
	// the propagation nor its error bound can change the ranking.
	// The answer's first matchBundle results decide its match strength whatever k asks for.
	kk := max(req.K, matchBundle)
	top := topCandidates{k: kk, h: sc.top[:0]}
	for _, c := range fused {
		top.offer(candidate{c.id, final(c.id)})
	}
	for k, v := range linkIDs {
		if _, ok := listed.get(v); !ok && linkMiss[k] < 1 && kept(allow, v) {
			top.offer(candidate{v, final(v)})
		}
	}
	for _, v := range votes.voters() {
		_, isListed := listed.get(v.id)
		_, isLinked := linked.get(v.id)
		if !isListed && !isLinked && v.score > 0 {
			top.offer(candidate{v.id, final(v.id)})
		}
	}

	ranked := top.sorted()
	sc.top = ranked
	bundle := ranked[:min(matchBundle, len(ranked))]
	strength := e.matchStrength(sc, toks, bundle, votes.recalledBy(sc, bundle))
	ranked = ranked[:min(req.K, len(ranked))]
	res := make([]Result, len(ranked))
	scale := votes.scale(ranked)
	for i, c := range ranked {
		res[i] = Result{ID: c.id, Name: e.g.Name(c.id), Score: c.score * scale, Graph: graph(c.id) > own(c.id),
			Recalled: votes.evidence(sc, c.id, toks)}
		if j, ok := listed.get(c.id); ok && j < len(seeds) {
			res[i].SeedRank = j + 1
		}
	}
	// From here on listed maps the answer's skills to their places in it.
	listed.reset(n)
	for i, c := range ranked {
		listed.set(c.id, i)
	}
	// The propagation decides one thing the answer shows: which of its skills relevance reached,
	// whose edges into the answer Via may list. Push stops once it has reached every such skill.
	var reached func(u int) bool
	if e.exactPPR != nil {
		// Tests only: power iteration to convergence, the reference push is held to.
		var p []float64
		p, resp.Iterations = e.exactPPR(pi, sc.p, sc.q, req.Gamma)
		reached = func(u int) bool { return p[u] > 0 }
	} else if !scoresOnly {
		_, resp.Residual, resp.Pushes = e.push(sc, seedIDs, e.viaSources(sc, ranked, listed), req.Gamma, PushEpsilon)
		stamp := sc.stamp
		reached = func(u int) bool { return sc.mark[u] == stamp }
	}
	for _, c := range seeds {
		pi[c.id] = 0
	}
	for i, c := range ranked {
		if !scoresOnly {
			res[i].Via = e.via(sc, c.id, ranked, listed, reached)
		}
	}
	if e.exactPPR != nil {
		clear(sc.p)
		clear(sc.q)
	} else {
		for _, v := range sc.nodes {
			sc.p[v], sc.q[v] = 0, 0
		}
	}
	resp.Results, resp.Match = res, strength
	return resp, nil
}

// minSeedShare is the least share of the best seed's evidence a seed has: a skill listed with
// next to none (a name at the threshold, the floor of a semantic list, a word of another
// language) is no seed, and would start next to no relevance. On the dev task sets 2 of 2,622
// answers had such a seed; their rankings are unchanged without it.
const minSeedShare = 0.01

// seedCount is how many of fused's first entries are seeds: at most seeds, each with at least
// minSeedShare of the first one's score, which is positive.
func seedCount(fused []candidate, seeds int) int {
	n := min(seeds, len(fused))
	for n > 0 && !(fused[n-1].score > 0 && fused[n-1].score >= minSeedShare*fused[0].score) {
		n--
	}
	return n
}

// entryEvidence is how much entry i of row u says that its target belongs with u: a reverse
// entry (the target is a prerequisite of u) carries its calibrated confidence, since what u
// needs it needs whatever else the query asks; a forward entry (the target is a follow-up of u)
// carries its confidence shared among u's follow-ups, since one skill's output feeding many
// skills says little about which of them a task runs next.
func (e *Engine) entryEvidence(u int, i int32) float64 {
	c := float64(e.conf[i])
	if e.rev[i] {
		return c
	}
	return c / max(1, float64(e.fanOut[u]))
}

// restart writes the PPR restart vector of seeds into pi: mass ∝ each seed's fused score
// so a weak fifth seed starts little relevance.
func restart(pi []float64, seeds []candidate) {
	var mass float64
	for _, c := range seeds {
		mass += c.score
	}
	for _, c := range seeds {
		pi[c.id] = c.score / mass
	}
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

// via lists the published edges that carried relevance into v from other results, the
// strongest first and each neighbour's link once (sameLink): an entry u→v of T counts when the propagation reached u, and its strength is
// u's score times the share of u's relevance the entry passes on (its row-normalized weight),
// ties broken by entry. The strength is the PPR flow p(u)·T(u,v) with u's score for p(u): the
// order does not move with the propagation's error, and forward push reaches every skill whose
// exact relevance exceeds its residual (Response.Residual), so Via lists the same edges as an
// exact computation would but for results whose own relevance is within that bound.
//
// ranked is the answer, and place maps its skills to their places in it.
func (e *Engine) via(sc *scratch, v int, ranked []candidate, place *slots, reached func(u int) bool) []Via {
	cs := sc.via[:0]
	for _, i := range e.in[e.inOff[v]:e.inOff[v+1]] {
		u := e.source(i)
		j, ok := place.get(u)
		if !ok || !reached(u) {
			continue
		}
		cs = append(cs, candidate{int(i), ranked[j].score * e.w[i]})
	}
	sortCandidates(cs)
	sc.via = cs
	var out []Via
	for _, c := range cs {
		if len(out) == maxVia {
			break
		}
		k := int(e.edge[c.id])
		v := Via{
			From:    e.g.Name(e.source(int32(c.id))),
			State:   e.g.State(k).String(),
			Weight:  e.g.Weight(k),
			Type:    e.g.Type(k).String(),
			Reverse: e.rev[c.id],
		}
		if !sameLink(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// viaSources returns the skills of the answer ranked (place maps them to their places) with an
// entry of T into another of its skills: the only skills via asks whether the propagation
// reached. Each is listed once, in sc.want.
func (e *Engine) viaSources(sc *scratch, ranked []candidate, place *slots) []int32 {
	// Never nil, even when empty (sc.want holds MaxK): push runs to the end for a nil list.
	want := sc.want[:0]
	for _, c := range ranked {
		for _, v := range e.to[e.off[c.id]:e.off[c.id+1]] {
			if _, ok := place.get(int(v)); ok {
				want = append(want, int32(c.id))
				break
			}
		}
	}
	return want
}

// sameLink reports whether vs already holds the link v states, the stronger entry coming first:
// a symmetric relation (semantic, alternative) published both ways reaches a skill as a
// forward and as a reverse entry from the same neighbour, and says the same thing twice.
func sameLink(vs []Via, v Via) bool {
	symmetric := v.Type == graphs.Semantic.String() || v.Type == graphs.Alternative.String()
	for _, w := range vs {
		if w.From == v.From && w.Type == v.Type && (symmetric || w.Reverse == v.Reverse) {
			return true
		}
	}
	return false
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

// seedRanking ranks skills for query (whose distinct terms are toks, from analyze) by fusing the evidence of BM25 (with typo-corrected
// terms), fuzzy identifier matches and, when qvec is not nil, the skills closest to the unit
// query vector qvec, and returns every listed skill (the BM25 top max(need, agreementDepth),
// the name matches and
// the semantic list) by fused score, best first, with the best BM25 score. It leaves the BM25
// scores in sc.bm25 for the caller to read and clear.
//
// The fusion adds scores, not ranks, so that a channel with weak or flat evidence cannot outvote
// a confident one: BM25 over the best BM25 score; a name match's nameEvidence (an identifier
// written into the query is strong evidence); and the semantic
// list's cosines scaled to [0, 1] between its last and first entry, weighted by semWeight times
// its agreement with the lexical list. A query term counts once however often it is repeated:
// long task texts repeat their verbs ("calculate … then calculate …"), which said nothing about
// which tool each part needs.
//
// A skill outside the BM25 top need and on no other list has a fused score no higher than
// each of the top need's, so the head is all a caller reading need entries needs.
func (e *Engine) seedRanking(sc *scratch, query string, toks []queryToken, qvec []float32, semWeight float64, noLexical bool, need int, allow []uint64) ([]candidate, float64) {
	g := e.g
	if noLexical {
		toks = nil
	}
	// The query's terms, one a token but for typo corrections, are found for the answer's match
	// strength (matchStrength) even when BM25 does not rank.
	terms := sc.terms[:0]
	for i, tk := range toks {
		if tk.vocab >= 0 && e.vocab.lex[tk.vocab] >= 0 {
			terms = append(terms, queryTerm{int(e.vocab.lex[tk.vocab]), 1, i})
			continue
		}
		for _, idx := range typoTerms(g, &e.terms, tk.text) {
			terms = append(terms, queryTerm{idx, typoWeight, i})
		}
	}
	sc.terms = terms
	if noLexical {
		terms = nil
	}
	scores := sc.bm25
	bm25(g, e.impacts, terms, scores)
	if allow != nil {
		for i := range scores {
			if !kept(allow, i) {
				scores[i] = 0
			}
		}
	}

	var names []candidate
	if ids := identifiers(query); len(ids) > 0 && !noLexical {
		names = keep(allow, e.names.match(sc, ids))
		sortCandidates(names)
	}
	var sem []candidate
	if qvec != nil {
		sem = keep(allow, e.semanticRanking(sc, qvec))
	}

	// The BM25 head; every other listed skill's BM25 score is read from the score array, which
	// the caller clears.
	head := topCandidates{k: max(need, agreementDepth), h: sc.head[:0]}
	head.offerPositive(scores)
	lex := head.sorted()
	sc.head = lex
	var lexMax float64
	if len(lex) > 0 {
		lexMax = lex[0].score
	}
	semW := semWeight * agreement(lex, sem)
	var semTop, semFloor float64
	if len(sem) > 0 {
		// Beside a lexical list, evidence is measured from the cosine at semanticFloorRank:
		// deeper entries are the query's topic, not its needs (semanticFloorRank).
		floor := len(sem)
		if len(lex) > 0 {
			floor = min(floor, semanticFloorRank)
		}
		semTop, semFloor = sem[0].score, sem[floor-1].score
	}
	at := &sc.listed // skill → index in out
	at.reset(g.NumSkills())
	out := sc.fused[:0]
	if cap(out) < len(lex)+len(names)+len(sem) {
		out = make([]candidate, 0, len(lex)+len(names)+len(sem))
	}
	add := func(id int, s float64) {
		k, ok := at.get(id)
		if !ok {
			k = len(out)
			at.set(id, k)
			var l float64
			if lexMax > 0 {
				l = scores[id] / lexMax
			}
			out = append(out, candidate{id, l})
		}
		out[k].score += s
	}
	for _, c := range lex {
		add(c.id, 0)
	}
	for _, c := range names {
		add(c.id, nameEvidence(c.score))
	}
	for _, c := range sem {
		var x float64
		if semTop > semFloor {
			x = max(0, c.score-semFloor) / (semTop - semFloor)
		}
		add(c.id, semW*x)
	}
	sortCandidates(out)
	sc.fused = out
	return out, lexMax
}

// nameEvidence maps a name similarity in [nameMatchMin, 1] to seed evidence in [0, 2]: an
// identifier written into the query outweighs the best BM25 score, and an exact one outweighs a
// near one that BM25 also likes.
func nameEvidence(sim float64) float64 {
	return 2 * (sim - nameMatchMin) / (1 - nameMatchMin)
}

// agreement is the share of the first agreementDepth semantic candidates that are also among
// the first agreementDepth lexical ones (1 when there is no lexical list to agree with). A
// semantic list that finds what the words find is on topic and may reorder and extend it; one
// that finds other things is most often a model that does not know the library's vocabulary,
// and its weight falls with it.
func agreement(lex, sem []candidate) float64 {
	if len(lex) == 0 {
		return 1
	}
	m := min(agreementDepth, len(lex), len(sem))
	if m == 0 {
		return 0
	}
	a := 0
	for _, c := range sem[:min(agreementDepth, len(sem))] {
		for _, l := range lex[:min(agreementDepth, len(lex))] {
			a += b2i(l.id == c.id) // ids are distinct within each list
		}
	}
	return float64(min(a, m)) / float64(m)
}

// sortCandidates orders by score descending, then by id, so ties never depend on map order. It
// is a heap sort rather than slices.SortFunc: the order is total (ids are distinct), so any
// correct sort gives the same result, and this one is a fraction of pdqsort's code in the module.
func sortCandidates(cs []candidate) {
	if sortKernel && len(cs) <= insertMax {
		insertCandidates(cs) // the same order: better is total on distinct candidates
		return
	}
	n := len(cs)
	for i := n/2 - 1; i >= 0; i-- {
		siftCandidates(cs, i, n)
	}
	for end := n - 1; end > 0; end-- {
		cs[0], cs[end] = cs[end], cs[0]
		siftCandidates(cs, 0, end)
	}
}

// insertMax is the longest list WebAssembly sorts with insertCandidates: the fused lists and
// answers of a query, a hundred candidates or so. Longer ones (a k of 1,000) take the heap sort.
const insertMax = 128

// insertCandidatesGo sorts cs best first by insertion: sortCandidates' order, which the tests
// hold WebAssembly's kernel (insertCandidates) to.
func insertCandidatesGo(cs []candidate) {
	for i := 1; i < len(cs); i++ {
		x, j := cs[i], i
		for ; j > 0 && better(x, cs[j-1]); j-- {
			cs[j] = cs[j-1]
		}
		cs[j] = x
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
