package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/caskg/caskg/graphs"
)

// The query path computes only what the answer needs (the head of the seed fusion, the best
// names, the top of a bounded selection). These tests hold each shortcut to the full
// computation it replaces on a random library, so a shortcut that drops or reorders anything
// fails here before it shows as a changed answer.

var fastWords = strings.Fields("extract table pdf convert image resize audio transcribe chart plot " +
	"csv parse json validate schema upload file download report summary email send calendar " +
	"event search index query database migrate backup restore deploy server log monitor alert")

// randomLibrary builds an engine over n deterministic random skills with identifier-like names,
// descriptions from fastWords, dim-dimensional vectors (0: none) and random edges.
func randomLibrary(tb testing.TB, n, dim int) *Engine {
	tb.Helper()
	return randomLinked(tb, n, dim, 4)
}

// randomLinked is randomLibrary with up to links−1 edges out of each skill.
func randomLinked(tb testing.TB, n, dim, links int) *Engine {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	art := &graphs.Artifact{}
	seps := []string{"-", "_", ".", ""}
	vecs := make([][]float32, n)
	for i := range n {
		var name, desc []string
		for range 1 + rng.IntN(3) {
			name = append(name, fastWords[rng.IntN(len(fastWords))])
		}
		for range 4 + rng.IntN(8) {
			desc = append(desc, fastWords[rng.IntN(len(fastWords))])
		}
		nm := strings.Join(name, seps[rng.IntN(len(seps))]) + fmt.Sprintf("-%d", i)
		art.Skills = append(art.Skills, graphs.Skill{Name: nm, Description: strings.Join(desc, " ")})
		if dim > 0 {
			vecs[i] = make([]float32, dim)
			for j := range vecs[i] {
				if i%50 == 7 {
					break // a skill without a vector now and then
				}
				vecs[i][j] = float32(rng.NormFloat64()) / float32(1+j/8)
			}
		}
		for range rng.IntN(links) {
			if j := rng.IntN(n); j != i {
				art.Edges = append(art.Edges, graphs.Edge{Source: i, Target: j, Weight: 0.05 + 0.9*rng.Float32(),
					Assoc: 0.5, State: graphs.Uncertain, Type: graphs.Relation(rng.IntN(4))})
			}
		}
	}
	slices.SortFunc(art.Edges, func(a, b graphs.Edge) int {
		if a.Source != b.Source {
			return a.Source - b.Source
		}
		return a.Target - b.Target
	})
	art.Edges = slices.CompactFunc(art.Edges, func(a, b graphs.Edge) bool { return a.Source == b.Source && a.Target == b.Target })
	art.Lexicon = lexicon(art.Skills)
	if dim > 0 {
		var err error
		if art.Vectors, err = graphs.NewVectors("test-random", vecs); err != nil {
			tb.Fatal(err)
		}
	}
	return artifactEngine(tb, art)
}

var fastQueries = []string{
	"extract the table from a pdf and plot a chart",
	"convert image, resize it and upload the file",
	"run pdf_extract-3 then csv.parse on the report",
	"send an email summary of the calendar event",
	"transcribe audio then search the index for the query",
	"migrate the database and restore the backup; use deploy-server",
	"validate json schema", "monitr the server log and alrt", "plot",
}

// fullFusion is the seed fusion over every candidate, sorted in full: the reference.
func fullFusion(e *Engine, sc *scratch, query string, qvec []float32, semWeight float64) []candidate {
	seen := map[string]bool{}
	var terms []queryTerm
	for _, t := range Tokenize(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		if idx, ok := e.g.FindTerm(t); ok {
			terms = append(terms, queryTerm{idx, 1, 0})
			continue
		}
		for _, idx := range typoTerms(e.g, &e.terms, t) {
			terms = append(terms, queryTerm{idx, typoWeight, 0})
		}
	}
	scores := make([]float64, e.g.NumSkills())
	bm25(e.g, e.impacts, terms, scores)
	var lex []candidate
	for d, x := range scores {
		if x > 0 {
			lex = append(lex, candidate{d, x})
		}
	}
	sortCandidates(lex)
	var names []candidate
	if ids := identifiers(query); len(ids) > 0 {
		names = bruteNames(e, ids)
	}
	var sem []candidate
	if qvec != nil {
		sem = e.semanticRanking(sc, qvec)
	}
	fused := make([]float64, e.g.NumSkills())
	for _, c := range lex {
		fused[c.id] = c.score / lex[0].score
	}
	for _, c := range names {
		fused[c.id] += nameEvidence(c.score)
	}
	w := semWeight * agreement(lex, sem)
	for _, c := range sem {
		floor := sem[len(sem)-1].score
		if len(lex) > 0 {
			floor = sem[min(len(sem), semanticFloorRank)-1].score
		}
		if top := sem[0].score; top > floor {
			fused[c.id] += w * max(0, c.score-floor) / (top - floor)
		}
	}
	var out []candidate
	for id, x := range fused {
		if x > 0 || scores[id] > 0 {
			out = append(out, candidate{id, x})
		}
	}
	sortCandidates(out)
	return out
}

