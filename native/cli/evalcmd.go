package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/lab/harness"
	"github.com/caskg/caskg/wasm/engine"
)

func runEval(c *ctx, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, 0)
	tasksPath := fs.String("tasks", "", "task `file` (JSONL: id, query, gold) — required")
	goldEdges := fs.String("gold-edges", "", "gold edge `file` (JSONL: source, target) to score the published graph")
	ksFlag := fs.String("ks", "5,10", "comma-separated cutoffs `k` for R@k and COMP@k")
	jsonOut := fs.Bool("json", false, "print JSON")
	cmp := fs.Bool("compare", false, "the arguments are libraries: build the default artifact, default + traces (with -traces), publish-all and the oracle builds (with -oracle-errors), and score them with the seeds alone, each seed channel alone and the whole library")
	traces := fs.String("traces", "", "with -compare: JSONL `file` of successful runs: adds a build with the trace channel")
	oracleErrors := fs.String("oracle-errors", "", "with -compare and -gold-edges: comma-separated error `rates` in [0, 1]; adds a build probed by the evaluation-only oracle (answers from the gold edges) per rate")
	oracleSeed := fs.Uint64("oracle-seed", 1, "with -oracle-errors: picks which of the oracle's answers are wrong")
	role := fs.String("role", "", "with -compare: the set's role, tuning (defaults may be chosen on it) or check (never tuned on)")
	budget := fs.Int("budget", builder.DefaultOptions().Budget, "with -compare: frontier size (0: probe every candidate; -1: every candidate with the contract prober, 500 with a model prober)")
	title := fs.String("title", "", "with -compare: the table's heading")
	label := fs.String("label", "", "with -compare: a short name of the comparison for the README summary (default: the title)")
	out := fs.String("o", "", "with -compare or -report: write to this `file` (atomically) instead of standard output")
	report := fs.Bool("report", false, "the arguments are JSON files of eval -compare -json: write EVALUATION.md from them")
	readme := fs.String("readme", "", "with -report: rewrite the results between <!-- eval:begin --> and <!-- eval:end --> in this `file`")
	pos, err := parse(c, fs, args, "ARTIFACT --tasks TASKS.jsonl [--gold-edges EDGES.jsonl] [--ks 5,10] [--no-graph]\n"+
		"       caskg eval --compare LIBRARY... --tasks TASKS.jsonl [--gold-edges E [--oracle-errors 0.1,0.3]] [--traces R] [--budget N]\n"+
		"                  [--role tuning|check] [--title T] [--label L] [--json] [-o FILE]\n"+
		"       caskg eval --report RESULT.json... [-o EVALUATION.md] [--readme README.md]")
	if err != nil {
		return err
	}
	if err := q.check(fs, engine.MaxK); err != nil {
		return err
	}
	if *report {
		return runReport(c, pos, *out, *readme)
	}
	if *tasksPath == "" {
		return usagef("flag -tasks is required")
	}
	if *cmp {
		return runCompare(c, compareArgs{libs: pos, tasks: *tasksPath, gold: *goldEdges, traces: *traces,
			oracleErrors: *oracleErrors, oracleSeed: *oracleSeed, role: *role,
			budget: *budget, ks: *ksFlag, title: *title, label: *label, json: *jsonOut, out: *out})
	}
	if *out != "" || *readme != "" {
		return usagef("flags -o and -readme need -compare or -report")
	}
	if err := oneArtifact(pos); err != nil {
		return err
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
	rep, err := harness.ScoreArtifact(eng, tasks, q.request(""), ks)
	if err != nil {
		return err
	}
	rep.Artifact, rep.Tasks = pos[0], *tasksPath
	if *goldEdges != "" {
		gold, err := eval.ReadGoldEdges(*goldEdges)
		if err != nil {
			return err
		}
		rep.Edges = harness.ScoreEdges(g, gold)
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

// parseRates parses the comma-separated error rates of -oracle-errors ("" is none).
func parseRates(flagValue string) ([]float64, error) {
	if strings.TrimSpace(flagValue) == "" {
		return nil, nil
	}
	var rates []float64
	for _, f := range strings.Split(flagValue, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return nil, usagef("flag -oracle-errors: %q is not an error rate in [0, 1]", f)
		}
		if slices.Contains(rates, r) {
			return nil, usagef("flag -oracle-errors: %v given twice", r)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// runReport is eval --report: it reads comparisons written by eval --compare --json, writes
// EVALUATION.md (to out, or standard output) and rewrites the README's results span.
func runReport(c *ctx, files []string, out, readme string) error {
	if len(files) == 0 {
		return usagef("-report needs at least one RESULT.json of eval -compare -json")
	}
	var results []*harness.Result
	for _, f := range files {
		r, err := harness.ReadResult(f)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	var doc bytes.Buffer
	harness.WriteEvaluation(&doc, results)
	if out == "" {
		if _, err := c.stdout.Write(doc.Bytes()); err != nil {
			return err
		}
	} else if err := atomicfile.Write(out, doc.Bytes()); err != nil {
		return err
	}
	if readme == "" {
		return nil
	}
	return harness.UpdateReadme(readme, results)
}
