package engine

import "math/bits"

// Forward push (Andersen, Chung and Lang, 2006) computes personalized PageRank, the
// propagation of every query at every library size, touching only the nodes relevance actually
// reaches, so its cost does not grow with the library. It keeps an estimate p and a residual r
// with the invariant ppr(π) = p + Σ_u r(u)·ppr(e_u); every push moves γ·r(u) into p(u) and
// spreads (1−γ)·r(u) over u's row of T. Because every ppr(e_u) sums to 1, the L1 error of p is
// exactly Σ_u r(u), which push returns (Response.Residual): the stated error bound. A node that
// push never reaches has an exact relevance of at most that bound, so every node whose exact
// relevance exceeds it is reached.
//
// What the error can move: nothing in the ranking, whose scores are the seed evidence and the
// seeds' direct edges (rank); and in Result.Via only edges out of results whose own exact
// relevance is at most the bound (via). TestQueryMatchesExactPPR and TestRealQueryMatchesExactPPR
// hold answers to those of power iteration run to convergence, under that bound, on the sample
// graphs and on the real 859-skill library (CheckExactPPR).
const (
	// PushEpsilon is the residual below which a node is not pushed. On the 100,000-skill library
	// of docs/benchmarks.md, 1e-5 leaves an L1 error of about 0.02, a twentieth of the pushes 1e-7
	// takes; at 1,000 skills a SkillsBench task takes about 500 pushes (tens of microseconds).
	PushEpsilon = 1e-5
	// exactTolerance and exactIterations make power iteration converge for the exact reference
	// (Engine.exactPPR): (1−γ)^5000 is far below any float64 difference.
	exactTolerance  = 1e-13
	exactIterations = 5000
)

// push runs forward push from π (in sc.pi; seeds lists its non-zero entries in ascending order)
// until no node holds more than eps residual, or MaxIterations pushes per node have run, or,
// when want is not nil, every node of want has been reached: the pushes after that can reach
// more nodes but never un-reach one, so a caller that asks only whether want's nodes are reached
// gets the answer the whole run would give. The residual left is still the L1 error bound. Nodes
// are pushed in first-in first-out order from the seeds in π's index order, so the result is
// deterministic. It returns the estimate (sc.p), the residual mass left (the L1 error bound) and
// the number of pushes; sc.nodes lists every node whose residual became non-zero (the only nodes
// with a non-zero estimate; rank reads them as sc.mark at sc.stamp), and the caller clears sc.p
// and sc.q at them.
//
// The queue holds exactly the nodes with more than eps residual, each once: a node joins when its
// residual crosses eps and leaves, with none, when it is pushed. So the loop needs no per-node
// "queued" flag. The loop over a row has no branch but its own: every entry is written to the
// queue and to the node list and kept (the lists' lengths advance) only when it joins them. In
// WebAssembly each taken branch goes through the function's block dispatcher (how Go compiles
// for it), and at 100,000 skills a query spreads over 100,000 row entries.
//
// WebAssembly runs the loop as pushRing, a kernel in structured loops (packed_wasm.s): the
// same pushes in the same order, and the same stop, over a queue that is a ring and never moves.
func (e *Engine) push(sc *scratch, seeds []int32, want []int32, gamma, eps float64) (p []float64, residual float64, pushes int) {
	p, r := sc.p, sc.q
	mark, stamp := sc.mark, sc.nextStamp()
	// Both lists are written at full length, up to a count. Every node joins the node list
	// once, and one more slot takes the write after the last.
	nodes, nn := sc.nodes[:cap(sc.nodes)], 0
	if len(nodes) <= len(r) {
		nodes = make([]int32, len(r)+1)
	}
	queue, nq := sc.queue[:cap(sc.queue)], 0
	if len(queue) < len(seeds) || pushKernel && (len(queue) <= len(r) || len(queue)&(len(queue)-1) != 0) {
		// pushRing's ring holds every node and the write after the last: a power of two above
		// len(r).
		queue = make([]int32, max(len(seeds), 1<<bits.Len(uint(len(r)))))
	}
	for _, u := range seeds {
		x := sc.pi[u]
		r[u] = x
		nodes[nn] = u
		nn++
		mark[u] = stamp
		if x > eps {
			queue[nq] = u
			nq++
		}
	}
	// A γ near 0 moves almost no mass into p per push: the pushes stop at the bound of the
	// power iteration's work (MaxIterations passes over the nodes), the residual says how far
	// from the answer they got.
	maxPushes := MaxIterations * max(len(r), 1)
	if pushKernel {
		pushes, nn = pushRing(e.off, e.to, e.w, p, r, queue, nodes, mark, gamma, eps, stamp, len(queue)-1, maxPushes, nq, nn, want, b2i(want != nil))
	}
	for head := 0; !pushKernel && head < nq && pushes < maxPushes; head++ {
		// want's first node not reached yet; none left (an empty list, not nil): done.
		for len(want) > 0 && mark[want[0]] == stamp {
			want = want[1:]
		}
		if want != nil && len(want) == 0 {
			break
		}
		u := queue[head]
		ru := r[u]
		r[u] = 0
		pushes++
		lo, hi := e.off[u], e.off[u+1]
		if lo == hi {
			// A row without entries keeps its mass: all of it settles on u.
			p[u] += ru
			continue
		}
		p[u] += gamma * ru
		share := (1 - gamma) * ru
		to, w := e.to[lo:hi], e.w[lo:hi]
		w = w[:len(to)] // one length for both: no bounds check on w[i]
		if len(queue)-nq < len(to) {
			// Room for the whole row: drop the pushed part of the queue (u included), or grow it.
			if head+1 >= len(queue)/2 {
				nq = copy(queue, queue[head+1:nq])
				head = -1
			}
			if len(queue)-nq < len(to) {
				grown := make([]int32, 2*(nq+len(to)))
				copy(grown, queue[:nq])
				queue = grown
			}
		}
		// Two entries a pass: half the loop's own branches. They are applied in order, as the
		// same node can appear twice in a row (an edge and the reverse of another).
		i := 0
		for ; i+2 <= len(to); i += 2 {
			v, x := to[i:i+2:i+2], w[i:i+2:i+2]
			rv := r[v[0]]
			nv := rv + share*x[0]
			r[v[0]] = nv
			queue[nq] = v[0]
			nq += b2i(rv <= eps) & b2i(nv > eps)
			nodes[nn] = v[0]
			nn += b2i(mark[v[0]] != stamp)
			mark[v[0]] = stamp
			rv = r[v[1]]
			nv = rv + share*x[1]
			r[v[1]] = nv
			queue[nq] = v[1]
			nq += b2i(rv <= eps) & b2i(nv > eps)
			nodes[nn] = v[1]
			nn += b2i(mark[v[1]] != stamp)
			mark[v[1]] = stamp
		}
		if i < len(to) {
			v := to[i]
			rv := r[v]
			nv := rv + share*w[i]
			r[v] = nv
			queue[nq] = v
			nq += b2i(rv <= eps) & b2i(nv > eps)
			nodes[nn] = v
			nn += b2i(mark[v] != stamp)
			mark[v] = stamp
		}
	}
	for _, v := range nodes[:nn] {
		residual += r[v]
	}
	sc.nodes, sc.queue = nodes[:nn], queue
	return p, residual, pushes
}