// bruteNames compares every identifier with every name.
func bruteNames(e *Engine, ids []string) []candidate {
	best := map[int]float64{}
	for _, id := range ids {
		for v, name := range e.names.names {
			n := max(len(id), len(name))
			if n == 0 {
				continue
			}
			if d := len(id) - len(name); float64(max(d, -d)) > (1-nameMatchMin)*float64(n) {
				continue
			}
			s := 1 - float64(editDistanceFull(id, name))/float64(n)
			if s >= nameMatchMin && s > best[v] {
				best[v] = s
			}
		}
	}
	var out []candidate
	for v, s := range best {
		out = append(out, candidate{v, s})
	}
	sortCandidates(out)
	return out
}

func editDistanceFull(a, b string) int { return editDistance(a, b, len(a)+len(b)) }

func TestSeedHeadMatchesFullFusion(t *testing.T) {
	e := randomLibrary(t, 3000, 24)
	for _, q := range fastQueries {
		for _, need := range []int{1, 5, 20, 200} {
			sc := e.getScratch()
			qvec := e.Embed(q) // nil: the library has no encoder
			if qvec == nil {
				qvec = unit32(func() []float64 {
					v := make([]float64, 24)
					for j := range v {
						v[j] = math.Sin(float64(len(q) + j))
					}
					return v
				}())
			}
			got, _ := e.seedRanking(sc, q, e.analyze(sc, q), qvec, 1, false, need, nil)
			got = got[:min(need, len(got))]
			want := fullFusion(e, sc, q, qvec, 1)
			want = want[:min(need, len(want))]
			clear(sc.bm25)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("%q need %d: head differs from the full fusion (-want +got):\n%s", q, need, diff)
			}
			for i, x := range sc.bm25 {
				if x != 0 {
					t.Fatalf("%q: scratch BM25 score of skill %d left at %v", q, i, x)
				}
			}
			e.putScratch(sc)
		}
	}
}

func TestNameMatchMatchesBruteForce(t *testing.T) {
	e := randomLibrary(t, 3000, 0)
	matched := 0
	queries := append(fastQueries, "pdf-extract-1 csv_parse-17 imageResize x.y a-b", strings.Repeat("ab_", 110)+"x")
	for _, i := range []int{5, 77, 1234, 2999} {
		// Names of the library, whole, with a letter dropped, and cut short.
		name := e.g.Name(i)
		queries = append(queries, "use "+name+" now", "then "+name[:len(name)/2]+name[len(name)/2+1:]+"-x",
			name[:len(name)*3/4]+"_z")
	}
	for _, q := range queries {
		ids := identifiers(q)
		sc := e.getScratch()
		got := e.names.match(sc, ids)
		e.putScratch(sc)
		sortCandidates(got)
		want := bruteNames(e, ids)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: name matches differ from comparing every name (-want +got):\n%s", q, diff)
		}
		matched += len(want)
	}
	if matched < 10 {
		t.Errorf("only %d name matches in all: the test library does not exercise matching", matched)
	}
}

// TestHasPosting holds hasPosting to slices.BinarySearch on ascending lists of every length up to
// 40, for every value from below the first posting to above the last.
func TestHasPosting(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := range 41 {
		ps := make([]int32, n)
		next := int32(rng.IntN(3))
		for i := range ps {
			ps[i] = next
			next += 1 + int32(rng.IntN(3))
		}
		for v := int32(-1); v <= next; v++ {
			if _, want := slices.BinarySearch(ps, v); hasPosting(ps, v) != want {
				t.Fatalf("hasPosting(%v, %d) = %v, want %v", ps, v, !want, want)
			}
		}
	}
}

