package builder

import (
	"cmp"
	"slices"
	"sort"
)

// poolSize is the most skills scored per source: the ones sharing the most token IDF mass.
const poolSize = 400

// candidates proposes, for every source, the top targets of each proposing channel among the
// skills it shares a token with, co-occurs with in traces, or is declared a prerequisite of;
// scores them on every active channel, computes the association score, and keeps the Cap best.
// Every proposed pair then enters in both directions, and every pair the runs used together
// too (completeCandidates).
func (b *builder) candidates(rep *Report) []edgeCandidate {
	n := len(b.skills)
	bl := b.newBlocking()
	// Sources are independent: workers take blocks of them in turn, each with its own scratch,
	// and the proposals are joined in source order, so the result does not depend on how many
	// workers ran or how they were scheduled.
	per := make([]proposals, n)
	counts := make([][]int, n) // per source, the targets each signal proposed
	b.progress("candidates", 0, n)
	parallel(n, func() func(i int) {
		own, sc := bl.fork(), b.newScorer()
		return func(i int) {
			pool := own.pool(i)
			per[i], counts[i] = b.choose(i, pool, sc.scores(i, pool))
		}
	}, func(done int) { b.progress("candidates", done, n) })
	return b.completeCandidates(b.joinProposals(per, counts, rep))
}

// proposals are the candidates choose keeps for one source, held compactly until they are
// joined: each target, and its φ on every channel of b.signals, len(b.signals) values a target.
// A candidate is a function of the two (b.candidate); a large library's proposals held as
// candidates would take three times the room.
type proposals struct {
	targets []int32
	phi     []float64
}

// joinProposals makes the candidates of the sources' proposals, in source order, counts in rep
// the targets each signal proposed, and leaves room for the reverses completeCandidates adds,
// so that the candidates of a large library are held once.
func (b *builder) joinProposals(per []proposals, counts [][]int, rep *Report) []edgeCandidate {
	n, ns := len(per), len(b.signals)
	start := make([]int, n+1)
	total := 0
	for i := range per {
		start[i+1] = start[i] + len(per[i].targets)
		for _, j := range per[i].targets {
			if !slices.Contains(per[j].targets, int32(i)) {
				total++ // a reverse completeCandidates adds
			}
		}
		for c, k := range counts[i] {
			rep.PerChannel[b.signals[c].Name] += k
		}
	}
	out := make([]edgeCandidate, start[n], start[n]+total)
	parallel(n, func() func(i int) {
		return func(i int) {
			p := per[i]
			for x, j := range p.targets {
				out[start[i]+x] = b.candidate(i, int(j), p.phi[x*ns:(x+1)*ns])
			}
		}
	}, nil)
	return out
}

// blocking finds, for each source, the skills worth scoring against it: only pairs that share
// a not-too-common token, a declared or mentioned relation, or a run are scored, which keeps
// induction near-linear for large libraries instead of quadratic.
type blocking struct {
	b      *builder
	post   map[string][]int // skills by token of their text or inputs, each skill once a token
	maxDF  int              // tokens of more skills than this are too common to propose pairs
	linked [][]int          // declared and mentioned relations, both ways

	// Scratch space reused from source to source.
	mark    []int     // mark[j] == i: j is in the pool of source i already
	shared  []float64 // IDF mass of the tokens the current source shares with each skill
	touched []int     // the skills whose shared mass is not 0
	heap    []int     // the best of touched (nearest)
}

// newBlocking indexes the skills' tokens and relations.
func (b *builder) newBlocking() *blocking {
	n := len(b.skills)
	bl := &blocking{b: b, post: map[string][]int{}, maxDF: b.opt.MaxPostingDF,
		linked: make([][]int, n), mark: make([]int, n), shared: make([]float64, n)}
	for j, f := range b.feat {
		seen := map[string]bool{}
		add := func(t string) {
			if !seen[t] {
				seen[t] = true
				bl.post[t] = append(bl.post[t], j)
			}
		}
		for _, e := range f.text {
			add(e.term)
		}
		for _, in := range f.inputs {
			for _, t := range in.tokens {
				add(t)
			}
		}
	}
	if bl.maxDF <= 0 {
		bl.maxDF = max(50, min(n/10, 300))
	}
	for j, f := range b.feat {
		for _, d := range f.deps {
			bl.linked[d] = append(bl.linked[d], j)
		}
		for _, m := range f.mentions {
			bl.linked[m] = append(bl.linked[m], j)
			bl.linked[j] = append(bl.linked[j], m)
		}
	}
	for i := range bl.mark {
		bl.mark[i] = -1
	}
	return bl
}

