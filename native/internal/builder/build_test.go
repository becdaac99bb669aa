package builder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

var update = flag.Bool("update", false, "rewrite golden files and the documentation's figures this package measures")

const (
	sampleLib   = "../../../graphs/sample"
	sampleTasks = "../../../graphs/sample-tasks.jsonl"
	sharedData  = "../../../../shared/data"
)

func loadLib(t testing.TB, paths ...string) []ingest.Skill {
	t.Helper()
	lib, err := ingest.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return lib.Skills
}

func buildGraph(t testing.TB, skills []ingest.Skill, opt Options) (*graphs.Graph, []byte) {
	t.Helper()
	data, _, err := buildOf(context.Background(), skills, opt)
	if err != nil {
		t.Fatal(err)
	}
	return fixture.Decode(t, data), data
}

// fakeBuilder is a builder over n skills whose signals are given as tables.
func fakeBuilder(n int, opt Options, sig map[string]map[[2]int]float64) *builder {
	b := &builder{opt: opt, skills: make([]ingest.Skill, n), feat: make([]features, n)}
	for i := range n {
		b.skills[i].Name = string(rune('a' + i))
	}
	for _, name := range []string{chanLexical, chanIO, chanStructural} {
		table := sig[name]
		b.signals = append(b.signals, signal{Name: name, Lambda: opt.Lambda[name], Min: 0.01, Propose: true,
			Score: func(i, j int) float64 { return table[[2]int{i, j}] }})
	}
	// Blocking needs a shared token: give every skill the same one.
	for i := range b.feat {
		b.feat[i].text = sparse{{term: "x", w: 1}}
	}
	return b
}

func TestAssociation(t *testing.T) {
	opt := DefaultOptions() // λ lex .10, io .25, struct .20 → Σλ = .55
	tests := []struct {
		name             string
		lex, io, structv float64
		want             float64
	}{
		{"io only", 0, 1, 0, 0.25 / 0.55},
		{"all channels", 0.5, 0.8, 0.4, (0.05 + 0.2 + 0.08) / 0.55},
		{"structural at threshold: no floor", 0, 0, 0.65, 0.13 / 0.55},
		{"structural above threshold: floor η·φ", 0, 0, 0.9, 0.7 * 0.9},
		{"floor below the weighted mean is not used", 1, 1, 0.7, (0.1 + 0.25 + 0.14) / 0.55},
		{"everything at 1 clips at 1", 1, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := fakeBuilder(2, opt, map[string]map[[2]int]float64{
				chanLexical: {{0, 1}: tc.lex}, chanIO: {{0, 1}: tc.io}, chanStructural: {{0, 1}: tc.structv},
			})
			var got *edgeCandidate
			for _, c := range b.candidates(&Report{PerChannel: map[string]int{}}) {
				if c.Source == 0 && c.Target == 1 {
					got = &c
				}
			}
			if got == nil {
				t.Fatal("no candidate 0→1")
			}
			if math.Abs(got.A-tc.want) > 1e-12 {
				t.Errorf("A = %v, want %v", got.A, tc.want)
			}
		})
	}
}

func TestCandidateCap(t *testing.T) {
	opt := DefaultOptions()
	opt.Cap, opt.PerChannel = 3, 2
	n := 8
	sig := map[string]map[[2]int]float64{chanLexical: {}, chanIO: {}, chanStructural: {}}
	for j := 1; j < n; j++ {
		sig[chanLexical][[2]int{0, j}] = float64(j) / 10 // lexical prefers high j
		sig[chanIO][[2]int{0, j}] = float64(n-j) / 10    // io prefers low j
	}
	b := fakeBuilder(n, opt, sig)
	rep := &Report{PerChannel: map[string]int{}}
	var targets []int
	for _, c := range b.candidates(rep) {
		if c.Source == 0 {
			targets = append(targets, c.Target)
		}
	}
	// Each channel proposes its 2 best (lexical 7, 6; io 1, 2); the cap keeps the 3 best by A.
	if len(targets) != 3 {
		t.Fatalf("targets of 0 = %v, want 3 of them", targets)
	}
	if rep.PerChannel[chanLexical] != 2 || rep.PerChannel[chanIO] != 2 {
		t.Errorf("per channel = %v", rep.PerChannel)
	}
	for _, j := range targets {
		if j != 1 && j != 2 && j != 6 && j != 7 {
			t.Errorf("target %d was proposed by no channel", j)
		}
	}
}

