package builder

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
)

// builtinOptions are DefaultOptions with the builtin semantic model learned from skills, as
// `caskg build` does by default.
func builtinOptions(t *testing.T, skills []ingest.Skill) Options {
	t.Helper()
	sorted := append([]ingest.Skill(nil), skills...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	texts := make([]string, len(sorted))
	for i, s := range sorted {
		texts[i] = skillText(s)
	}
	m, err := embed.NewBuiltin(texts, embed.BuiltinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Embedder = m
	return opt
}

// TestCalibrationBar is the CaSKG bar on ToolLinkOS, built from tools.json alone (gold edges
// hidden) and then with the training traces: the calibrated graph at the default options
// (`full`, the contract prober, the automatic frontier budget) beats both the uncalibrated
// `publish-all` graph and the seeds alone on COMP@10.
func TestCalibrationBar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds six ToolLinkOS graphs")
	}
	dir := filepath.Join(sharedData, "eval", "toollinkos")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared data not present:", err)
	}
	skills := loadLib(t, filepath.Join(dir, "tools.json"))
	tasks, err := eval.ReadTasks(filepath.Join(dir, "tasks_test.jsonl"), true)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := ReadTraces(filepath.Join(dir, "traces_train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, withTraces := range []bool{false, true} {
		opt := builtinOptions(t, skills)
		if withTraces {
			opt.traces = traces
		}
		full, _ := buildGraph(t, skills, opt)
		opt.Variant = VariantPublishAll
		all, _ := buildGraph(t, skills, opt)
		f, p, s := run(t, full, tasks, false), run(t, all, tasks, false), run(t, full, tasks, true)
		t.Logf("traces %v: full R@10 %.4f COMP@10 %.4f | publish-all %.4f %.4f | no-graph %.4f %.4f",
			withTraces, f.Recall[10], f.Complete[10], p.Recall[10], p.Complete[10], s.Recall[10], s.Complete[10])
		// The graph must add to the seeds; without traces the offline prober's few confirmed
		// edges are what publish-all's many also reach, so full must only match it.
		if f.Complete[10] < p.Complete[10] || withTraces && f.Complete[10] == p.Complete[10] || f.Complete[10] <= s.Complete[10] {
			t.Errorf("traces %v: full COMP@10 %.4f falls short of publish-all %.4f or does not beat no-graph %.4f",
				withTraces, f.Complete[10], p.Complete[10], s.Complete[10])
		}
	}
}
