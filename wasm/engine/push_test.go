package engine

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/caskg/caskg/graphs"
)

// randomEngine builds an engine over a deterministic random graph of n skills with about deg
// out-edges each, every relation type, and some skills without edges.
func randomEngine(t testing.TB, n, deg int) *Engine {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	a := &graphs.Artifact{Lexicon: graphs.Lexicon{K1: 1, B: 0.5, AvgDL: 1, DocLen: make([]float32, n)}}
	seen := map[[2]int]bool{}
	for i := range n {
		a.Skills = append(a.Skills, graphs.Skill{Name: fmt.Sprintf("s%05d", i), Description: "x"})
		if i%7 == 0 {
			continue // no edges of its own
		}
		for range deg {
			j := rng.IntN(n)
			if j == i || seen[[2]int{i, j}] {
				continue
			}
			seen[[2]int{i, j}] = true
			a.Edges = append(a.Edges, graphs.Edge{Source: i, Target: j, Weight: 0.05 + 0.95*rng.Float32(),
				Assoc: 0.5, State: graphs.Uncertain, Type: graphs.Relation(rng.IntN(4))})
		}
	}
	return artifactEngine(t, a)
}

// TestPushMatchesPowerIteration holds forward push to the power iteration it replaces on large
// graphs: the L1 distance between the two is within push's reported residual plus the power
// iteration's own tolerance, and the top 10 agree.
func TestPushMatchesPowerIteration(t *testing.T) {
	e := randomEngine(t, 3000, 8)
	for _, seeds := range [][]int{{0}, {5, 17, 400}, {1, 2, 3, 4, 5}} {
		pi := make([]float64, 3000)
		var mass float64
		for i := range seeds {
			mass += 1 / float64(i+1)
		}
		for i, s := range seeds {
			pi[s] = 1 / float64(i+1) / mass
		}
		// The power iteration stops at 50 iterations; run it to a tighter fixed point.
		exact, _ := e.PowerIteration(pi, DefaultGamma, 1e-13, 2000)
		for _, eps := range []float64{1e-6, PushEpsilon} {
			p, residual, pushes := e.ForwardPush(pi, DefaultGamma, eps)
			var l1 float64
			for v := range p {
				l1 += math.Abs(p[v] - exact[v])
			}
			t.Logf("seeds %v eps %g: %d pushes, residual %.2e, L1 %.2e", seeds, eps, pushes, residual, l1)
			if l1 > residual+1e-9 {
				t.Errorf("seeds %v eps %g: L1 error %.3e exceeds the residual bound %.3e", seeds, eps, l1, residual)
			}
			if eps == PushEpsilon {
				if got, want := top(p, 10), top(exact, 10); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("seeds %v: top 10 %v, power iteration %v", seeds, got, want)
				}
			}
		}
	}
}

func top(p []float64, k int) []int {
	ids := make([]int, len(p))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return p[ids[a]] > p[ids[b]] })
	return ids[:k]
}

func BenchmarkPush(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		e := randomEngine(b, n, 12)
		pi := make([]float64, n)
		pi[1], pi[2], pi[3] = 0.5, 0.3, 0.2
		b.Run(fmt.Sprintf("push-%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.ForwardPush(pi, DefaultGamma, PushEpsilon)
			}
		})
		b.Run(fmt.Sprintf("power-%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.PowerIteration(pi, DefaultGamma, Tolerance, MaxIterations)
			}
		})
	}
}

// TestPushMatchesReference holds push, whose loops are written for WebAssembly (no flags, no
// branches, a reused queue), to the textbook first-in first-out forward push: the same pushes in
// the same order, so the same estimate bit for bit, the same residual and the same node set.
// Small thresholds make the queue grow and wrap many times.
func TestPushMatchesReference(t *testing.T) {
	e := randomEngine(t, 3000, 8)
	for _, eps := range []float64{1e-3, 1e-5, 1e-7, 1e-9} {
		for _, seeds := range [][]int{{0}, {5, 17, 400}, {7}} { // 7: a row without entries
			pi := make([]float64, 3000)
			for i, s := range seeds {
				pi[s] = 1 / float64(len(seeds)+i)
			}
			want, wantRes, wantPushes := referencePush(e, pi, DefaultGamma, eps)
			got, res, pushes := e.ForwardPush(pi, DefaultGamma, eps)
			if pushes != wantPushes || res != wantRes {
				t.Errorf("eps %g seeds %v: %d pushes, residual %v; reference %d, %v", eps, seeds, pushes, res, wantPushes, wantRes)
			}
			for v := range want {
				if got[v] != want[v] {
					t.Errorf("eps %g seeds %v: p[%d] = %v, reference %v", eps, seeds, v, got[v], want[v])
					break
				}
			}
		}
	}
}

