package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
)

// recallExhaustive is recall as a score over every document computes it: each document's
// impacts summed over every posting of the query's terms, those of short lists first, then the
// long ones (at least an eighth of the documents), each group in the query's order, the depth
// best (score, then id), and their votes.
func recallExhaustive(r *recallIndex, toks []queryToken) ([]vote, float64) {
	scores, hits := make([]float64, len(r.runs)), make([]uint64, len(r.runs))
	type term struct {
		t    int
		long bool
		bit  uint64
	}
	var terms []term
	for qi, tk := range toks {
		t := r.find(tk.text)
		if t < 0 {
			continue
		}
		var bit uint64
		if qi < 64 {
			bit = 1 << qi
		}
		n := int(r.off[t+1] - r.off[t])
		terms = append(terms, term{t, n*longList >= len(r.runs), bit})
	}
	if len(terms) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(terms, func(a, b term) int { return b2i(a.long) - b2i(b.long) })
	for _, q := range terms {
		for i := r.off[q.t]; i < r.off[q.t+1]; i++ {
			scores[r.doc[i]] += r.imp[i]
			hits[r.doc[i]] |= q.bit
		}
	}
	top := topCandidates{k: r.depth}
	top.offerPositive(scores)
	docs := top.sorted()
	if len(docs) == 0 {
		return nil, 0
	}
	byID := map[int]int{}
	var votes []vote
	for _, c := range docs {
		w := c.score / docs[0].score
		if r.failed[c.id] {
			w = -w
		}
		for _, s := range r.skills[r.soff[c.id]:r.soff[c.id+1]] {
			k, ok := byID[int(s)]
			if !ok {
				k = len(votes)
				byID[int(s)] = k
				votes = append(votes, vote{id: int(s)})
			}
			votes[k].score += w
			if !r.failed[c.id] {
				votes[k].runs += int(r.runs[c.id])
				votes[k].terms |= hits[c.id]
			}
		}
	}
	var norm float64
	for _, v := range votes {
		norm = max(norm, math.Abs(v.score))
	}
	return votes, norm
}

// TestRecallExhaustive holds recall, which prunes by the terms' bounds, to the exhaustive score
// over every document, bit for bit: the votes (their order aside) and the norm, on memories of
// 2,000 to 100,000 runs and on their runs' task texts, cut short and with words of other tasks.
func TestRecallExhaustive(t *testing.T) {
	sizes := []int{2000, 20000}
	if !testing.Short() {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e, queries := memoryEngine(t, n, 1000, max(n/10, 50))
			var mixed []string
			for i, q := range queries {
				w := strings.Fields(q)
				// and one word with every filler word, where documents that only the common words
				// reach can outscore those the rare one does
				mixed = append(mixed, q, strings.Join(w[:len(w)/2], " "), q+" "+queries[(i+7)%len(queries)], "the "+q,
					w[0]+" please help file data the report")
			}
			mixed = append(mixed, "please help", "the", "nothing known here")
			sc := e.getScratch()
			defer e.putScratch(sc)
			for _, q := range mixed {
				toks := e.analyze(sc, q)
				want, wantNorm := recallExhaustive(e.mem, toks)
				got, norm := e.mem.recall(sc, toks)
				got = slices.Clone(got)
				byID := func(a, b vote) int { return a.id - b.id }
				slices.SortFunc(got, byID)
				slices.SortFunc(want, byID)
				if !slices.Equal(got, want) || norm != wantNorm {
					t.Fatalf("%q: recall %v (norm %v), exhaustive %v (norm %v)", q, got, norm, want, wantNorm)
				}
				for i, s := range sc.memScore {
					if s != 0 {
						t.Fatalf("%q: document %d's score left at %v", q, i, s)
					}
				}
			}
		})
	}
}

