package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
)

func runEval(c *ctx, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, 0)
	tasksPath := fs.String("tasks", "", "task `file` (JSONL: id, query, gold) — required")
	goldEdges := fs.String("gold-edges", "", "gold edge `file` (JSONL: source, target) to score the published graph")
	ksFlag := fs.String("ks", "5,10", "comma-separated cutoffs `k` for R@k and COMP@k")
	jsonOut := fs.Bool("json", false, "print JSON")
	pos, err := parse(c, fs, args, "ARTIFACT --tasks TASKS.jsonl [--gold-edges EDGES.jsonl] [--ks 5,10] [--no-graph]")
	if err != nil {
		return err
	}
	// eval measures the engine, so -k goes to the engine's bound, not the service's.
	lim := service.Service
	lim.K = engine.MaxK
	if err := q.check(fs, lim); err != nil {
		return err
	}
	if *tasksPath == "" {
		return usagef("flag -tasks is required")
	}
	if err := oneArtifact(pos); err != nil {
		return err
	}
	ks, err := cmdline.ParseKs(*ksFlag)
	if err != nil {
		return err
	}
	eng, err := loadEngine(pos[0])
	if err != nil {
		return err
	}
	g := eng.Graph()
	tasks, err := eval.ReadTasks(*tasksPath, true)
	if err != nil {
		return err
	}
	rep, err := eval.ScoreArtifact(eng, tasks, q.request(""), ks)
	if err != nil {
		return err
	}
	rep.Artifact, rep.Tasks = pos[0], *tasksPath
	if *goldEdges != "" {
		gold, err := eval.ReadGoldEdges(*goldEdges)
		if err != nil {
			return err
		}
		rep.Edges = eval.ScoreGraphEdges(g, gold)
	}
	if *jsonOut {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(w, "%s on %s (%d tasks, %s)\n", pos[0], *tasksPath, rep.Summary.Tasks, rep.Mode)
	if rep.Unknown > 0 {
		fmt.Fprintf(w, "warning: %d gold names are not skills of the artifact\n", rep.Unknown)
	}
	for _, k := range ks {
		fmt.Fprintf(w, "R@%d\t%.4f\n", k, rep.Summary.Recall[k])
	}
	for _, k := range ks {
		fmt.Fprintf(w, "COMP@%d\t%.4f\n", k, rep.Summary.Complete[k])
	}
	fmt.Fprintf(w, "nDCG@10\t%.4f\n", rep.Summary.NDCG10)
	if rep.Edges != nil {
		fmt.Fprintln(w, "\nedges\tpublished\tgold\thits\tprecision\trecall\tF1")
		keys := make([]string, 0, len(rep.Edges))
		for k := range rep.Edges {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s := rep.Edges[k]
			fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\n", k, s.Published, s.Gold, s.Hits, s.Precision, s.Recall, s.F1)
		}
	}
	return w.Flush()
}
