package builder

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

// withSemantic builds the artifact for skills and attaches the vectors and query encoder that
// embedSkills makes with emb (what Build does when it is given an embedder).
func withSemantic(t testing.TB, skills []ingest.Skill, emb func([]ingest.Skill) embed.Embedder) *graphs.Graph {
	t.Helper()
	data, _, err := buildOf(context.Background(), skills, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := fixture.Decode(t, data)
	sorted := append([]ingest.Skill(nil), skills...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	for i, s := range sorted {
		if g.Name(i) != s.Name {
			t.Fatalf("skill %d is %q in the artifact, %q sorted", i, g.Name(i), s.Name)
		}
	}
	art, err := g.Artifact()
	if err != nil {
		t.Fatal(err)
	}
	if art.Vectors, art.Encoder, err = embedSkills(context.Background(), emb(sorted), sorted); err != nil {
		t.Fatal(err)
	}
	data, err = graphs.Encode(art)
	if err != nil {
		t.Fatal(err)
	}
	return fixture.Decode(t, data)
}

func builtinFor(t testing.TB, opt embed.BuiltinOptions) func([]ingest.Skill) embed.Embedder {
	return func(skills []ingest.Skill) embed.Embedder {
		texts := make([]string, len(skills))
		for i, s := range skills {
			texts[i] = skillText(s)
		}
		m, err := embed.NewBuiltin(texts, opt)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// taskSet is a library and a task file over it.
type taskSet struct{ name, lib, tasks string }

// semanticSets are the task sets the semantic model is measured on.
var semanticSets = []taskSet{
	{"sample", sampleLib, sampleTasks},
	{"skillsbench", filepath.Join(sharedData, "skills"), filepath.Join(sharedData, "eval", "skillsbench", "tasks.jsonl")},
}

// load reads the set's library and tasks; the test is skipped when the library is not present.
func (set taskSet) load(t testing.TB) ([]ingest.Skill, []eval.Task) {
	t.Helper()
	if _, err := os.Stat(set.lib); err != nil {
		t.Skip("data not present:", err)
	}
	tasks, err := eval.ReadTasks(set.tasks, true)
	if err != nil {
		t.Fatal(err)
	}
	return loadLib(t, set.lib), tasks
}

// TestSemanticBar holds the builtin model to its bar: semantic + lexical seeds beat
// lexical seeds alone on R@10 (no-graph mode) for the sample tasks and for SkillsBench. It also
// holds docs/calibration.md's table of them (the semantic- figures); -update rewrites it.
func TestSemanticBar(t *testing.T) {
	var names []string
	measured := map[string]string{}
	for _, set := range semanticSets {
		names = append(names, "semantic-"+set.name+"-lexical", "semantic-"+set.name+"-fused")
	}
	for _, set := range semanticSets {
		t.Run(set.name, func(t *testing.T) {
			skills, tasks := set.load(t)
			g := withSemantic(t, skills, builtinFor(t, embed.BuiltinOptions{}))
			lex := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.NoSemantic = true, true })
			sem := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph = true })
			lexG := recall(t, g, tasks, func(r *engine.Request) { r.NoSemantic = true })
			semG := recall(t, g, tasks, func(r *engine.Request) {})
			t.Logf("%s (%d skills, dim %d): no-graph R@10 lexical %.3f, semantic+lexical %.3f; graph R@10 lexical %.3f, semantic+lexical %.3f",
				set.name, g.NumSkills(), g.VectorDim(), lex.Recall[10], sem.Recall[10], lexG.Recall[10], semG.Recall[10])
			measured["semantic-"+set.name+"-lexical"] = fmt.Sprintf("%.3f", lex.Recall[10])
			measured["semantic-"+set.name+"-fused"] = fmt.Sprintf("%.3f", sem.Recall[10])
			// The semantic list's weight follows its agreement with the lexical one, so on a
			// small library it may add nothing; it must never take recall away.
			if sem.Recall[10] < lex.Recall[10] {
				t.Errorf("semantic + lexical R@10 %.3f is below lexical alone %.3f", sem.Recall[10], lex.Recall[10])
			}
		})
	}
	fixture.CheckFigures(t, "../../..", fixture.DocFigures(t, "../../..", "semantic"), names, measured, *update, "./native/internal/builder")
}

// TestSemanticSweep prints R@10 over fusion weights and model sizes (go test -run Sweep -v).
func TestSemanticSweep(t *testing.T) {
	if os.Getenv("CASKG_SWEEP") == "" {
		t.Skip("set CASKG_SWEEP=1 to run the sweep")
	}
	for _, set := range semanticSets {
		skills, tasks := set.load(t)
		for _, dim := range []int{64, 128} {
			g := withSemantic(t, skills, builtinFor(t, embed.BuiltinOptions{Dim: dim}))
			lex := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.NoSemantic = true, true })
			line := fmt.Sprintf("%s dim %d: lexical %.3f", set.name, g.VectorDim(), lex.Recall[10])
			for _, w := range []float64{0.5, 0.75, 1, 1.5} {
				s := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.SemanticWeight = true, w })
				line += fmt.Sprintf("  w%.2f %.3f", w, s.Recall[10])
			}
			t.Log(line)
		}
	}
}