func TestPublishAll(t *testing.T) {
	cands := []edgeCandidate{{Source: 0, Target: 1, A: 0.4, Type: graphs.Dependency}, {Source: 1, Target: 0, A: 0.001, Type: graphs.Semantic}}
	got := publishAll(cands, 0.01)
	if len(got) != 2 || got[0].Weight != 0.4 || got[1].Weight != 0.01 || got[1].Assoc != 0.001 ||
		got[0].State != graphs.Unvalidated {
		t.Errorf("Publish = %+v", got)
	}
}

func TestSignals(t *testing.T) {
	skills := []ingest.Skill{
		{Name: "get_system_language", Description: "Retrieves the system's language setting."},
		{Name: "greet_user_in_language", Description: "Greets the user in a given language.",
			Inputs: []ingest.Field{{Name: "language", Required: true}}},
		{Name: "get_location_service_status", Description: "Gets whether location services are on."},
		{Name: "set_location_service_status", Description: "Turns location services on or off.",
			Inputs: []ingest.Field{{Name: "status"}}},
		{Name: "heat-object", Description: "Heat a held object.", DependsOn: []string{"pick-up-object"},
			Inputs: []ingest.Field{{Name: "held-object"}}},
		{Name: "pick-up-object", Description: "Pick up an object.", Outputs: []ingest.Field{{Name: "held-object"}}},
	}
	index := map[string]int{}
	for i, s := range skills {
		index[s.Name] = i
	}
	b := &builder{opt: DefaultOptions(), skills: skills}
	b.feat, b.idf = extractFeatures(skills, index)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"getter output feeds a parameter", b.io(0, 1), 1},
		{"no reverse io", b.io(1, 0), 0},
		{"declared dependency", b.io(5, 4), 1},
		{"declared output to declared input", b.io(5, 4), 1},
		{"get before set on the same object", b.structural(2, 3), 1},
		{"set before get is out of order", b.structural(3, 2), 0},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if l := b.lexical(2, 3); l <= 0 || l > 1 {
		t.Errorf("lexical(get/set location status) = %v, want in (0, 1]", l)
	}
	if r := b.feat[4].role; r != roleTransform {
		t.Errorf("role of heat-object = %v", r)
	}
}

func TestDeterministic(t *testing.T) {
	skills := loadLib(t, sampleLib)
	_, a := buildGraph(t, skills, DefaultOptions())
	// Reversed input order must not change a byte.
	rev := make([]ingest.Skill, len(skills))
	for i, s := range skills {
		rev[len(skills)-1-i] = s
	}
	_, b := buildGraph(t, rev, DefaultOptions())
	if !bytes.Equal(a, b) {
		t.Fatal("same library in another order gave different bytes")
	}
	sum := sha256.Sum256(a)
	got := hex.EncodeToString(sum[:]) + "\n"
	golden := filepath.Join("testdata", "sample.sha256")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./native/internal/builder -run TestDeterministic -update)", err)
	}
	if got != string(want) {
		t.Errorf("sample artifact checksum %s, golden %s: the artifact changed; if intended, run with -update",
			strings.TrimSpace(got), strings.TrimSpace(string(want)))
	}
}