// referencePush is forward push as textbooks write it: a queue with an on-queue flag per node.
// The residual is summed over the nodes in the order they were first given some, as push does.
func referencePush(e *Engine, pi []float64, gamma, eps float64) (p []float64, residual float64, pushes int) {
	n := len(pi)
	p, r, queued, seen := make([]float64, n), make([]float64, n), make([]bool, n), make([]bool, n)
	var queue, order []int
	for u, x := range pi {
		if x > 0 {
			r[u], seen[u], order = x, true, append(order, u)
			if x > eps {
				queue, queued[u] = append(queue, u), true
			}
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue, queued[u] = queue[1:], false
		ru := r[u]
		r[u] = 0
		pushes++
		lo, hi := e.off[u], e.off[u+1]
		if lo == hi {
			p[u] += ru
			continue
		}
		p[u] += gamma * ru
		share := (1 - gamma) * ru
		for i := lo; i < hi; i++ {
			v := int(e.to[i])
			if !seen[v] {
				seen[v], order = true, append(order, v)
			}
			r[v] += share * e.w[i]
			if r[v] > eps && !queued[v] {
				queue, queued[v] = append(queue, v), true
			}
		}
	}
	for _, v := range order {
		residual += r[v]
	}
	return p, residual, pushes
}

// TestPushRing holds pushRing, in WebAssembly the kernel of packed_wasm.s (GOOS=js GOARCH=wasm
// go test runs it there), and pushRingGo to each other and to push (ForwardPush): the same
// estimate, residual, node list and pushes, bit for bit, with a cap on the pushes or none.
func TestPushRing(t *testing.T) {
	e := randomEngine(t, 3000, 8)
	n := e.g.NumSkills()
	for _, tc := range []struct {
		seeds     []int32
		eps       float64
		maxPushes int
	}{{[]int32{0}, PushEpsilon, 1 << 30}, {[]int32{5, 17, 400}, 1e-6, 1 << 30}, {[]int32{1, 2, 3, 4, 5}, PushEpsilon, 40}} {
		var runs [2]struct {
			p, r          []float64
			nodes         []int32
			pushes, nodeN int
		}
		for k, ring := range []func(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int) (int, int){pushRing, pushRingGo} {
			p, r, mark := make([]float64, n), make([]float64, n), make([]uint32, n)
			queue, nodes := make([]int32, 1<<bits.Len(uint(n))), make([]int32, n+1)
			for i, u := range tc.seeds {
				r[u] = 1 / float64(len(tc.seeds))
				queue[i], nodes[i], mark[u] = u, u, 1
			}
			pushes, nn := ring(e.off, e.to, e.w, p, r, queue, nodes, mark, DefaultGamma, tc.eps, 1, len(queue)-1, tc.maxPushes, len(tc.seeds), len(tc.seeds))
			runs[k].p, runs[k].r, runs[k].nodes, runs[k].pushes, runs[k].nodeN = p, r, nodes[:nn], pushes, nn
		}
		if !slices.Equal(runs[0].p, runs[1].p) || !slices.Equal(runs[0].r, runs[1].r) || !slices.Equal(runs[0].nodes, runs[1].nodes) || runs[0].pushes != runs[1].pushes {
			t.Errorf("seeds %v: pushRing and pushRingGo differ: %d and %d pushes, %d and %d nodes", tc.seeds, runs[0].pushes, runs[1].pushes, runs[0].nodeN, runs[1].nodeN)
		}
		if tc.maxPushes < 1<<30 {
			continue
		}
		pi := make([]float64, n)
		for _, u := range tc.seeds {
			pi[u] = 1 / float64(len(tc.seeds))
		}
		p, residual, pushes := e.ForwardPush(pi, DefaultGamma, tc.eps)
		var want float64
		for _, v := range runs[0].nodes {
			want += runs[0].r[v]
		}
		if !slices.Equal(p, runs[0].p) || residual != want || pushes != runs[0].pushes {
			t.Errorf("seeds %v: push gives %d pushes, residual %g; pushRing %d, %g", tc.seeds, pushes, residual, runs[0].pushes, want)
		}
	}
}
