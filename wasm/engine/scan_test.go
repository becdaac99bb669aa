package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/google/go-cmp/cmp"
)

// A scan is one of the bounded scans that compute the exact semantic list without every cosine.
type scan struct {
	name string
	// dots and approx are what simdDots and simdApprox are while the scan's engines are made
	// and queried.
	dots   func(rows []int8, dim int, q []int16, out []int32)
	approx func(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32)
	// nearest is the scan's list of the k best for the unit query q.
	nearest func(e *Engine, sc *scratch, q []float32, k int) []candidate
	// rounding returns the rounding error q − s·q̃ of the scan's integer query, and its norm.
	rounding func(q []float32) (err []float64, dev float64)
}

// forEachScan runs f as a subtest for each scan, with simdDots and simdApprox set as the scan
// needs: the packed words (nearest, what WebAssembly runs), nearest16 with dotsGo and approxGo
// (on every platform), and nearest16 with the platform's kernels where it has them. Engines must
// be made inside f.
func forEachScan(t *testing.T, f func(t *testing.T, s scan)) {
	kernel, approx := simdDots, simdApprox
	defer func() { simdDots, simdApprox = kernel, approx }()
	packed := scan{"packed", nil, nil,
		func(e *Engine, sc *scratch, q []float32, k int) []candidate { return e.nearest(sc, nil, q, k) },
		func(q []float32) ([]float64, float64) {
			qi, s, dev := roundQuery(q)
			return roundingError(q, qi, s), dev
		}}
	lanes16 := func(q []float32) ([]float64, float64) {
		qi, s, dev := roundQuery16(nil, q)
		return roundingError(q, qi, s), dev
	}
	near16 := func(e *Engine, sc *scratch, q []float32, k int) []candidate { return nearest16(e, sc, nil, q, k) }
	scans := []scan{packed, {"int16-go", dotsGo, nil, near16, lanes16}}
	if kernel != nil {
		scans = append(scans, scan{"int16-kernel", kernel, approx, near16, lanes16})
	}
	for _, s := range scans {
		simdDots, simdApprox = s.dots, s.approx
		t.Run(s.name, func(t *testing.T) { f(t, s) })
	}
}

// roundingError returns q − s·q̃ for the integer query qi at scale s.
func roundingError[T int16 | int64](q []float32, qi []T, s float64) []float64 {
	err := make([]float64, len(q))
	for j, x := range q {
		err[j] = float64(x) - s*float64(qi[j])
	}
	return err
}

// TestNearestExact holds the bounded scans (nearest, nearest16) to offerCosine on every skill:
// the same list, the same cosines bit for bit, for every k; and semanticRanking to the scan it
// should take. Queries range from the encoder's to vectors aimed at one skill and random ones;
// dimensions leave remainders after the passes of eight and of sixteen, libraries leave one or
// two skills in the last packed word and one to three after the kernel's passes of four, and
// 1,000 dimensions round q more coarsely.
func TestNearestExact(t *testing.T) {
	forEachScan(t, testNearestExact)
}

func testNearestExact(t *testing.T, s scan) {
	tests := []struct {
		name   string
		n, dim int
	}{
		{"builtin model", 3001, 128},
		{"remainders", 1000, 98},
		{"short", 602, 24},
		{"three", 400, 3},
		{"long", 300, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := randomLibrary(t, tc.n, tc.dim)
			// The packed words are made unless nearest16 scans instead (amd64 with a kernel).
			simd := runtime.GOARCH == "amd64" && scans16(tc.n, tc.dim)
			if e.packed == nil != simd {
				t.Fatalf("packed words %v, nearest16 scans %v", e.packed != nil, simd)
			}
			sc := e.getScratch()
			var queries [][]float32
			for _, q := range fastQueries {
				if v := e.Embed(q); v != nil {
					queries = append(queries, v)
				}
			}
			rng := rand.New(rand.NewPCG(3, uint64(tc.dim)))
			for _, i := range []int{0, 5, tc.n / 2, tc.n - 1} {
				row, _ := e.g.Vector(i)
				v := make([]float64, tc.dim)
				for j, x := range row {
					v[j] = float64(x) + math.Sin(float64(i+j))
				}
				queries = append(queries, unit32(v))
			}
			for range 20 {
				v := make([]float64, tc.dim)
				for j := range v {
					v[j] = rng.NormFloat64() / float64(1+j/8)
				}
				queries = append(queries, unit32(v))
			}
			for qi, q := range queries {
				for _, k := range []int{1, 2, 7, semanticDepth, 200, tc.n + 1} {
					var want []candidate
					for i := range tc.n {
						want = e.offerCosine(want, q, i, k)
					}
					got := s.nearest(e, sc, q, k)
					if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
						t.Fatalf("query %d k %d (-offerCosine +%s):\n%s", qi, k, s.name, diff)
					}
					if k != semanticDepth {
						continue
					}
					if diff := cmp.Diff(want, e.semanticRanking(sc, q), cmp.AllowUnexported(candidate{})); diff != "" {
						t.Fatalf("query %d (-offerCosine +semanticRanking):\n%s", qi, diff)
					}
				}
			}
		})
	}
}

