package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
)

// recallExhaustive is recall as a score over every document computes it: each document's
// impacts summed over every posting of the query's terms, those of short lists first, then the
// long ones (at least an eighth of the documents), each by its largest impact (highest first,
// then in the query's order), the depth best (score, then id), and their votes.
func recallExhaustive(r *recallIndex, toks []queryToken) ([]vote, float64) {
	scores, hits := make([]float64, len(r.runs)), make([]uint64, len(r.runs))
	type term struct {
		t     int
		long  bool
		bit   uint64
		bound float64
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
		bound := 0.0
		for i := r.off[t]; i < r.off[t+1]; i++ {
			bound = max(bound, r.imp[i])
		}
		n := int(r.off[t+1] - r.off[t])
		terms = append(terms, term{t, n*8 >= len(r.runs), bit, bound})
	}
	if len(terms) == 0 {
		return nil, 0
	}
	slices.SortStableFunc(terms, func(a, b term) int {
		switch {
		case a.long != b.long:
			if b.long {
				return -1
			}
			return 1
		case a.bound > b.bound:
			return -1
		case a.bound < b.bound:
			return 1
		}
		return 0
	})
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
