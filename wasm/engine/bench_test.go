package engine_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// The shared data sits beside the project; it is read in place, never copied.
const (
	realSkills = "../../../shared/data/skills"
	realTasks  = "../../../shared/data/eval/skillsbench/tasks.jsonl"
)

// shortWords is how many words of a task text make an agent's short query, as in make bench.
const shortWords = 12

type realData struct {
	graph   *graphs.Graph
	queries []string
	err     error
}

// library returns the artifact of the real 859-skill library (n = 0) or of the library
// native/internal/lab/synth grows from it to n skills, built as `caskg build` builds by default (builtin
// model's vectors), once per test binary; or, for n = 0, the artifact CASKG_BENCH_ARTIFACT names
// (make bench-wasm passes the one `caskg build` made; caskg-bench passes its synthesized
// libraries). CASKG_BENCH_DIR names a directory to read real.skg and synth-N.skg from when it
// holds them (caskg-bench leaves its libraries in bin/bench). The queries are the SkillsBench
// task texts.
func library(n int) realData {
	libOnce.Lock()
	once, ok := libs[n]
	if !ok {
		once = sync.OnceValue(func() realData { return buildLibrary(n) })
		libs[n] = once
	}
	libOnce.Unlock()
	return once()
}

var (
	libOnce sync.Mutex
	libs    = map[int]func() realData{}
)

func buildLibrary(n int) realData {
	var data []byte
	path := os.Getenv("CASKG_BENCH_ARTIFACT")
	if n > 0 {
		path = ""
	}
	if dir := os.Getenv("CASKG_BENCH_DIR"); path == "" && dir != "" {
		name := "real.skg"
		if n > 0 {
			name = fmt.Sprintf("synth-%d.skg", n)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			path = filepath.Join(dir, name)
		}
	}
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return realData{err: err}
		}
	} else {
		var err error
		if data, err = testlib.BuildGrown(realSkills, n); err != nil {
			return realData{err: err}
		}
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return realData{err: err}
	}
	queries, err := readQueries(realTasks)
	if err != nil {
		return realData{err: err}
	}
	return realData{graph: g, queries: queries}
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var queries []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var task struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(sc.Bytes(), &task); err != nil {
			return nil, err
		}
		queries = append(queries, task.Query)
	}
	return queries, sc.Err()
}

// shortQueries cuts every query to its first shortWords words: an agent's short query.
func shortQueries(qs []string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		w := strings.Fields(q)
		out[i] = strings.Join(w[:min(len(w), shortWords)], " ")
	}
	return out
}

func realLibrary(tb testing.TB, n int) realData {
	tb.Helper()
	for _, p := range []string{realSkills, realTasks} {
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("real data not available: %v", err)
		}
	}
	d := library(n)
	if d.err != nil {
		tb.Fatal(d.err)
	}
	if len(d.queries) == 0 {
		tb.Fatal("no queries in " + realTasks)
	}
	return d
}

// BenchmarkQuery runs the SkillsBench task texts, in turn, against the 859-skill artifact and the
// synthesized 1,000- and 10,000-skill ones (k = 10, as make bench asks), and the 100,000-skill
// one when CASKG_BENCH_DIR holds it (make bench leaves it in bin/bench; building it here would
// take minutes): the full texts and the same texts cut to their first 12 words. ns/op is the
// mean, median-ns/query the median.
func BenchmarkQuery(b *testing.B) {
	sizes := []int{0, 1000, 10000}
	if _, err := os.Stat(filepath.Join(os.Getenv("CASKG_BENCH_DIR"), "synth-100000.skg")); err == nil && os.Getenv("CASKG_BENCH_DIR") != "" {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		name := "real"
		if n > 0 {
			name = fmt.Sprintf("synth-%d", n)
		}
		b.Run(name, func(b *testing.B) {
			d := realLibrary(b, n)
			e := engine.New(d.graph)
			for _, kind := range []struct {
				name    string
				queries []string
			}{{"full", d.queries}, {"12words", shortQueries(d.queries)}} {
				for _, graph := range []bool{true, false} {
					sub := kind.name
					if !graph {
						sub += "-nograph"
					}
					b.Run(sub, func(b *testing.B) { timeQueries(b, e, kind.queries, !graph) })
				}
			}
		})
	}
}

// BenchmarkQueryFilter runs the SkillsBench task texts against the synthesized 10,000-skill
// artifact with a filter that denies a tenth of the skills by a glob: what compiling the filter
// and dropping the skills it leaves out add to BenchmarkQuery's synth-10000/full.
func BenchmarkQueryFilter(b *testing.B) {
	d := realLibrary(b, 10000)
	e := engine.New(d.graph)
	f := engine.Filter{Deny: []string{"*1", "*-csv-*"}}
	for _, q := range d.queries {
		if _, err := e.Query(engine.Request{Query: q, K: 10, Filter: f}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Query(engine.Request{Query: d.queries[i%len(d.queries)], K: 10, Filter: f}); err != nil {
			b.Fatal(err)
		}
	}
}

// timeQueries runs the queries in turn for the b.N iterations after one warm-up pass, and
// reports the median and the PPR work per query.
func timeQueries(b *testing.B, e *engine.Engine, queries []string, noGraph bool) {
	for _, q := range queries {
		if _, err := e.Query(engine.Request{Query: q, K: 10, NoGraph: noGraph}); err != nil {
			b.Fatal(err)
		}
	}
	ds := make([]time.Duration, 0, 1024)
	var iters, pushes int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		resp, err := e.Query(engine.Request{Query: queries[i%len(queries)], K: 10, NoGraph: noGraph})
		ds = append(ds, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Results) == 0 {
			b.Fatalf("no results for task %d", i%len(queries))
		}
		iters += resp.Iterations
		pushes += resp.Pushes
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "median-ns/query")
	if !noGraph {
		b.ReportMetric(float64(iters)/float64(len(ds)), "ppr-iters/op")
		b.ReportMetric(float64(pushes)/float64(len(ds)), "pushes/op")
	}
}

// BenchmarkNew measures preparing an engine over the decoded 859-skill artifact.
func BenchmarkNew(b *testing.B) {
	d := realLibrary(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		engine.New(d.graph)
	}
}

// TestRealQueryMatchesExactPPR holds the engine's answers on the real 859-skill library, for the
// SkillsBench task texts and their 12-word cuts, to those of power iteration run to
// convergence (engine.CheckExactPPR).
func TestRealQueryMatchesExactPPR(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 859-skill library")
	}
	d := realLibrary(t, 0)
	e := engine.New(d.graph)
	for _, qs := range [][]string{d.queries, shortQueries(d.queries)} {
		for _, q := range qs {
			engine.CheckExactPPR(t, e, engine.Request{Query: q, K: 10, Render: true})
		}
	}
}
