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

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/atomicfile"
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
	cmp := fs.Bool("compare", false, "the arguments are libraries: build the default artifact, default + traces (with -traces), publish-all and the oracle builds (with -oracle-errors), and score them with the seeds alone, each seed channel alone and the whole library")
	traces := fs.String("traces", "", "with -compare: JSONL `file` of successful runs: adds a build with the trace channel")
	oracleErrors := fs.String("oracle-errors", "", "with -compare and -gold-edges: comma-separated error `rates` in [0, 1]; adds a build probed by the evaluation-only oracle (answers from the gold edges) per rate")
	oracleSeed := fs.Uint64("oracle-seed", 1, "with -oracle-errors: picks which of the oracle's answers are wrong")
	role := fs.String("role", "", "with -compare: the set's role, tuning (defaults may be chosen on it) or check (never tuned on)")
	budget := fs.Int("budget", build.DefaultOptions().Budget, "with -compare: frontier size (0: probe every candidate; -1: every candidate with the contract prober, 500 with a model prober)")
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

// compareArgs are the flags of eval --compare.
type compareArgs struct {
	libs                []string
	tasks, gold, traces string
	oracleErrors        string
	oracleSeed          uint64
	role                string
	budget              int
	ks, title, label    string
	json                bool
	out                 string
}

// command is the eval --compare command line that prints this comparison's tables.
func (a compareArgs) command() string {
	words := []string{"bin/caskg", "eval", "--compare"}
	words = append(words, a.libs...)
	words = append(words, "--tasks", a.tasks)
	if a.gold != "" {
		words = append(words, "--gold-edges", a.gold)
	}
	if a.traces != "" {
		words = append(words, "--traces", a.traces)
	}
	if a.oracleErrors != "" {
		words = append(words, "--oracle-errors", a.oracleErrors)
		if a.oracleSeed != 1 {
			words = append(words, "--oracle-seed", strconv.FormatUint(a.oracleSeed, 10))
		}
	}
	if a.role != "" {
		words = append(words, "--role", a.role)
	}
	if a.budget != build.DefaultOptions().Budget {
		words = append(words, "--budget", strconv.Itoa(a.budget))
	}
	if a.ks != "5,10" {
		words = append(words, "--ks", a.ks)
	}
	if a.title != "" {
		words = append(words, "--title", a.title)
	}
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,=:@+") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// runCompare is eval --compare.
func runCompare(c *ctx, a compareArgs) error {
	if len(a.libs) == 0 {
		return usagef("-compare needs at least one LIBRARY")
	}
	ks, err := parseKs(a.ks)
	if err != nil {
		return err
	}
	tasks, err := eval.ReadTasks(a.tasks, true)
	if err != nil {
		return err
	}
	rates, err := parseRates(a.oracleErrors)
	if err != nil {
		return err
	}
	switch {
	case len(rates) > 0 && a.gold == "":
		return usagef("flag -oracle-errors needs -gold-edges: the oracle answers from them")
	case a.role != "" && a.role != roleTuning && a.role != roleCheck:
		return usagef("flag -role: %q is not %s or %s", a.role, roleTuning, roleCheck)
	}
	setup := compareSetup{oracleErrors: rates, oracleSeed: a.oracleSeed}
	if a.gold != "" {
		if setup.gold, err = eval.ReadGoldEdges(a.gold); err != nil {
			return err
		}
	}
	opt := build.DefaultOptions()
	opt.Budget = a.budget
	if a.traces != "" {
		if setup.traces, err = build.ReadTraces(a.traces); err != nil {
			return err
		}
	}
	if err := opt.Validate(); err != nil {
		return usagef("%v", err)
	}
	rows, skills, err := compare(a.libs, tasks, opt, setup, ks)
	if err != nil {
		return err
	}
	res := &compareResult{Title: a.title, Label: a.label, Role: a.role, Command: a.command(), Libraries: a.libs,
		Tasks: a.tasks, NumTasks: len(tasks), Skills: skills, GoldEdges: a.gold, Traces: a.traces,
		OracleErrors: rates, Budget: a.budget, Ks: ks, Rows: rows}
	if len(rates) > 0 {
		res.OracleSeed = a.oracleSeed
	}
	if res.Title == "" {
		res.Title = fmt.Sprintf("%s on %s", strings.Join(a.libs, " "), a.tasks)
	}
	if res.Label == "" {
		res.Label = res.Title
	}
	var buf bytes.Buffer
	if a.json {
		b, _ := json.MarshalIndent(res, "", "  ")
		buf.Write(b)
		buf.WriteByte('\n')
	} else {
		res.writeMarkdown(&buf)
		res.writeTimes(&buf)
	}
	if a.out != "" {
		return atomicfile.Write(a.out, buf.Bytes())
	}
	_, err = c.stdout.Write(buf.Bytes())
	return err
}
