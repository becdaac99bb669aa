package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/embed"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// withSemantic builds the artifact for skills and attaches the vectors and query encoder that
// Semantic makes with emb (what Build does when it is given an embedder).
func withSemantic(t testing.TB, skills []ingest.Skill, emb func([]ingest.Skill) embed.Embedder) *graphs.Graph {
	t.Helper()
	data, _, err := Build(skills, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
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
	if art.Vectors, art.Encoder, err = Semantic(context.Background(), emb(sorted), sorted); err != nil {
		t.Fatal(err)
	}
	data, err = graphs.Encode(art)
	if err != nil {
		t.Fatal(err)
	}
	if g, err = graphs.Decode(data); err != nil {
		t.Fatal(err)
	}
	return g
}

func builtinFor(t testing.TB, opt embed.BuiltinOptions) func([]ingest.Skill) embed.Embedder {
	return func(skills []ingest.Skill) embed.Embedder {
		texts := make([]string, len(skills))
		for i, s := range skills {
			texts[i] = SkillText(s)
		}
		m, err := embed.NewBuiltin(texts, opt)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// recall evaluates every task at k = 10 with the request mod makes.
func recall(t testing.TB, g *graphs.Graph, tasks []eval.Task, mod func(*engine.Request)) eval.Summary {
	t.Helper()
	eng := engine.New(g)
	var all []eval.Scores
	for _, task := range tasks {
		req := engine.Request{Query: task.Query, K: 10}
		mod(&req)
		resp, err := eng.Query(req)
		if err != nil {
			t.Fatalf("task %s: %v", task.ID, err)
		}
		var names []string
		for _, r := range resp.Results {
			names = append(names, r.Name)
		}
		all = append(all, eval.Score(names, task.Gold, []int{10}))
	}
	return eval.Summarize(all, []int{10})
}

// TestSemanticBar holds the builtin model to the bar: semantic + lexical seeds beat
// lexical seeds alone on R@10 (no-graph mode) for the sample tasks and for SkillsBench.
func TestSemanticBar(t *testing.T) {
	sets := []struct{ name, lib, tasks string }{
		{"sample", sampleLib, sampleTasks},
		{"skillsbench", filepath.Join(sharedData, "skills"), filepath.Join(sharedData, "eval", "skillsbench", "tasks.jsonl")},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			if _, err := os.Stat(set.lib); err != nil {
				t.Skip("data not present:", err)
			}
			g := withSemantic(t, loadLib(t, set.lib), builtinFor(t, embed.BuiltinOptions{}))
			tasks, err := eval.ReadTasks(set.tasks, true)
			if err != nil {
				t.Fatal(err)
			}
			lex := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.NoSemantic = true, true })
			sem := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph = true })
			lexG := recall(t, g, tasks, func(r *engine.Request) { r.NoSemantic = true })
			semG := recall(t, g, tasks, func(r *engine.Request) {})
			t.Logf("%s (%d skills, dim %d): no-graph R@10 lexical %.3f, semantic+lexical %.3f; graph R@10 lexical %.3f, semantic+lexical %.3f",
				set.name, g.NumSkills(), g.VectorDim(), lex.Recall[10], sem.Recall[10], lexG.Recall[10], semG.Recall[10])
			if sem.Recall[10] <= lex.Recall[10] {
				t.Errorf("semantic + lexical R@10 %.3f does not beat lexical alone %.3f", sem.Recall[10], lex.Recall[10])
			}
		})
	}
}

// TestSemanticSweep prints R@10 over fusion weights and model sizes (go test -run Sweep -v).
func TestSemanticSweep(t *testing.T) {
	if os.Getenv("CASKG_SWEEP") == "" {
		t.Skip("set CASKG_SWEEP=1 to run the sweep")
	}
	sets := []struct{ name, lib, tasks string }{
		{"sample", sampleLib, sampleTasks},
		{"skillsbench", filepath.Join(sharedData, "skills"), filepath.Join(sharedData, "eval", "skillsbench", "tasks.jsonl")},
	}
	for _, set := range sets {
		skills := loadLib(t, set.lib)
		tasks, err := eval.ReadTasks(set.tasks, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, dim := range []int{64, 128, 256} {
			g := withSemantic(t, skills, builtinFor(t, embed.BuiltinOptions{Dim: dim}))
			lex := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.NoSemantic = true, true })
			line := fmt.Sprintf("%s dim %d: lexical %.3f", set.name, g.VectorDim(), lex.Recall[10])
			for _, w := range []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 4} {
				s := recall(t, g, tasks, func(r *engine.Request) { r.NoGraph, r.SemanticWeight = true, w })
				line += fmt.Sprintf("  w%.2f %.3f", w, s.Recall[10])
			}
			t.Log(line)
		}
	}
}
