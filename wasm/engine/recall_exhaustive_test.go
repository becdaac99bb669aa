package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// recallExhaustive is recall as a score over every document computes it: each document's
// impacts summed in the query's order, the depth best (score, then id), and their votes.
func recallExhaustive(r *recallIndex, toks []queryToken) ([]vote, float64) {
	scores, hits := make([]float64, len(r.runs)), make([]uint64, len(r.runs))
	any := false
	for qi, tk := range toks {
		t := r.find(tk.text)
		if t < 0 {
			continue
		}
		any = true
		var bit uint64
		if qi < 64 {
			bit = 1 << qi
		}
		for i := r.off[t]; i < r.off[t+1]; i++ {
			scores[r.doc[i]] += r.imp[i]
			hits[r.doc[i]] |= bit
		}
	}
	if !any {
		return nil, 0
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
				mixed = append(mixed, q, strings.Join(w[:len(w)/2], " "), q+" "+queries[(i+7)%len(queries)], "the "+q)
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
