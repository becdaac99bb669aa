package builder

import (
	"sort"
)

// poolSize is the most skills scored per source: the ones sharing the most token IDF mass.
const poolSize = 400

// candidates proposes, for every source, the top targets of each proposing channel among the
// skills it shares a token with, co-occurs with in traces, or is declared a prerequisite of;
// scores them on every active channel, computes the association score, and keeps the Cap best.
func (b *builder) candidates(rep *Report) []Candidate {
	n := len(b.skills)
	// Blocking: only pairs that share a not-too-common token are scored, which keeps induction
	// near-linear for large libraries instead of quadratic.
	post := map[string][]int{}
	for j, f := range b.feat {
		seen := map[string]bool{}
		add := func(t string) {
			if !seen[t] {
				seen[t] = true
				post[t] = append(post[t], j)
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
	maxDF := b.opt.MaxPostingDF
	if maxDF <= 0 {
		maxDF = max(50, min(n/10, 300))
	}
	linked := make([][]int, n) // declared and mentioned relations, both ways
	for j, f := range b.feat {
		for _, d := range f.deps {
			linked[d] = append(linked[d], j)
		}
		for _, m := range f.mentions {
			linked[m] = append(linked[m], j)
			linked[j] = append(linked[j], m)
		}
	}

	var out []Candidate
	mark := make([]int, n)
	for i := range mark {
		mark[i] = -1
	}
	shared := make([]float64, n) // IDF mass of the tokens source i shares with each skill
	var touched []int
	for i := range n {
		b.progress("candidates", i, n)
		var pool []int
		visit := func(j int) {
			if j != i && mark[j] != i {
				mark[j] = i
				pool = append(pool, j)
			}
		}
		f := &b.feat[i]
		for _, j := range touched {
			shared[j] = 0
		}
		touched = touched[:0]
		probe := func(t string) {
			ps := post[t]
			if len(ps) > maxDF {
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
					touched = append(touched, j)
				}
				shared[j] += w
			}
		}
		for _, e := range f.text {
			probe(e.term)
		}
		for _, o := range f.outputs {
			for _, t := range o.tokens {
				probe(t)
			}
		}
		// Approximate neighbour search: only the skills sharing the most IDF mass with the
		// source are scored, so induction stays linear in the library size.
		if len(touched) > poolSize {
			sort.Slice(touched, func(x, y int) bool {
				if shared[touched[x]] != shared[touched[y]] {
					return shared[touched[x]] > shared[touched[y]]
				}
				return touched[x] < touched[y]
			})
		}
		for _, j := range touched[:min(len(touched), poolSize)] {
			visit(j)
		}
		for _, j := range linked[i] {
			visit(j)
		}
		if b.traces != nil {
			for _, j := range b.traces.neighbors[i] {
				visit(j)
			}
		}
		sort.Ints(pool)

		phis := make([][]float64, len(pool))
		for k, j := range pool {
			phis[k] = make([]float64, len(b.signals))
			for c, s := range b.signals {
				if s.Score != nil {
					phis[k][c] = s.Score(i, j)
				}
			}
		}
		chosen := make([]bool, len(pool))
		for c, s := range b.signals {
			if !s.Propose {
				continue
			}
			var ks []int
			for k := range pool {
				if phis[k][c] >= s.Min {
					ks = append(ks, k)
				}
			}
			sort.SliceStable(ks, func(x, y int) bool { return phis[ks[x]][c] > phis[ks[y]][c] })
			for _, k := range ks[:min(len(ks), b.opt.PerChannel)] {
				chosen[k] = true
				rep.PerChannel[s.Name]++
			}
		}
		var mine []Candidate
		for k := range pool {
			if !chosen[k] {
				continue
			}
			c := Candidate{Source: i, Target: pool[k], Phi: map[string]float64{}}
			for ch, s := range b.signals {
				if s.Score != nil {
					c.Phi[s.Name] = phis[k][ch]
				}
			}
			c.A = b.association(c.Phi)
			c.Type = b.relation(&c)
			mine = append(mine, c)
		}
		sort.SliceStable(mine, func(x, y int) bool { return mine[x].A > mine[y].A })
		out = append(out, mine[:min(len(mine), b.opt.Cap)]...)
	}
	b.progress("candidates", n, n)
	// A proposed pair enters in both directions: the channels find neighbours, and it is the
	// reorder probe that decides which way an edge points. Without the reverse, a prerequisite
	// that many skills need could only ever reach the Cap of them it proposed itself.
	have := make(map[pair]bool, len(out))
	for _, c := range out {
		have[pair{c.Source, c.Target}] = true
	}
	for k, m := 0, len(out); k < m; k++ {
		i, j := out[k].Target, out[k].Source
		if have[pair{i, j}] {
			continue
		}
		have[pair{i, j}] = true
		c := Candidate{Source: i, Target: j, Phi: map[string]float64{}}
		for _, s := range b.signals {
			if s.Score != nil {
				c.Phi[s.Name] = s.Score(i, j)
			}
		}
		c.A = b.association(c.Phi)
		c.Type = b.relation(&c)
		out = append(out, c)
	}
	// Every pair the runs used together is a candidate both ways, whatever the other channels
	// proposed: runs are observations of the library in use, not a similarity to rank and cap.
	if b.traces != nil {
		for i := range n {
			for _, j := range b.traces.neighbors[i] {
				if have[pair{i, j}] {
					continue
				}
				have[pair{i, j}] = true
				c := Candidate{Source: i, Target: j, Phi: map[string]float64{}}
				for _, s := range b.signals {
					if s.Score != nil {
						c.Phi[s.Name] = s.Score(i, j)
					}
				}
				c.A = b.association(c.Phi)
				c.Type = b.relation(&c)
				out = append(out, c)
			}
		}
	}
	return out
}

// association is A = clip(Σλφ / Σλ) over the channels present in phi, then the structural
// floor A = max(A, η·φ_struct) when φ_struct > τ_str, so a clear role order on the same object counts even when the
// texts differ.
func (b *builder) association(phi map[string]float64) float64 {
	var sum, sumL float64
	for _, s := range b.signals {
		if v, ok := phi[s.Name]; ok {
			sum += s.Lambda * v
			sumL += s.Lambda
		}
	}
	a := 0.0
	if sumL > 0 {
		a = clip(sum/sumL, 0, 1)
	}
	if st := phi[ChanStructural]; st > b.opt.TauStr {
		a = max(a, b.opt.EtaStr*st)
	}
	return a
}

// frontierBudget is the frontier size of this build, 0 for every candidate: the Budget option,
// or for BudgetAuto every candidate with the free contract prober and ModelBudget with any other.
func (b *builder) frontierBudget() int {
	switch {
	case b.opt.Budget != BudgetAuto:
		return b.opt.Budget
	case b.opt.Prober == nil:
		return 0
	}
	return ModelBudget
}

// frontier returns the indexes of the candidates to probe: the highest A first, at least
// FrontierMin, at most frontierBudget of them (all when it is 0). Ties keep candidate order.
func (b *builder) frontier(cands []Candidate) []int {
	var idx []int
	for k, c := range cands {
		if c.A >= b.opt.FrontierMin {
			idx = append(idx, k)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return cands[idx[x]].A > cands[idx[y]].A })
	if budget := b.frontierBudget(); budget > 0 && len(idx) > budget {
		idx = idx[:budget]
	}
	return idx
}

func (b *builder) progress(stage string, done, total int) {
	if b.opt.Progress != nil {
		b.opt.Progress(stage, done, total)
	}
}