func TestBuildErrors(t *testing.T) {
	skills := []ingest.Skill{{Name: "a", Description: "x"}, {Name: "a", Description: "y", Source: "f.md"}}
	if _, _, err := buildOf(context.Background(), skills, DefaultOptions()); err == nil || !strings.Contains(err.Error(), `duplicate skill name "a" (f.md)`) {
		t.Errorf("duplicate: %v", err)
	}
	if _, _, err := buildOf(context.Background(), nil, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "no skills") {
		t.Errorf("empty: %v", err)
	}
	opt := DefaultOptions()
	opt.Variant = "bogus"
	if _, _, err := buildOf(context.Background(), skills[:1], opt); err == nil || !strings.Contains(err.Error(), `unknown variant "bogus"`) {
		t.Errorf("variant: %v", err)
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
		all = append(all, eval.Score(resultNames(resp), task.Gold, []int{10}))
	}
	return eval.Summarize(all, []int{10})
}

// run evaluates every task at k = 10, with the graph or (noGraph) with the seeds alone.
func run(t *testing.T, g *graphs.Graph, tasks []eval.Task, noGraph bool) eval.Summary {
	t.Helper()
	return recall(t, g, tasks, func(r *engine.Request) { r.NoGraph = noGraph })
}

// resultNames are the names of the skills resp ranked, best first.
func resultNames(resp engine.Response) []string {
	var names []string
	for _, r := range resp.Results {
		names = append(names, r.Name)
	}
	return names
}

// TestSampleTasks holds the default build of the sample library (the builtin semantic model, as
// `caskg build` makes it) to its gold bundles. Thresholds: with the graph, R@10 ≥ 0.75 and
// COMP@10 ≥ 0.40 (publish-all, before calibration), and the graph beats the seeds alone on both.
func TestSampleTasks(t *testing.T) {
	lib := loadLib(t, sampleLib)
	g, _ := buildGraph(t, lib, builtinOptions(t, lib))
	tasks, err := eval.ReadTasks(sampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	withGraph, seeds := run(t, g, tasks, false), run(t, g, tasks, true)
	t.Logf("graph R@10 %.3f COMP@10 %.3f; no-graph R@10 %.3f COMP@10 %.3f",
		withGraph.Recall[10], withGraph.Complete[10], seeds.Recall[10], seeds.Complete[10])
	if withGraph.Recall[10] < 0.75 || withGraph.Complete[10] < 0.40 {
		t.Errorf("graph mode below the bar: R@10 %.3f (≥ 0.75), COMP@10 %.3f (≥ 0.40)", withGraph.Recall[10], withGraph.Complete[10])
	}
	if withGraph.Recall[10] <= seeds.Recall[10] || withGraph.Complete[10] <= seeds.Complete[10] {
		t.Errorf("graph does not beat seeds alone")
	}
}

// TestToolLinkOS is the walking skeleton's bar on real data: BM25 seeds alone reach the
// reference R@10 of 0.25 and the graph beats them on R@10 and COMP@10.
func TestToolLinkOS(t *testing.T) {
	dir := filepath.Join(sharedData, "eval", "toollinkos")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared data not present:", err)
	}
	g, _ := buildGraph(t, loadLib(t, filepath.Join(dir, "tools.json")), DefaultOptions())
	tasks, err := eval.ReadTasks(filepath.Join(dir, "tasks_test.jsonl"), true)
	if err != nil {
		t.Fatal(err)
	}
	withGraph, seeds := run(t, g, tasks, false), run(t, g, tasks, true)
	t.Logf("graph R@10 %.4f COMP@10 %.4f; no-graph R@10 %.4f COMP@10 %.4f",
		withGraph.Recall[10], withGraph.Complete[10], seeds.Recall[10], seeds.Complete[10])
	if seeds.Recall[10] < 0.25 {
		t.Errorf("no-graph R@10 %.4f below the BM25 reference 0.25", seeds.Recall[10])
	}
	if withGraph.Recall[10] <= seeds.Recall[10] || withGraph.Complete[10] <= seeds.Complete[10] {
		t.Errorf("graph does not beat seeds alone")
	}
}

func BenchmarkBuild(b *testing.B) {
	dir := filepath.Join(sharedData, "skills")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("shared data not present:", err)
	}
	skills := loadLib(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := buildOf(context.Background(), skills, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