// TestRecallLongListDecides holds recall to the exhaustive score where the short lists fill
// the nearest but a long list's documents outscore them all: 25 documents hold a rare term,
// and 20 others a commoner one (a long list: 50 of the 400 documents) fifty times over.
// Recall must read the long list whole rather than look it up for the rare term's documents.
func TestRecallLongListDecides(t *testing.T) {
	m := &graphs.Memory{K1: 1.2, B: 0.75, AvgDL: 2, Depth: 20, Terms: []string{"common", "rare"},
		Postings: make([][]graphs.Posting, 2), Docs: make([]graphs.MemoryDoc, 400)}
	for d := range m.Docs {
		m.Docs[d] = graphs.MemoryDoc{Len: 2, Runs: 1, Skills: []uint32{uint32(d)}}
	}
	for d := range 25 {
		m.Postings[1] = append(m.Postings[1], graphs.Posting{Doc: uint32(d), TF: 1})
	}
	for d := 100; d < 150; d++ {
		tf := float32(1)
		if d < 120 {
			tf = 50
		}
		m.Postings[0] = append(m.Postings[0], graphs.Posting{Doc: uint32(d), TF: tf})
	}
	r := recallIndexOf(m)
	if r.long[0] < 0 || r.long[1] >= 0 {
		t.Fatalf("long lists %v, want the common term's alone", r.long)
	}
	sc := &scratch{bm25: make([]float64, 400)}
	toks := []queryToken{{text: "rare"}, {text: "common"}}
	want, wantNorm := recallExhaustive(r, toks)
	got, norm := r.recall(sc, toks)
	byID := func(a, b vote) int { return a.id - b.id }
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	if !slices.Equal(got, want) || norm != wantNorm {
		t.Fatalf("recall %v (norm %v), exhaustive %v (norm %v)", got, norm, want, wantNorm)
	}
	if got[0].id != 100 {
		t.Fatalf("nearest %v, want the long list's documents 100 to 119", got)
	}
}

// TestAddPostings holds addPostings and addPostingsTouched, in WebAssembly the kernels of
// packed_wasm.s (GOOS=js GOARCH=wasm go test runs them there), to their Go counterparts: the
// scores, marks and touched list after several lists, repeated documents among them.
func TestAddPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 64, 1000} {
		type state struct {
			scores  []float64
			hits    []uint64
			touched []int32
			nt      int
		}
		newState := func() *state {
			return &state{make([]float64, n+3), make([]uint64, n+3), make([]int32, 4*n), 0}
		}
		dense, denseGo, sparse, sparseGo := newState(), newState(), newState(), newState()
		for list := range 4 {
			var docs []int32
			var imps []float64
			for d := range n {
				if rng.IntN(3) == 0 {
					docs = append(docs, int32(d))
					imps = append(imps, rng.Float64()+0.01)
				}
			}
			bit := uint64(1) << (list * 9)
			addPostings(dense.scores, dense.hits, docs, imps, bit)
			addPostingsGo(denseGo.scores, denseGo.hits, docs, imps, bit)
			sparse.nt = addPostingsTouched(sparse.scores, sparse.hits, docs, imps, sparse.touched, bit, sparse.nt)
			sparseGo.nt = addPostingsTouchedGo(sparseGo.scores, sparseGo.hits, docs, imps, sparseGo.touched, bit, sparseGo.nt)
		}
		for name, got := range map[string]*state{"addPostings": dense, "addPostingsTouched": sparse, "addPostingsTouchedGo": sparseGo} {
			if !slices.Equal(got.scores, denseGo.scores) || !slices.Equal(got.hits, denseGo.hits) {
				t.Errorf("%d documents: %s scores or marks differ from addPostingsGo's", n, name)
			}
		}
		if sparse.nt != sparseGo.nt || !slices.Equal(sparse.touched[:sparse.nt], sparseGo.touched[:sparseGo.nt]) {
			t.Errorf("%d documents: touched %v, want %v", n, sparse.touched[:sparse.nt], sparseGo.touched[:sparseGo.nt])
		}
		listed := 0
		for _, s := range denseGo.scores {
			listed += b2i(s > 0)
		}
		if sparseGo.nt != listed {
			t.Errorf("%d documents: %d touched, %d scored", n, sparseGo.nt, listed)
		}
	}
}

// TestNextAbove holds nextAbove, in WebAssembly the kernel of packed_wasm.s, to nextAboveGo and
// to a scan, from every start, over scores with zeros, equal bits and the largest.
func TestNextAbove(t *testing.T) {
	scores := []float64{0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 1, math.MaxFloat64, 0, 0, 0}
	for _, lo := range []float64{math.SmallestNonzeroFloat64, 0.5, 1, 1.5, 2, math.MaxFloat64} {
		bits := math.Float64bits(lo)
		for d := range len(scores) + 4 {
			want := d
			for ; want+4 <= len(scores); want += 4 {
				if slices.ContainsFunc(scores[want:want+4], func(s float64) bool { return s >= lo }) {
					break
				}
			}
			if got, gotGo := nextAbove(scores, d, bits), nextAboveGo(scores, d, bits); got != want || gotGo != want {
				t.Errorf("lo %v from %d: nextAbove %d, nextAboveGo %d, want %d", lo, d, got, gotGo, want)
			}
		}
	}
}