// proposes reports whether proposals, one source's, hold target j.
func proposes(proposals []edgeCandidate, j int) bool {
	for _, c := range proposals {
		if c.Target == j {
			return true
		}
	}
	return false
}

// fork returns a blocking that shares bl's index and has scratch space of its own, for one
// worker.
func (bl *blocking) fork() *blocking {
	f := &blocking{b: bl.b, post: bl.post, maxDF: bl.maxDF, linked: bl.linked,
		mark: make([]int, len(bl.mark)), shared: make([]float64, len(bl.shared))}
	for i := range f.mark {
		f.mark[i] = -1
	}
	return f
}

// pool returns, in increasing order, the skills to score source i against: its nearest by
// shared tokens, and those linked to it or run with it.
func (bl *blocking) pool(i int) []int {
	var pool []int
	visit := func(j int) {
		if j != i && bl.mark[j] != i {
			bl.mark[j] = i
			pool = append(pool, j)
		}
	}
	for _, j := range bl.nearest(i) {
		visit(j)
	}
	for _, j := range bl.linked[i] {
		visit(j)
	}
	if bl.b.traces != nil {
		for _, j := range bl.b.traces.neighbors[i] {
			visit(j)
		}
	}
	sort.Ints(pool)
	return pool
}

// nearest returns the skills whose text or inputs share a not-too-common token with the text
// or outputs of source i: all of them, or, past poolSize, the poolSize sharing the most IDF
// mass (an approximate neighbour search, so that induction stays linear in the library size).
// The slice is scratch space, valid until the next call.
func (bl *blocking) nearest(i int) []int {
	b, shared := bl.b, bl.shared
	for _, j := range bl.touched {
		shared[j] = 0
	}
	bl.touched = bl.touched[:0]
	probe := func(t string) {
		ps := bl.post[t]
		if len(ps) > bl.maxDF {
			return
		}
		w := b.idf[t]
		if w == 0 {
			w = b.maxIDF
		}
		for _, j := range ps {
			if j == i {
				continue
			}
			if shared[j] == 0 {
				bl.touched = append(bl.touched, j)
			}
			shared[j] += w
		}
	}
	f := &b.feat[i]
	for _, e := range f.text {
		probe(e.term)
	}
	for _, o := range f.outputs {
		for _, t := range o.tokens {
			probe(t)
		}
	}
	touched := bl.touched
	if len(touched) <= poolSize {
		return touched
	}
	bl.heap = best(touched, shared, poolSize, bl.heap[:0])
	return bl.heap
}

// best returns the k items of ids with the highest score, the lower id first among equals,
// in no particular order, appended to h: a heap whose root is the worst kept, replaced by
// each better one. len(ids) must be at least k.
func best(ids []int, score []float64, k int, h []int) []int {
	worse := func(x, y int) bool { // x ranks below y
		if score[x] != score[y] {
			return score[x] < score[y]
		}
		return x > y
	}
	down := func(at int) {
		for {
			c := 2*at + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && worse(h[c+1], h[c]) {
				c++
			}
			if !worse(h[c], h[at]) {
				return
			}
			h[at], h[c] = h[c], h[at]
			at = c
		}
	}
	h = append(h, ids[:k]...)
	for at := k/2 - 1; at >= 0; at-- {
		down(at)
	}
	for _, j := range ids[k:] {
		if worse(h[0], j) {
			h[0] = j
			down(0)
		}
	}
	return h
}

// choose takes, for source i, the PerChannel best targets of each proposing channel among its
// pool, from the pool's values phis on every channel (in the order of b.signals), and returns
// them as proposals, the highest association first, at most Cap of them, with how many targets
// each signal proposed. It only reads the builder, so sources can be chosen in parallel.
func (b *builder) choose(i int, pool []int, phis [][]float64) (proposals, []int) {
	counts := make([]int, len(b.signals))
	chosen := make([]bool, len(pool))
	top := make([]int, 0, b.opt.PerChannel)
	for c, s := range b.signals {
		if !s.Propose {
			continue
		}
		// The PerChannel highest at least Min, the earlier first among equals (as a stable
		// sort by value would take them), kept in a short sorted list.
		top = top[:0]
		for k := range pool {
			v := phis[k][c]
			if v < s.Min || (len(top) == b.opt.PerChannel && v <= phis[top[len(top)-1]][c]) {
				continue
			}
			at := len(top)
			for at > 0 && phis[top[at-1]][c] < v {
				at--
			}
			if len(top) < b.opt.PerChannel {
				top = append(top, 0)
			}
			copy(top[at+1:], top[at:len(top)-1])
			top[at] = k
		}
		for _, k := range top {
			chosen[k] = true
			counts[c]++
		}
	}
	b.recordChosen(i, pool, chosen, phis) // for a later Update (update.go)
	// The chosen, by place in pool, and their association.
	var ks []int
	var as []float64
	for k := range pool {
		if chosen[k] {
			phi := b.phiOf(phis[k])
			ks, as = append(ks, k), append(as, b.association(&phi))
		}
	}
	order := make([]int, len(ks))
	for x := range order {
		order[x] = x
	}
	sort.SliceStable(order, func(x, y int) bool { return as[order[x]] > as[order[y]] })
	order = order[:min(len(order), b.opt.Cap)]
	ns := len(b.signals)
	p := proposals{targets: make([]int32, len(order)), phi: make([]float64, 0, len(order)*ns)}
	for x, o := range order {
		p.targets[x] = int32(pool[ks[o]])
		p.phi = append(p.phi, phis[ks[o]]...)
	}
	return p, counts
}