// pushRingGo is push's loop over a queue that is a ring of mask+1 entries, a power of two
// above the number of nodes (it holds each node once, and the write after the last), so that
// it never moves or grows: the same pushes in the same order, and the same stop once want's
// nodes are reached (wantOn 1: want is not nil). It starts from the nq nodes at
// the ring's start and the nn nodes listed, and returns the pushes run and the nodes listed.
// In WebAssembly pushRing is this in structured loops (packed_wasm.s), which push runs there.
func pushRingGo(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int, want []int32, wantOn int) (pushes, nodesLen int) {
	for head := 0; head < nq && pushes < maxPushes; head++ {
		for len(want) > 0 && mark[want[0]] == stamp {
			want = want[1:]
		}
		if wantOn != 0 && len(want) == 0 {
			break
		}
		u := queue[head&mask]
		ru := r[u]
		r[u] = 0
		pushes++
		lo, hi := off[u], off[u+1]
		if lo == hi {
			p[u] += ru
			continue
		}
		p[u] += gamma * ru
		share := (1 - gamma) * ru
		for i := lo; i < hi; i++ {
			v := to[i]
			rv := r[v]
			nv := rv + share*w[i]
			r[v] = nv
			queue[nq&mask] = v
			nq += b2i(rv <= eps) & b2i(nv > eps)
			nodes[nn] = v
			nn += b2i(mark[v] != stamp)
			mark[v] = stamp
		}
	}
	return pushes, nn
}

// Personalization returns the PPR restart vector π of req: its seeds (seedCount) with mass ∝
// their fused scores, as Query uses it. It is for benchmarks and tests that compare the
// propagation methods on real queries.
func (e *Engine) Personalization(req Request) ([]float64, error) {
	if err := req.normalize(); err != nil {
		return nil, err
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	toks := e.analyze(sc, req.Query)
	qvec, err := e.queryVector(sc, &req, toks)
	if err != nil {
		return nil, err
	}
	fused, _ := e.seedRanking(sc, req.Query, toks, qvec, req.SemanticWeight, req.NoLexical, req.Seeds, e.compile(&req.Filter))
	clear(sc.bm25)
	pi := make([]float64, e.g.NumSkills())
	restart(pi, fused[:seedCount(fused, req.Seeds)])
	return pi, nil
}

// PowerIteration runs p ← γπ + (1−γ)Tᵀp from p = π until the L1 change is below tol or after
// maxIter iterations, and returns p and the iterations run: the reference forward push is
// measured against.
func (e *Engine) PowerIteration(pi []float64, gamma, tol float64, maxIter int) ([]float64, int) {
	return e.powerIteration(pi, make([]float64, len(pi)), make([]float64, len(pi)), gamma, tol, maxIter)
}

// ForwardPush runs forward push from π with threshold eps and returns the estimate, its L1 error
// bound (the residual left) and the number of pushes.
func (e *Engine) ForwardPush(pi []float64, gamma, eps float64) (p []float64, residual float64, pushes int) {
	sc := e.getScratch()
	defer e.putScratch(sc)
	copy(sc.pi, pi)
	var seeds []int32
	for u, x := range pi {
		if x > 0 {
			seeds = append(seeds, int32(u))
		}
	}
	p, residual, pushes = e.push(sc, seeds, nil, gamma, eps)
	p = append([]float64(nil), p...)
	clear(sc.pi)
	for _, v := range sc.nodes {
		sc.p[v], sc.q[v] = 0, 0
	}
	return p, residual, pushes
}
