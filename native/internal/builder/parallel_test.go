package builder

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
)

// TestParallelSameArtifact checks that the build's parallel stages (candidate induction, the
// substitutes' quarters, the contract prober) give the same bytes on one core as on several.
func TestParallelSameArtifact(t *testing.T) {
	lib, err := ingest.Load("../../../graphs/sample")
	if err != nil {
		t.Fatal(err)
	}
	skills, err := synth.Grow(lib.Skills, 600)
	if err != nil {
		t.Fatal(err)
	}
	build := func(procs int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := Build(context.Background(), Input{Skills: skills})
		if err != nil {
			t.Fatal(err)
		}
		return res.Artifact
	}
	one, four := build(1), build(4)
	if !bytes.Equal(one, four) {
		t.Fatalf("the artifact built on 4 workers (%d bytes) differs from the one built on 1 (%d bytes)", len(four), len(one))
	}
}

// TestParallelEveryItemOnce checks that parallel visits every index exactly once and reports
// progress up to the total.
func TestParallelEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, parallelBlock - 1, parallelBlock, 1000} {
		seen := make([]int32, n)
		last := 0
		parallel(n, func() func(k int) { return func(k int) { seen[k]++ } }, func(done int) { last = done })
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: item %d visited %d times", n, k, c)
			}
		}
		if last != n {
			t.Errorf("n=%d: progress ended at %d", n, last)
		}
	}
}

// TestBest checks the heap selection of nearest against a full sort, ties included.
func TestBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		k := 1 + rng.IntN(n)
		score := make([]float64, n+5)
		ids := make([]int, 0, n)
		for _, j := range rng.Perm(n + 5)[:n] {
			score[j] = float64(rng.IntN(6)) // many ties
			ids = append(ids, j)
		}
		sorted := append([]int(nil), ids...)
		sort.Slice(sorted, func(x, y int) bool {
			if score[sorted[x]] != score[sorted[y]] {
				return score[sorted[x]] > score[sorted[y]]
			}
			return sorted[x] < sorted[y]
		})
		want := sorted[:k]
		got := best(ids, score, k, nil)
		sort.Slice(want, func(x, y int) bool { return want[x] < want[y] })
		sort.Ints(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, k %d): best = %v, want %v", trial, n, k, got, want)
		}
	}
}