// vectorEngine is an engine over one skill per vector, named s0, s1, ….
func vectorEngine(t *testing.T, vecs [][]float32) *Engine {
	t.Helper()
	return artifactEngine(t, vectorArtifact(t, vecs))
}

// vectorArtifact is vectorEngine's artifact.
func vectorArtifact(t *testing.T, vecs [][]float32) *graphs.Artifact {
	t.Helper()
	art := &graphs.Artifact{}
	for i := range vecs {
		art.Skills = append(art.Skills, graphs.Skill{Name: fmt.Sprintf("s%d", i), Description: "a skill"})
	}
	art.Lexicon = lexicon(art.Skills)
	var err error
	if art.Vectors, err = graphs.NewVectors("test", vecs); err != nil {
		t.Fatal(err)
	}
	return art
}

// TestNearestTightBound holds the bounded scans to offerCosine where the bound is tight: a skill
// whose vector points along q's rounding error e (so q̃ misjudges it by all of ‖e‖) comes after
// many skills whose cosines lie closely around its own, and for some k the k-th best of those
// lies within a tenth of ‖e‖ below it. For the packed words a bound short of ‖e‖ by a tenth would
// leave it out; nearest16's ‖e‖ (about 3.5e-5) is below the float32 allowance of 1e-4, which no
// construction here can use up, so for it this is one more exactness test.
func TestNearestTightBound(t *testing.T) {
	forEachScan(t, testNearestTightBound)
}

func testNearestTightBound(t *testing.T, s scan) {
	for _, dim := range []int{128, 24} {
		rng := rand.New(rand.NewPCG(11, uint64(dim)))
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		q = unit32(f64s(q))
		err, dev := s.rounding(q)
		// The skill: e/‖e‖ plus β times q's part across e (unit length), β enough for a cosine
		// of about 0.05: a bound short of ‖e‖ by a tenth misses it by more than 1e-4.
		var qe float64
		for j := range q {
			qe += float64(q[j]) * err[j] / dev
		}
		along := make([]float64, dim)
		var across float64
		for j := range q {
			across += (float64(q[j]) - qe*err[j]/dev) * float64(q[j])
		}
		beta := max(0.05, 0.05-qe)
		for j := range q {
			ej := err[j] / dev
			along[j] = ej + beta*(float64(q[j])-qe*ej)/math.Sqrt(across)
		}
		errDir := unit32(along)
		var cos float64
		for j := range q {
			cos += float64(q[j]) * float64(errDir[j])
		}
		if cos <= 0 {
			t.Fatalf("dim %d: the skill along the rounding error has cosine %v", dim, cos)
		}
		var vecs [][]float32
		for m := range 300 {
			a := cos * (0.9 + 0.2*float64(m)/300)
			u := make([]float64, dim)
			var uq float64
			for j := range u {
				u[j] = rng.NormFloat64()
				uq += u[j] * float64(q[j])
			}
			for j := range u {
				u[j] -= uq * float64(q[j])
			}
			u32 := unit32(u)
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(a)*q[j] + float32(math.Sqrt(1-a*a))*u32[j]
			}
			vecs = append(vecs, v)
		}
		e := vectorEngine(t, append(vecs, errDir))
		last := len(vecs)
		sc := e.getScratch()
		entered := false
		for k := 1; k <= last+1; k++ {
			var want []candidate
			for i := range last + 1 {
				want = e.offerCosine(want, q, i, k)
			}
			got := s.nearest(e, sc, q, k)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Fatalf("dim %d k %d (-offerCosine +%s):\n%s", dim, k, s.name, diff)
			}
			entered = entered || slices.ContainsFunc(want, func(c candidate) bool { return c.id == last })
		}
		if !entered {
			t.Fatalf("dim %d: the skill along the rounding error entered no list", dim)
		}
	}
}

// TestNearestLanes holds the bounded scans to offerCosine when their sums reach their limit:
// skills at ±127 in every component, in mixed sign patterns within a packed word and within the
// kernel's passes of four, against a constant query, for the builtin dimension, a long one and the
// longest an artifact holds. In the packed words q̃_j is 64, 8 and 1, and a sum reaches 1,040,384,
// 1,016,000 and 1,040,384 of laneMax's 1,048,575; in nearest16's 16-bit lanes q̃_j is 32,766,
// 16,777 and 2,047, and a sum reaches 532,644,096, 2,130,679,000 and 2,129,666,048 of int32's
// 2,147,483,647.
func TestNearestLanes(t *testing.T) {
	forEachScan(t, testNearestLanes)
}

