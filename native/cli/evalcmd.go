package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/wasm/engine"
)

// evalReport is what eval prints with --json.
type evalReport struct {
	Artifact string                      `json:"artifact"`
	Tasks    string                      `json:"tasks"`
	Mode     string                      `json:"mode"`
	Summary  eval.Summary                `json:"summary"`
	Unknown  int                         `json:"unknown_gold"` // gold names not in the artifact
	Edges    map[string]*eval.EdgeScores `json:"edges,omitempty"`
}

func runEval(c *ctx, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, 0)
	tasksPath := fs.String("tasks", "", "task `file` (JSONL: id, query, gold) — required")
	goldEdges := fs.String("gold-edges", "", "gold edge `file` (JSONL: source, target) to score the published graph")
	ksFlag := fs.String("ks", "5,10", "comma-separated cutoffs `k` for R@k and COMP@k")
	jsonOut := fs.Bool("json", false, "print JSON")
	cmp := fs.Bool("compare", false, "the arguments are libraries: build every variant (full, no-judge, semantic-only, publish-all) and score them with the seed baselines in one table")
	traces := fs.String("traces", "", "with -compare: JSONL `file` of successful runs for the trace channel")
	budget := fs.Int("budget", build.DefaultOptions().Budget, "with -compare: frontier size (0: probe every candidate)")
	title := fs.String("title", "", "with -compare: print Markdown under this heading")
	pos, err := parse(c, fs, args, "ARTIFACT --tasks TASKS.jsonl [--gold-edges EDGES.jsonl] [--ks 5,10] [--no-graph]\n       caskg eval --compare LIBRARY... --tasks TASKS.jsonl [--gold-edges E] [--traces R] [--budget N] [--title T]")
	if err != nil {
		return err
	}
	if *tasksPath == "" {
		return usagef("flag -tasks is required")
	}
	if *cmp {
		return runCompare(c, pos, *tasksPath, *goldEdges, *traces, *budget, *ksFlag, *title, *jsonOut)
	}
	if len(pos) != 1 {
		return usagef("want exactly one ARTIFACT, got %d arguments", len(pos))
	}
	ks, err := parseKs(*ksFlag)
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
	rep, err := evaluate(eng, tasks, q, ks)
	if err != nil {
		return err
	}
	rep.Artifact, rep.Tasks = pos[0], *tasksPath
	if *goldEdges != "" {
		gold, err := eval.ReadGoldEdges(*goldEdges)
		if err != nil {
			return err
		}
		rep.Edges = scoreEdges(g, gold)
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

// evaluate runs every task and averages the metrics. k defaults to the largest cutoff.
func evaluate(eng *engine.Engine, tasks []eval.Task, q queryFlags, ks []int) (*evalReport, error) {
	g := eng.Graph()
	known := make(map[string]bool, g.NumSkills())
	for i := range g.NumSkills() {
		known[g.Name(i)] = true
	}
	if q.k == 0 {
		q.k = ks[len(ks)-1]
	}
	rep := &evalReport{Mode: "graph"}
	if q.noGraph {
		rep.Mode = "no-graph"
	}
	var all []eval.Scores
	for _, t := range tasks {
		for _, name := range t.Gold {
			if !known[name] {
				rep.Unknown++
			}
		}
		resp, err := eng.Query(q.request(t.Query))
		if err != nil {
			return nil, fmt.Errorf("task %s (line %d): %w", t.ID, t.Line, err)
		}
		names := make([]string, len(resp.Results))
		for i, r := range resp.Results {
			names[i] = r.Name
		}
		all = append(all, eval.Score(names, t.Gold, ks))
	}
	rep.Summary = eval.Summarize(all, ks)
	return rep, nil
}

// scoreEdges scores the published edges against gold, in all and by state.
func scoreEdges(g *graphs.Graph, gold []eval.GoldEdge) map[string]*eval.EdgeScores {
	known := make(map[string]bool, g.NumSkills())
	for i := range g.NumSkills() {
		known[g.Name(i)] = true
	}
	byState := map[string][][2]string{}
	var all [][2]string
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			pair := [2]string{g.Name(u), g.Name(g.Target(e))}
			all = append(all, pair)
			st := g.State(e).String()
			byState[st] = append(byState[st], pair)
		}
	}
	out := map[string]*eval.EdgeScores{}
	s := eval.ScoreEdges(all, gold, known)
	out["all"] = &s
	for st, pairs := range byState {
		s := eval.ScoreEdges(pairs, gold, known)
		out[st] = &s
	}
	return out
}

// parseKs parses the comma-separated cutoffs of -ks, ascending.
func parseKs(flagValue string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(flagValue, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > engine.MaxK {
			return nil, usagef("flag -ks: %q is not a cutoff in [1, %d]", f, engine.MaxK)
		}
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks, nil
}

// runCompare is eval --compare.
func runCompare(c *ctx, libs []string, tasksPath, goldPath, tracesPath string, budget int, ksFlag, title string, jsonOut bool) error {
	if len(libs) == 0 {
		return usagef("-compare needs at least one LIBRARY")
	}
	ks, err := parseKs(ksFlag)
	if err != nil {
		return err
	}
	tasks, err := eval.ReadTasks(tasksPath, true)
	if err != nil {
		return err
	}
	var gold []eval.GoldEdge
	if goldPath != "" {
		if gold, err = eval.ReadGoldEdges(goldPath); err != nil {
			return err
		}
	}
	opt := build.DefaultOptions()
	opt.Budget = budget
	if tracesPath != "" {
		if opt.Traces, err = build.ReadTraces(tracesPath); err != nil {
			return err
		}
	}
	if err := opt.Validate(); err != nil {
		return usagef("%v", err)
	}
	rows, err := compare(c, libs, tasks, gold, opt, ks)
	if err != nil {
		return err
	}
	if jsonOut {
		b, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	if title == "" {
		title = fmt.Sprintf("%s on %s", strings.Join(libs, " "), tasksPath)
	}
	writeCompareMarkdown(c.stdout, title, rows, ks)
	return nil
}
