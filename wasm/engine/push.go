package engine

// Forward push (Andersen, Chung and Lang, 2006) computes the same personalized PageRank as the
// power iteration in ppr, but touches only the nodes relevance actually reaches, so its cost does
// not grow with the library. It keeps an estimate p and a residual r with the invariant
// ppr(π) = p + Σ_u r(u)·ppr(e_u); every push moves γ·r(u) into p(u) and spreads (1−γ)·r(u) over
// u's row of T. Because every ppr(e_u) sums to 1, the L1 error of p is exactly Σ_u r(u), which
// push returns: the stated error bound.
const (
	// PushThreshold is the library size from which Query uses forward push instead of power
	// iteration.
	PushThreshold = 20000
	// PushEpsilon is the residual below which a node is not pushed. The L1 error of the
	// scores is the residual left, reported in Response.Residual.
	PushEpsilon = 1e-7
)

// push runs forward push from π until no node holds more than eps residual. Nodes are pushed
// in first-in first-out order from the seeds in π's index order, so the result is
// deterministic. It returns the estimate, the residual mass left (the L1 error bound) and the
// number of pushes.
func (e *Engine) push(pi []float64, gamma, eps float64) (p []float64, residual float64, pushes int) {
	n := len(pi)
	p = make([]float64, n)
	r := make([]float64, n)
	queued := make([]bool, n)
	var queue []int32
	for u, x := range pi {
		if x > 0 {
			r[u] = x
			queue = append(queue, int32(u))
			queued[u] = true
		}
	}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		queued[u] = false
		ru := r[u]
		if ru <= eps {
			continue
		}
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
		for i := lo; i < hi; i++ {
			v := e.to[i]
			r[v] += share * e.w[i]
			if r[v] > eps && !queued[v] {
				queued[v] = true
				queue = append(queue, v)
			}
		}
		// Keep the queue's backing array from growing without bound.
		if head > 1<<16 && head > len(queue)/2 {
			queue = append(queue[:0], queue[head+1:]...)
			head = -1
		}
	}
	for _, x := range r {
		residual += x
	}
	return p, residual, pushes
}