// agreement measures, over tasks, how often the query encoder and the exact query vector give
// the same top-5: of the fused seeds (semantic + lexical, no graph) and of the semantic list
// alone (cosine to the stored skill vectors).
func agreement(t testing.TB, g *graphs.Graph, emb embed.Embedder, tasks []eval.Task) (seeds, semantic float64) {
	t.Helper()
	eng := engine.New(g)
	queries := make([]string, len(tasks))
	for i, task := range tasks {
		queries[i] = task.Query
	}
	exact, err := emb.Embed(context.Background(), queries)
	if err != nil {
		t.Fatal(err)
	}
	top := func(req engine.Request) []string {
		resp, err := eng.Query(req)
		if err != nil {
			t.Fatal(err)
		}
		names := resultNames(resp)
		sort.Strings(names)
		return names
	}
	cosTop := func(q []float32) []int {
		type sc struct {
			i int
			s float64
		}
		var all []sc
		for i := 0; i < g.NumSkills(); i++ {
			row, scale := g.Vector(i)
			var dot, ss float64
			for j, x := range row {
				dot += float64(q[j]) * float64(x)
				ss += float64(x) * float64(x)
			}
			if ss > 0 && scale > 0 {
				all = append(all, sc{i, dot / math.Sqrt(ss)})
			}
		}
		sort.Slice(all, func(a, b int) bool { return all[a].s > all[b].s || all[a].s == all[b].s && all[a].i < all[b].i })
		var ids []int
		for _, x := range all[:min(5, len(all))] {
			ids = append(ids, x.i)
		}
		sort.Ints(ids)
		return ids
	}
	var nSeeds, nSem, n int
	for i, q := range queries {
		enc := eng.Embed(q)
		if enc == nil || isZero(exact[i]) {
			continue
		}
		n++
		a := top(engine.Request{Query: q, K: 5, NoGraph: true})
		b := top(engine.Request{Query: q, K: 5, NoGraph: true, Vector: exact[i]})
		if slices.Equal(a, b) {
			nSeeds++
		}
		if slices.Equal(cosTop(enc), cosTop(exact[i])) {
			nSem++
		}
	}
	if n == 0 {
		t.Fatal("no query has an encoder vector")
	}
	return float64(nSeeds) / float64(n), float64(nSem) / float64(n)
}

func isZero(v []float32) bool { return !slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) }

// TestEncoderAgreement holds the builtin model's query encoder (the model itself, quantized) to
// its exact vectors: the fused top-5 seeds agree for at least 90% of the queries.
func TestEncoderAgreement(t *testing.T) {
	for _, set := range semanticSets {
		t.Run(set.name, func(t *testing.T) {
			skills, tasks := set.load(t)
			var model embed.Embedder
			g := withSemantic(t, skills, func(s []ingest.Skill) embed.Embedder {
				model = builtinFor(t, embed.BuiltinOptions{})(s)
				return model
			})
			seeds, sem := agreement(t, g, model, tasks)
			t.Logf("%s, builtin: top-5 agreement encoder vs exact vector: fused seeds %.3f, semantic list %.3f", set.name, seeds, sem)
			if seeds < 0.9 {
				t.Errorf("fused top-5 agreement %.3f below 0.9", seeds)
			}
			// The same model treated as an opaque teacher: the encoder is distilled from it by
			// embedding each vocabulary term's surface word.
			g = withSemantic(t, skills, func(s []ingest.Skill) embed.Embedder {
				model = opaque{builtinFor(t, embed.BuiltinOptions{})(s)}
				return model
			})
			seeds, sem = agreement(t, g, model, tasks)
			t.Logf("%s, builtin as an opaque teacher (distilled encoder): fused seeds %.3f, semantic list %.3f", set.name, seeds, sem)
		})
	}
}

// opaque hides an embedder's term table, so embedSkills distils an encoder from it.
type opaque struct{ embed.Embedder }

// BenchmarkQuerySemantic measures a no-graph query over the 859-skill library with and without
// the semantic list (builtin model, 128 dimensions).
func BenchmarkQuerySemantic(b *testing.B) {
	lib := filepath.Join(sharedData, "skills")
	if _, err := os.Stat(lib); err != nil {
		b.Skip("shared data not present:", err)
	}
	g := withSemantic(b, loadLib(b, lib), builtinFor(b, embed.BuiltinOptions{}))
	eng := engine.New(g)
	const q = "Extract the tables from a PDF report and export them to a CSV file"
	for _, tc := range []struct {
		name string
		req  engine.Request
	}{
		{"lexical", engine.Request{Query: q, K: 10, NoGraph: true, NoSemantic: true}},
		{"semantic+lexical", engine.Request{Query: q, K: 10, NoGraph: true}},
		{"semantic+lexical+graph", engine.Request{Query: q, K: 10}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.Query(tc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