// completeCandidates adds to out, once each, the reverse of every proposed pair and then every
// pair the runs used together, in both directions. out holds the proposals grouped by source
// in increasing order, as joinProposals makes them.
//
// A proposed pair enters in both directions: the channels find neighbours, and it is the
// reorder probe that decides which way an edge points. Without the reverse, a prerequisite
// that many skills need could only ever reach the Cap of them it proposed itself. The runs'
// pairs enter whatever the other channels proposed: runs are observations of the library in
// use, not a similarity to rank and cap.
func (b *builder) completeCandidates(out []edgeCandidate) []edgeCandidate {
	n, m := len(b.skills), len(out)
	// The proposals of source i are out[start[i]:start[i+1]]; the reverse of (i, j) is needed
	// unless j proposed i. Reverses are scored in parallel, each into its own place.
	start := make([]int, n+1)
	for _, c := range out {
		start[c.Source+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	var rev []int // the proposals whose reverse is added, in order
	for k, c := range out {
		if !proposes(out[start[c.Target]:start[c.Target+1]], c.Source) {
			rev = append(rev, k)
		}
	}
	out = slices.Grow(out, len(rev))[:m+len(rev)]
	parallel(len(rev), func() func(x int) {
		return func(x int) {
			c := &out[rev[x]]
			out[m+x] = b.candidate(c.Target, c.Source, b.score(c.Target, c.Source))
		}
	}, nil)
	if b.traces == nil {
		return out
	}
	// The candidates' targets by source, each source's in increasing order, to look the runs'
	// pairs up in: a map of every candidate pair was a tenth of this.
	first, targets := bySource(n, out)
	for k, c := range targets {
		targets[k] = int32(out[c].Target)
	}
	for i := range n {
		slices.Sort(targets[first[i]:first[i+1]])
	}
	// The runs' pairs not yet among them, in order (a skill's companions are distinct, so no
	// pair comes twice), then scored in parallel as the reverses are.
	var runPairs []pair
	for i := range b.skills {
		row := targets[first[i]:first[i+1]]
		for _, j := range b.traces.neighbors[i] {
			if _, ok := slices.BinarySearch(row, int32(j)); !ok {
				runPairs = append(runPairs, pk(i, j))
			}
		}
	}
	m = len(out)
	out = slices.Grow(out, len(runPairs))[:m+len(runPairs)]
	parallel(len(runPairs), func() func(x int) {
		return func(x int) {
			i, j := int(runPairs[x].i), int(runPairs[x].j)
			out[m+x] = b.candidate(i, j, b.score(i, j))
		}
	}, nil)
	return out
}

// score returns φ of the pair (i, j) on every channel, in the order of b.signals; 0 on the
// channels that have no score of their own (the judge). An update takes the earlier build's
// values where it scored the pair (cachedScore).
func (b *builder) score(i, j int) []float64 {
	phi := make([]float64, len(b.signals))
	if b.prev != nil && b.cachedScore(i, j, phi) {
		return phi
	}
	for c, s := range b.signals {
		if s.Score != nil {
			phi[c] = s.Score(i, j)
		}
	}
	return phi
}

// candidate is the pair (i, j) with the channel scores phi (from score), its association
// score and its relation type.
func (b *builder) candidate(i, j int, phi []float64) edgeCandidate {
	c := edgeCandidate{Source: i, Target: j, Phi: b.phiOf(phi)}
	c.A = b.association(&c.Phi)
	c.Type = b.relation(&c)
	return c
}

// phiOf is phi, values in the order of b.signals, as phis of the channels that score.
func (b *builder) phiOf(phi []float64) phis {
	var p phis
	for ch, s := range b.signals {
		if s.Score != nil {
			p.Set(s.Name, phi[ch])
		}
	}
	return p
}

// association is A = clip(Σλφ / Σλ) over the channels present in phi, then the structural
// floor A = max(A, η·φ_struct) when φ_struct > τ_str, so a clear role order on the same object counts even when the
// texts differ.
func (b *builder) association(phi *phis) float64 {
	var sum, sumL float64
	for _, s := range b.signals {
		if v, ok := phi.Lookup(s.Name); ok {
			sum += s.Lambda * v
			sumL += s.Lambda
		}
	}
	a := 0.0
	if sumL > 0 {
		a = clip(sum/sumL, 0, 1)
	}
	if st := phi.Get(chanStructural); st > b.opt.TauStr {
		a = max(a, b.opt.EtaStr*st)
	}
	return a
}

// frontierBudget is the frontier size of this build, 0 for every candidate: the Budget option,
// or for BudgetAuto every candidate with the free contract prober and modelBudget with any other.
func (b *builder) frontierBudget() int {
	switch {
	case b.opt.Budget != BudgetAuto:
		return b.opt.Budget
	case b.opt.Prober == nil:
		return 0
	}
	return modelBudget
}

// frontier returns the indexes of the candidates to probe: the highest A first, at least
// FrontierMin, at most frontierBudget of them (all when it is 0). Ties keep candidate order.
func (b *builder) frontier(cands []edgeCandidate) []int {
	// Sorted as (A, index) pairs held side by side, not as indexes into the candidates: the
	// order is the same (the index breaks ties, as a stable sort keeps them), and a sort of a
	// large library's candidates stays in cache.
	type key struct {
		a float64
		k int
	}
	var keys []key
	for k, c := range cands {
		if c.A >= b.opt.FrontierMin {
			keys = append(keys, key{c.A, k})
		}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(y.a, x.a); c != 0 {
			return c
		}
		return cmp.Compare(x.k, y.k)
	})
	if budget := b.frontierBudget(); budget > 0 && len(keys) > budget {
		keys = keys[:budget]
	}
	idx := make([]int, len(keys))
	for x, k := range keys {
		idx[x] = k.k
	}
	return idx
}

func (b *builder) progress(stage string, done, total int) {
	if b.opt.Progress != nil {
		b.opt.Progress(stage, done, total)
	}
}

// scorer scores one source against the skills of its pool with the values b.score gives, the
// source's text vector held dense (denseText).
// A worker owns one.
type scorer struct {
	b    *builder
	text *denseText
	src  int
	buf  []float64
	phis [][]float64
}

func (b *builder) newScorer() *scorer {
	return &scorer{b: b, text: b.newDenseText(), src: -1}
}

// scores returns φ of (i, j) for every j of pool, on every channel in the order of b.signals.
// The slices are scratch space, valid until the next call.
func (sc *scorer) scores(i int, pool []int) [][]float64 {
	b := sc.b
	if sc.src >= 0 {
		sc.text.unload(b.feat[sc.src].text)
	}
	sc.src = i
	sc.text.load(b.feat[i].text)
	ns := len(b.signals)
	if need := len(pool) * ns; cap(sc.buf) < need {
		sc.buf = make([]float64, need)
	}
	sc.phis = sc.phis[:0]
	for k, j := range pool {
		phi := sc.buf[k*ns : (k+1)*ns]
		for c, s := range b.signals {
			switch {
			case s.Score == nil:
				phi[c] = 0
			case s.lexical:
				phi[c] = sc.text.cosineOf(j)
			default:
				phi[c] = s.Score(i, j)
			}
		}
		sc.phis = append(sc.phis, phi)
	}
	return sc.phis
}

// vectorNorms returns the squared norm of every skill's embedding, nil without vectors.
func (b *builder) vectorNorms() []int64 {
	v := b.vectors
	if v == nil {
		return nil
	}
	norms := make([]int64, len(b.skills))
	for i := range norms {
		for _, x := range v.Data[i*v.Dim : (i+1)*v.Dim] {
			norms[i] += int64(x) * int64(x)
		}
	}
	return norms
}

// bySource returns the indexes of cands grouped by source, in their order within a source
// (counting sort over the n skills): source i's are order[first[i]:first[i+1]].
func bySource(n int, cands []edgeCandidate) (first, order []int32) {
	first = make([]int32, n+1)
	for _, c := range cands {
		first[c.Source+1]++
	}
	for i := range n {
		first[i+1] += first[i]
	}
	order = make([]int32, len(cands))
	next := slices.Clone(first[:n])
	for k, c := range cands {
		order[next[c.Source]] = int32(k)
		next[c.Source]++
	}
	return first, order
}
