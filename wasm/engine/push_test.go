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
	"github.com/google/go-cmp/cmp"
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

// TestPushStopsAtTheAnswer holds a query's Via, for which push stops once it has reached every
// result linked to another result, to the Via of the whole run from the same seeds, on a sparse
// library and on a dense one, where the whole run is many times longer.
func TestPushStopsAtTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		e     *Engine
		fewer bool // some query must stop before the whole run
	}{
		{"sparse", randomLibrary(t, 2000, 16), false},
		{"dense", randomLinked(t, 600, 16, 24), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stopped, links := false, 0
			for _, q := range fastQueries {
				for _, k := range []int{3, 10, 40} {
					req := Request{Query: q, K: k}
					got := query2(t, tt.e, req)
					whole := wholeRunVia(t, tt.e, req, got)
					for i, r := range got.Results {
						links += len(r.Via)
						if diff := cmp.Diff(whole[i], r.Via); diff != "" {
							t.Errorf("%q k=%d: %s's Via (-whole run +stopped):\n%s", q, k, r.Name, diff)
						}
					}
					stopped = stopped || got.Pushes < wholePushes(t, tt.e, req)
				}
			}
			if tt.fewer && !stopped {
				t.Error("push never stopped before the whole run")
			}
			if links == 0 {
				t.Error("no answer listed a Via: the comparison held nothing")
			}
		})
	}
}

// wholePushes is the number of pushes of the whole run from req's seeds.
func wholePushes(t *testing.T, e *Engine, req Request) int {
	pi, err := e.Personalization(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _, pushes := e.ForwardPush(pi, DefaultGamma, PushEpsilon)
	return pushes
}

// wholeRunVia is the Via of each of resp's results when push runs to the end from req's seeds.
func wholeRunVia(t *testing.T, e *Engine, req Request, resp Response) [][]Via {
	pi, err := e.Personalization(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := e.getScratch()
	defer e.putScratch(sc)
	var seeds []int32
	for u, x := range pi {
		if x > 0 {
			seeds = append(seeds, int32(u))
		}
	}
	copy(sc.pi, pi)
	e.push(sc, seeds, nil, DefaultGamma, PushEpsilon)
	stamp := sc.stamp
	reached := slices.Clone(sc.mark)
	clear(sc.pi)
	for _, v := range sc.nodes {
		sc.p[v], sc.q[v] = 0, 0
	}
	ranked := make([]candidate, len(resp.Results))
	var place slots
	place.reset(e.g.NumSkills())
	for i, r := range resp.Results {
		ranked[i] = candidate{r.ID, r.Score}
		place.set(r.ID, i)
	}
	out := make([][]Via, len(ranked))
	for i, c := range ranked {
		out[i] = e.via(sc, c.id, ranked, &place, func(u int) bool { return reached[u] == stamp })
	}
	return out
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
		want      []int32 // nil: to the end
	}{
		{[]int32{0}, PushEpsilon, 1 << 30, nil}, {[]int32{5, 17, 400}, 1e-6, 1 << 30, nil},
		{[]int32{1, 2, 3, 4, 5}, PushEpsilon, 40, nil},
		{[]int32{5, 17, 400}, 1e-6, 1 << 30, []int32{}},               // asked of none: no push
		{[]int32{5, 17, 400}, 1e-6, 1 << 30, []int32{17, 2999, 1500}}, // stops once the three are reached
	} {
		var runs [2]struct {
			p, r          []float64
			nodes         []int32
			pushes, nodeN int
		}
		for k, ring := range []func(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int, want []int32, wantOn int) (int, int){pushRing, pushRingGo} {
			p, r, mark := make([]float64, n), make([]float64, n), make([]uint32, n)
			queue, nodes := make([]int32, 1<<bits.Len(uint(n))), make([]int32, n+1)
			for i, u := range tc.seeds {
				r[u] = 1 / float64(len(tc.seeds))
				queue[i], nodes[i], mark[u] = u, u, 1
			}
			pushes, nn := ring(e.off, e.to, e.w, p, r, queue, nodes, mark, DefaultGamma, tc.eps, 1, len(queue)-1, tc.maxPushes, len(tc.seeds), len(tc.seeds), slices.Clone(tc.want), b2i(tc.want != nil))
			runs[k].p, runs[k].r, runs[k].nodes, runs[k].pushes, runs[k].nodeN = p, r, nodes[:nn], pushes, nn
		}
		if !slices.Equal(runs[0].p, runs[1].p) || !slices.Equal(runs[0].r, runs[1].r) || !slices.Equal(runs[0].nodes, runs[1].nodes) || runs[0].pushes != runs[1].pushes {
			t.Errorf("seeds %v: pushRing and pushRingGo differ: %d and %d pushes, %d and %d nodes", tc.seeds, runs[0].pushes, runs[1].pushes, runs[0].nodeN, runs[1].nodeN)
		}
		if tc.want != nil {
			full := wholeRingPushes(e, tc.seeds, tc.eps)
			if len(tc.want) == 0 && runs[0].pushes != 0 || len(tc.want) > 0 && (runs[0].pushes == 0 || runs[0].pushes >= full) {
				t.Errorf("seeds %v want %v: %d pushes; the whole run %d", tc.seeds, tc.want, runs[0].pushes, full)
			}
		}
		if tc.maxPushes < 1<<30 || tc.want != nil {
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

// wholeRingPushes is the pushes of the whole run of pushRingGo from seeds.
func wholeRingPushes(e *Engine, seeds []int32, eps float64) int {
	n := e.g.NumSkills()
	p, r, mark := make([]float64, n), make([]float64, n), make([]uint32, n)
	queue, nodes := make([]int32, 1<<bits.Len(uint(n))), make([]int32, n+1)
	for i, u := range seeds {
		r[u] = 1 / float64(len(seeds))
		queue[i], nodes[i], mark[u] = u, u, 1
	}
	pushes, _ := pushRingGo(e.off, e.to, e.w, p, r, queue, nodes, mark, DefaultGamma, eps, 1, len(queue)-1, 1<<30, len(seeds), len(seeds), nil, 0)
	return pushes
}
