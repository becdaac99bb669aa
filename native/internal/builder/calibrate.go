package builder

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/caskg/caskg/graphs"
)

// posterior is the Beta(1, 1) update of an edge's probes: every probe result e adds δ = max(2|e−.5|,
// ε_e) to α when e > .5 and to β otherwise; it returns α, β and the mean c = α/(α+β).
func posterior(evidence []float64, epsE float64) (alpha, beta, c float64) {
	alpha, beta = 1, 1
	for _, e := range evidence {
		d := math.Max(2*math.Abs(e-0.5), epsE)
		if e > 0.5 {
			alpha += d
		} else {
			beta += d
		}
	}
	return alpha, beta, alpha / (alpha + beta)
}

// stateOf maps a posterior mean to a state: confirmed above tauC, rejected below tauR,
// uncertain between.
func stateOf(c, tauC, tauR float64) graphs.State {
	switch {
	case c > tauC:
		return graphs.Confirmed
	case c < tauR:
		return graphs.Rejected
	}
	return graphs.Uncertain
}

// calibrate gives every probed candidate its posterior and state; the rest stay unvalidated.
// Runs are evidence of their own: a pair the runs used together keeps the larger of the probes'
// posterior and the runs' (traceStats.posterior).
func (b *builder) calibrate(cands []edgeCandidate) {
	for k := range cands {
		c := &cands[k]
		if !c.Probed {
			c.State = graphs.Unvalidated
		} else {
			_, _, c.C = posterior(c.Evidence, b.opt.EpsE)
			c.C = math.Max(c.C, b.traces.posterior(c.Source, c.Target))
			c.State = stateOf(c.C, b.opt.TauConfirm, b.opt.TauReject)
		}
		b.rep.Calibrated[c.State.String()]++
	}
}

// edgeWeight is an edge's published weight: b = max(A, ĉ, ε_w), w = clip(ρ·b, ε_w, 1).
func edgeWeight(a, c, rho, epsW float64) float64 {
	return clip(rho*math.Max(math.Max(a, c), epsW), epsW, 1)
}

// publish keeps confirmed and uncertain edges at their state weights, drops rejected ones, and
// adds a bounded scaffold of unvalidated edges.
func (b *builder) publish(cands []edgeCandidate) []graphs.Edge {
	o := b.opt
	n := len(b.skills)
	var out []graphs.Edge
	live := make([]bool, n) // nodes touched by a live edge
	for _, c := range cands {
		var rho float64
		switch c.State {
		case graphs.Confirmed:
			rho = o.RhoConfirmed
		case graphs.Uncertain:
			rho = o.RhoUncertain
		default:
			continue
		}
		w := edgeWeight(c.A, c.C, rho, o.EpsWeight)
		// A posterior the runs decided is already a calibrated probability (fitted on held-out
		// runs, traceStats.fitPrior): it is published as it is, not discounted by state.
		if tp := b.traces.posterior(c.Source, c.Target); tp > 0 && tp >= c.C {
			w = clip(tp, o.EpsWeight, 1)
		}
		out = append(out, edge(c, w, c.State))
		live[c.Source], live[c.Target] = true, true
	}
	for _, k := range b.scaffold(cands, live, len(out)) {
		c := cands[k]
		out = append(out, edge(c, edgeWeight(c.A, 0, o.RhoScaffold, o.EpsWeight), graphs.Scaffold))
	}
	return out
}

// scaffold selects unvalidated candidates to keep the graph connected: at most
// ScaffoldOut out of and ScaffoldIn into any node, at most max(4N, live) in all, highest A
// first — and first of all those that attach a node no live edge reaches.
func (b *builder) scaffold(cands []edgeCandidate, live []bool, liveEdges int) []int {
	if b.opt.RhoScaffold == 0 {
		return nil
	}
	var pool []int
	for k, c := range cands {
		if c.State == graphs.Unvalidated {
			pool = append(pool, k)
		}
	}
	sort.SliceStable(pool, func(x, y int) bool { return cands[pool[x]].A > cands[pool[y]].A })
	n := len(b.skills)
	limit := max(4*n, liveEdges)
	outDeg, inDeg := make([]int, n), make([]int, n)
	attached := append([]bool(nil), live...)
	taken := make([]bool, len(cands))
	var chosen []int
	take := func(k int) {
		c := cands[k]
		if taken[k] || len(chosen) >= limit || outDeg[c.Source] >= b.opt.ScaffoldOut || inDeg[c.Target] >= b.opt.ScaffoldIn {
			return
		}
		taken[k] = true
		chosen = append(chosen, k)
		outDeg[c.Source]++
		inDeg[c.Target]++
		attached[c.Source], attached[c.Target] = true, true
	}
	for _, k := range pool {
		if c := cands[k]; !attached[c.Source] || !attached[c.Target] {
			take(k)
		}
	}
	for _, k := range pool {
		take(k)
	}
	sort.Ints(chosen)
	return chosen
}

// publishAll publishes every candidate at weight A, unvalidated (the GoS-like baseline).
func publishAll(cands []edgeCandidate, eps float64) []graphs.Edge {
	out := make([]graphs.Edge, 0, len(cands))
	for _, c := range cands {
		out = append(out, edge(c, clip(c.A, eps, 1), graphs.Unvalidated))
	}
	return out
}

func edge(c edgeCandidate, w float64, s graphs.State) graphs.Edge {
	return graphs.Edge{Source: c.Source, Target: c.Target, Weight: float32(w),
		Assoc: float32(clip(c.A, 0, 1)), State: s, Type: c.Type}
}

// judge scores the candidates whose preliminary A passes the gate and folds φ_judge into A.
func (b *builder) judge(ctx context.Context, cands []edgeCandidate) error {
	var idx []int
	var pairs [][2]int
	for k, c := range cands {
		if c.A > b.opt.JudgeGate {
			idx = append(idx, k)
			pairs = append(pairs, [2]int{c.Source, c.Target})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	res, err := b.opt.Judge.Judge(ctx, b.skills, pairs)
	if err != nil {
		return fmt.Errorf("builder: judge %s: %w", b.opt.Judge.Name(), err)
	}
	for p, r := range res {
		b.rep.JudgeCalls++
		if !r.OK {
			b.rep.ProbesFailed++
			continue
		}
		c := &cands[idx[p]]
		c.Phi.Set(chanJudge, clip(r.E, 0, 1))
		c.A = b.association(&c.Phi)
	}
	return nil
}