func testNearestLanes(t *testing.T, s scan) {
	for _, dim := range []int{128, 1000, 8192} {
		var vecs [][]float32
		for _, sign := range []float32{1, 1, 1, -1, -1, -1, 1, -1, 1, -1, 1} {
			v := make([]float32, dim)
			for j := range v {
				v[j] = sign
			}
			vecs = append(vecs, v)
		}
		e := vectorEngine(t, vecs)
		if e.packed == nil && s.dots == nil {
			t.Fatalf("dim %d: not packed", dim)
		}
		for _, sign := range []float32{1, -1} {
			q := make([]float32, dim)
			for j := range q {
				q[j] = sign / float32(math.Sqrt(float64(dim)))
			}
			var want []candidate
			for i := range vecs {
				want = e.offerCosine(want, q, i, len(vecs))
			}
			if len(want) == 0 {
				t.Fatalf("dim %d: no skill with a positive cosine", dim)
			}
			if diff := cmp.Diff(want, s.nearest(e, e.getScratch(), q, len(vecs)), cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("dim %d sign %v (-offerCosine +%s):\n%s", dim, sign, s.name, diff)
			}
		}
	}
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestDotsPacked holds dotsPacked, in WebAssembly the kernel of packed_wasm.s (GOOS=js
// GOARCH=wasm go test runs it there), to dotsPackedGo on words that wrap: blocks of every lane
// and strides from the shortest on.
func TestDotsPacked(t *testing.T) {
	for _, tc := range []struct{ blocks, stride int }{{1, 2}, {3, 2}, {2, 8}, {5, 128}, {7, 130}} {
		x := uint64(tc.blocks*1000 + tc.stride)
		next := func() int64 { x = x*6364136223846793005 + 1442695040888963407; return int64(x) }
		w, q := make([]int64, tc.blocks*packBlock*tc.stride), make([]int64, tc.stride)
		for i := range w {
			w[i] = next()
		}
		for i := range q {
			q[i] = next() >> 40
		}
		got, want := make([]int64, tc.blocks*packBlock), make([]int64, tc.blocks*packBlock)
		dotsPacked(w, q, got)
		dotsPackedGo(w, q, want)
		if !slices.Equal(got, want) {
			t.Errorf("%d blocks, stride %d: dotsPacked %v, dotsPackedGo %v", tc.blocks, tc.stride, got, want)
		}
	}
}

// TestDotCosine holds dotCosine, in WebAssembly the kernel of packed_wasm.s (GOOS=js
// GOARCH=wasm go test runs it there), to offerCosine's sums bit for bit, on rows of every length
// around the passes of four and sixteen.
func TestDotCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3, 4, 5, 15, 16, 17, 21, 128, 130} {
		row, q := make([]int8, n), make([]float32, n+3)
		for i := range row {
			row[i] = int8(rng.IntN(256) - 128)
		}
		for i := range q {
			q[i] = rng.Float32()*2 - 1
		}
		var d [4]float32
		for j := range n &^ 3 {
			d[j%4] += q[j] * float32(row[j])
		}
		for j := n &^ 3; j < n; j++ {
			d[0] += q[j] * float32(row[j])
		}
		want := (d[0] + d[1]) + (d[2] + d[3])
		if got := dotCosine(row, q); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("%d dimensions: dotCosine %v, want %v", n, got, want)
		}
	}
}

// TestInsertCandidates holds insertCandidates, in WebAssembly the kernel of packed_wasm.s
// (GOOS=js GOARCH=wasm go test runs it there), and insertCandidatesGo to the heap sort's order on
// lists up to past insertMax, with many equal scores.
func TestInsertCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 3, 17, 64, insertMax, insertMax + 5} {
		cs := make([]candidate, n)
		for i, id := range rng.Perm(n) {
			cs[i] = candidate{id, float64(rng.IntN(8)) / 4}
		}
		want := slices.Clone(cs)
		for i := len(want)/2 - 1; i >= 0; i-- { // the heap sort of sortCandidates
			siftCandidates(want, i, len(want))
		}
		for end := len(want) - 1; end > 0; end-- {
			want[0], want[end] = want[end], want[0]
			siftCandidates(want, 0, end)
		}
		for name, sort := range map[string]func([]candidate){"insertCandidates": insertCandidates, "insertCandidatesGo": insertCandidatesGo} {
			got := slices.Clone(cs)
			sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s of %d candidates: %v, want %v", name, n, got, want)
			}
		}
	}
}