// TestCountShared checks that countShared counts every posting under the current stamp (a count
// of an older stamp starts again from 0) and writes each name once, when its count reaches the
// least of reach: not before, and not again after.
func TestCountShared(t *testing.T) {
	const stamp = 5
	tests := []struct {
		name  string
		lists [][]int32
		least uint32
		want  []int32 // the names written, in order
	}{
		{"one list", [][]int32{{0, 3, 4}}, 1, []int32{0, 3, 4}},
		{"odd and even lengths", [][]int32{{0, 1, 2, 3, 4}, {1, 3}, {0, 3}}, 2, []int32{1, 3, 0}},
		{"three lists", [][]int32{{0, 1, 2, 3, 4}, {1, 3}, {0, 3}, {1, 2, 3, 4}}, 3, []int32{3, 1}},
		{"too few", [][]int32{{0, 1}, {2}}, 2, nil},
		{"an older stamp", [][]int32{{6}, {6, 7}}, 2, []int32{6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			counts := make([]uint32, 8)
			counts[7] = (stamp-1)<<8 | 9 // an earlier identifier's count
			hit := make([]int32, len(counts)+1)
			nh := 0
			want := make([]uint32, len(counts))
			want[7] = counts[7]
			for _, ps := range tc.lists {
				nh = countShared(ps, counts, hit, nh, stamp<<8|tc.least)
				for _, v := range ps {
					want[v] = max(want[v], stamp<<8) + 1
				}
			}
			if diff := cmp.Diff(tc.want, hit[:nh], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("names written (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTopCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, k int }{{0, 3}, {5, 10}, {100, 1}, {1000, 17}, {50, 50}, {10, 0}} {
		var all []candidate
		top := topCandidates{k: tc.k}
		scores := make([]float64, tc.n)
		for i := range tc.n {
			c := candidate{i, float64(1 + rng.IntN(20))} // many ties: the id must break them
			all = append(all, c)
			top.offer(c)
			scores[i] = c.score
		}
		sortCandidates(all)
		want := all[:min(tc.k, len(all))]
		if diff := cmp.Diff(want, top.sorted(), cmp.AllowUnexported(candidate{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("offer: n %d k %d (-want +got):\n%s", tc.n, tc.k, diff)
		}
		// offerPositive reads the score array in order and leaves out zeros: the same top k
		// with a zero between any two skills.
		spread := make([]float64, 2*tc.n+1)
		for i, x := range scores {
			spread[2*i+1] = x
		}
		positive := topCandidates{k: tc.k}
		positive.offerPositive(spread)
		got := positive.sorted()
		for i := range got {
			got[i].id = (got[i].id - 1) / 2
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(candidate{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("offerPositive: n %d k %d (-want +got):\n%s", tc.n, tc.k, diff)
		}
	}
}

// TestSignSketch checks the byte tables against the sum they stand for, and that with a pool as
// large as the library the prefiltered ranking is the exact one.
func TestSignSketch(t *testing.T) {
	for _, dim := range []int{3, 24, 64, 100, 128, 130} { // 65–128: the two-word path
		e := randomLibrary(t, 500, dim)
		e.signs = vectorSigns(e.g)
		q := make([]float64, dim)
		for j := range q {
			q[j] = math.Cos(float64(3*j + 1))
		}
		qv := unit32(q)
		sc := e.getScratch()
		defer e.putScratch(sc)
		top := float64(0)
		for _, x := range qv {
			top = max(top, math.Abs(float64(x)))
		}
		for _, c := range e.signSketch(sc, qv, 500) {
			if e.invNorm[c.id] == 0 {
				t.Fatalf("dim %d: skill %d has no vector but is in the pool", dim, c.id)
			}
			row, _ := e.g.Vector(c.id)
			var want int
			for j, x := range row {
				if (x > 0) == (qv[j] > 0) {
					want += int(math.Abs(float64(qv[j]))/top*sketchLevels + 0.5)
				}
			}
			if want != int(c.score) {
				t.Fatalf("dim %d skill %d: sketch %v, weighted sign agreement %v", dim, c.id, c.score, want)
			}
		}
		exact := func() []candidate {
			s := e.signs
			e.signs = nil
			defer func() { e.signs = s }()
			return e.semanticRanking(sc, qv)
		}()
		if diff := cmp.Diff(exact, e.semanticRankingPool(sc, qv, 500), cmp.AllowUnexported(candidate{})); diff != "" {
			t.Errorf("dim %d: full pool differs from the exact ranking (-want +got):\n%s", dim, diff)
		}
		// A smaller pool is the best of the sketch scores by (score, id), as a heap keeps them.
		all := slices.Clone(e.signSketch(sc, qv, 500)) // the next call reuses its buffer
		for _, pool := range []int{1, 37, 250} {
			top := topCandidates{k: pool}
			for _, c := range all {
				top.offer(c)
			}
			got := e.signSketch(sc, qv, pool)
			sortCandidates(got)
			if diff := cmp.Diff(top.sorted(), got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("dim %d pool %d: histogram selection differs from the heap (-want +got):\n%s", dim, pool, diff)
			}
		}
	}
}

// semanticRankingPool is semanticRanking through the sketch with the given pool.
func (e *Engine) semanticRankingPool(sc *scratch, q []float32, pool int) []candidate {
	var out []candidate
	for _, c := range e.signSketch(sc, q, pool) {
		out = e.offerCosine(out, q, c.id, semanticDepth)
	}
	return out
}

// TestQueryScratchClean runs queries of every kind in a row on a large-library engine and a small
// one: a scratch left dirty by one would change the next answer.
func TestQueryScratchClean(t *testing.T) {
	e := randomLibrary(t, 2000, 16)
	reqs := []Request{{Query: fastQueries[0]}, {Query: fastQueries[2], K: 30, Seeds: 20}, {Query: fastQueries[4], NoGraph: true}}
	first := make([]Response, len(reqs))
	for i, r := range reqs {
		first[i] = query2(t, e, r)
	}
	for range 3 {
		for i, r := range reqs {
			if diff := cmp.Diff(first[i], query2(t, e, r)); diff != "" {
				t.Fatalf("request %d answered differently the second time:\n%s", i, diff)
			}
		}
	}
}

func query2(t *testing.T, e *Engine, r Request) Response {
	t.Helper()
	resp, err := e.Query(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestVerifyMatchesShares holds verify, which natively reads each list not scanned once for all
// the undecided names (marking it when that is cheaper), to shares, which the module asks name
// by name: the same names for every identifier. The second library has thousands of names one
// or two edits apart, so that many names stay undecided and lists get marked.
func TestVerifyMatchesShares(t *testing.T) {
	near := &graphs.Artifact{}
	for i := range 4000 {
		name := fmt.Sprintf("report-table-export-%d", i%97)
		if i >= 97 {
			name += fmt.Sprintf("-%c%d", 'a'+i%26, i)
		}
		near.Skills = append(near.Skills, graphs.Skill{Name: name, Description: "a skill"})
	}
	near.Lexicon = lexicon(near.Skills)
	queries := append(fastQueries, "use report-tabel-export-12 then report_table_exprt-3-b105",
		"reprt-table-export-45-q1000 and report-table-export", "pdf-extract-1 csv_parse-17 imageResize x.y a-b")
	checked, kept := 0, 0
	for _, e := range []*Engine{randomLibrary(t, 3000, 0), artifactEngine(t, near)} {
		n := e.g.NumSkills()
		for _, q := range queries {
			for _, id := range identifiers(q) {
				least, lo, hi := similarLengths(len(id))
				if least <= 0 || len(id) > maxGramName {
					continue
				}
				sc := e.getScratch()
				if len(sc.hit) <= n {
					sc.hit = make([]int32, n+1)
				}
				stamp := sc.nextNameStamp()
				sc.grams = bigrams(id, sc.grams[:0])
				p := e.names.planScan(sc, sc.grams, len(id), lo, min(hi, 255)-lo+1)
				hits := slices.Clone(sc.hit[:p.count(sc.count, sc.hit, stamp)])
				var want []int32
				for _, v := range hits {
					if col := int(e.names.lens[v]) - lo; p.shares(v, col, int(sc.count[v]&0xff), p.scans[col]) {
						want = append(want, v)
					}
				}
				got := slices.Clone(p.verify(sc, hits, e.names.lens))
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%q: verify keeps %v, shares %v", id, got, want)
				}
				checked += len(hits)
				kept += len(want)
				e.putScratch(sc)
			}
		}
	}
	if checked < 1000 || kept < 100 {
		t.Errorf("%d names checked, %d kept: the libraries do not exercise verify", checked, kept)
	}
}
