package engine_test

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// The shared data sits beside the project; it is read in place, never copied.
const (
	realSkills = "../../../shared/data/skills"
	realTasks  = "../../../shared/data/eval/skillsbench/tasks.jsonl"
)

type realData struct {
	graph   *graphs.Graph
	queries []string
	err     error
}

// loadReal builds the artifact of the real 859-skill library once per test binary, or reads the
// artifact CASKG_BENCH_ARTIFACT names (make bench-wasm passes the one `caskg build` made, with
// the builtin model's vectors; caskg-bench passes its synthesized libraries).
var loadReal = sync.OnceValue(func() realData {
	var data []byte
	if path := os.Getenv("CASKG_BENCH_ARTIFACT"); path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return realData{err: err}
		}
	} else {
		lib, err := ingest.Load(realSkills)
		if err != nil {
			return realData{err: err}
		}
		if data, _, err = builder.Build(lib.Skills, builder.DefaultOptions()); err != nil {
			return realData{err: err}
		}
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return realData{err: err}
	}
	f, err := os.Open(realTasks)
	if err != nil {
		return realData{err: err}
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
			return realData{err: err}
		}
		queries = append(queries, task.Query)
	}
	if err := sc.Err(); err != nil {
		return realData{err: err}
	}
	return realData{graph: g, queries: queries}
})

func realGraph(b *testing.B) realData {
	b.Helper()
	for _, p := range []string{realSkills, realTasks} {
		if _, err := os.Stat(p); err != nil {
			b.Skipf("real data not available: %v", err)
		}
	}
	d := loadReal()
	if d.err != nil {
		b.Fatal(d.err)
	}
	if len(d.queries) == 0 {
		b.Fatal("no queries in " + realTasks)
	}
	return d
}

// BenchmarkQuery runs the SkillsBench task texts, in turn, against the 859-skill artifact.
func BenchmarkQuery(b *testing.B) {
	d := realGraph(b)
	e := engine.New(d.graph)
	for _, bm := range []struct {
		name    string
		noGraph bool
	}{{"graph", false}, {"nograph", true}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			i, iters := 0, 0
			for b.Loop() {
				resp, err := e.Query(engine.Request{Query: d.queries[i%len(d.queries)], NoGraph: bm.noGraph})
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Results) == 0 {
					b.Fatalf("no results for task %d", i%len(d.queries))
				}
				iters += resp.Iterations
				i++
			}
			if !bm.noGraph {
				b.ReportMetric(float64(iters)/float64(i), "ppr-iters/op")
			}
		})
	}
}

// BenchmarkNew measures preparing an engine over the decoded 859-skill artifact.
func BenchmarkNew(b *testing.B) {
	d := realGraph(b)
	b.ReportAllocs()
	for b.Loop() {
		engine.New(d.graph)
	}
}
