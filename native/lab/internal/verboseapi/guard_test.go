package verboseapi_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/lab/internal/verboseapi"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

// sharedData holds the dev sets (../shared/data beside the repository).
const sharedData = "../../../../../shared/data"

// TestSeedsNotBelowBM25 holds the seeds to a baseline any retriever should meet on the
// verbose-API catalogs `make quality-api` writes: the seeds alone (the default build asked with
// NoGraph at k = 10) complete no fewer tasks than a textbook BM25 over the same text, less
// 0.005. The BM25 is the one of ../shared/tools/score.py (name, title, description and schema
// properties as one field, k1 1.2, b .75, its tokens and stop words), written again here so that
// `make test` checks the bar without Python. The default graph's figure is logged, not judged:
// these catalogs' gold is one tool a need, so no prerequisite the graph adds can count.
func TestSeedsNotBelowBM25(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four catalogs of up to 2,100 tools; skipped with -short")
	}
	if _, err := os.Stat(sharedData); err != nil {
		t.Skipf("%s not found: the dev sets are not beside the repository", sharedData)
	}
	type source struct {
		tools []verboseapi.Tool
		tasks []verboseapi.Task
	}
	read := func(tools, tasks string) source {
		to, ta, err := verboseapi.Read(sharedData+tools, sharedData+tasks)
		if err != nil {
			t.Fatal(err)
		}
		return source{to, ta}
	}
	seal := read("/eval/sealtools/tools.json", "/eval/sealtools/tasks.jsonl")
	tlos := read("/eval/toollinkos/tools.json", "/eval/toollinkos/tasks.jsonl")
	// The catalogs and options of make quality-api.
	for _, c := range []struct {
		name string
		src  source
		opt  verboseapi.Options
	}{
		{"seal-half0", seal, verboseapi.Options{Seed: 1, Tools: 1800, Parts: 2, Part: 0}},
		{"seal-half1", seal, verboseapi.Options{Seed: 1, Tools: 1800, Parts: 2, Part: 1}},
		{"seal-2100", seal, verboseapi.Options{Seed: 1, Tools: 2000, Parts: 1}},
		{"toollinkos", tlos, verboseapi.Options{Seed: 1, Tools: 460, Parts: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := verboseapi.Generate(c.src.tools, c.src.tasks, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "tools.json")
			data, err := json.Marshal(map[string]any{"tools": out.Tools})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			lib, err := ingest.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			eng := engine.New(testlib.Graph(t, builder.Input{Skills: lib.Skills}))
			// BM25 reads the catalog as written, as score.py does (schemas are raw JSON in out).
			var written struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(data, &written); err != nil {
				t.Fatal(err)
			}
			ref := newBM25(written.Tools)
			comp := func(rank func(q string) []string) float64 {
				all := make([]eval.Scores, len(out.Tasks))
				for i, task := range out.Tasks {
					all[i] = eval.Score(rank(task.Query), task.Gold, []int{10})
				}
				return eval.Summarize(all, []int{10}).Complete[10]
			}
			ask := func(noGraph bool) func(string) []string {
				return func(q string) []string {
					resp, err := eng.Query(engine.Request{Query: q, K: 10, NoGraph: noGraph})
					if err != nil {
						t.Fatalf("query %q: %v", q, err)
					}
					names := make([]string, len(resp.Results))
					for i, r := range resp.Results {
						names[i] = r.Name
					}
					return names
				}
			}
			bm25, seeds, graph := comp(ref.top10), comp(ask(true)), comp(ask(false))
			t.Logf("%s: %d tools, %d tasks, COMP@10 BM25 %.3f, seeds %.3f, graph %.3f", c.name, len(out.Tools), len(out.Tasks), bm25, seeds, graph)
			if seeds < bm25-0.005 {
				t.Errorf("%s: the seeds complete %.3f of the tasks, BM25 %.3f; the bar is BM25 − 0.005", c.name, seeds, bm25)
			}
		})
	}
}

// bm25 is score.py's reference: one field per tool, k1 1.2, b .75.
type bm25 struct {
	names []string
	tf    []map[string]float64
	dl    []float64
	avg   float64
	idf   map[string]float64
}

var (
	tokenRE = regexp.MustCompile(`[a-z0-9]+`)
	stop    = map[string]bool{}
)

func init() {
	for _, w := range strings.Fields("a an and are as at be by for from has have i in is it its me my of on or that the this to was we with you your") {
		stop[w] = true
	}
}

func tokens(s string) []string {
	var out []string
	for _, w := range tokenRE.FindAllString(strings.ToLower(s), -1) {
		if !stop[w] {
			out = append(out, w)
		}
	}
	return out
}

func newBM25(tools []map[string]any) *bm25 {
	b := &bm25{idf: map[string]float64{}}
	df := map[string]int{}
	for _, tool := range tools {
		str := func(k string) string { s, _ := tool[k].(string); return s }
		parts := []string{strings.ReplaceAll(str("name"), "_", " "), str("title"), str("description")}
		for _, key := range []string{"inputSchema", "outputSchema"} {
			schema, _ := tool[key].(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			for pn, pv := range props {
				desc := ""
				if m, ok := pv.(map[string]any); ok {
					desc, _ = m["description"].(string)
				}
				parts = append(parts, strings.ReplaceAll(pn, "_", " ")+" "+desc)
			}
		}
		tf := map[string]float64{}
		ts := tokens(strings.Join(parts, " "))
		for _, w := range ts {
			if tf[w] == 0 {
				df[w]++
			}
			tf[w]++
		}
		b.names = append(b.names, str("name"))
		b.tf = append(b.tf, tf)
		b.dl = append(b.dl, float64(len(ts)))
		b.avg += float64(len(ts))
	}
	b.avg /= float64(max(1, len(tools)))
	n := float64(len(tools))
	for w, d := range df {
		b.idf[w] = math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))
	}
	return b
}

func (b *bm25) top10(q string) []string {
	score := map[int]float64{}
	seen := map[string]bool{}
	for _, w := range tokens(q) {
		if seen[w] {
			continue
		}
		seen[w] = true
		idf, ok := b.idf[w]
		if !ok {
			continue
		}
		for i, tf := range b.tf {
			if f := tf[w]; f > 0 {
				score[i] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*b.dl[i]/b.avg))
			}
		}
	}
	ids := make([]int, 0, len(score))
	for i := range score {
		ids = append(ids, i)
	}
	// Ties by catalog order, as Python's stable sort of the insertion-ordered scores.
	sort.SliceStable(ids, func(x, y int) bool {
		if score[ids[x]] != score[ids[y]] {
			return score[ids[x]] > score[ids[y]]
		}
		return ids[x] < ids[y]
	})
	out := make([]string, 0, 10)
	for _, i := range ids[:min(10, len(ids))] {
		out = append(out, b.names[i])
	}
	return out
}
