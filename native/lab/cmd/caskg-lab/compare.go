package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/lab/internal/harness"
)

// compareSynopsis is what compare takes.
const compareSynopsis = "LIBRARY... --tasks TASKS.jsonl [--gold-edges E [--oracle-errors 0.1,0.3]] [--traces R] [--budget N]\n" +
	"       [--role tuning|check] [--title T] [--label L] [--ks 5,10] [--json] [-o FILE]"

// compareArgs are the flags of compare.
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

// command is the caskg-lab compare command line that prints this comparison's tables.
func (a compareArgs) command() string {
	words := []string{"bin/caskg-lab", "compare"}
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
	if a.budget != builder.DefaultOptions().Budget {
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

// runCompare is caskg-lab compare: it reads the inputs the flags name, runs the comparison and
// prints it, JSON or Markdown, to standard output or -o.
func runCompare(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	var a compareArgs
	fs.StringVar(&a.tasks, "tasks", "", "task `file` (JSONL: id, query, gold) — required")
	fs.StringVar(&a.gold, "gold-edges", "", "gold edge `file` (JSONL: source, target) to score the published graphs")
	fs.StringVar(&a.ks, "ks", "5,10", "comma-separated cutoffs `k` for R@k and COMP@k")
	fs.BoolVar(&a.json, "json", false, "print JSON")
	fs.StringVar(&a.traces, "traces", "", "JSONL `file` of successful runs: adds a build with the trace channel")
	fs.StringVar(&a.oracleErrors, "oracle-errors", "", "with -gold-edges: comma-separated error `rates` in [0, 1]; adds a build probed by the evaluation-only oracle (answers from the gold edges) per rate")
	fs.Uint64Var(&a.oracleSeed, "oracle-seed", 1, "with -oracle-errors: picks which of the oracle's answers are wrong")
	fs.StringVar(&a.role, "role", "", "the set's role, tuning (defaults may be chosen on it) or check (never tuned on)")
	fs.IntVar(&a.budget, "budget", builder.DefaultOptions().Budget, "frontier size (0: probe every candidate; -1: every candidate with the contract prober, 500 with a model prober)")
	fs.StringVar(&a.title, "title", "", "the table's heading")
	fs.StringVar(&a.label, "label", "", "a short name of the comparison for the README summary (default: the title)")
	fs.StringVar(&a.out, "o", "", "write to this `file` (atomically) instead of standard output")
	var err error
	if a.libs, err = cmdline.Parse(stdout, "caskg-lab", fs, args, compareSynopsis); err != nil {
		return err
	}
	if a.tasks == "" {
		return cmdline.Usagef("flag -tasks is required")
	}
	return compare(stdout, a)
}

// compare runs the comparison a asks for and prints it.
func compare(stdout io.Writer, a compareArgs) error {
	if len(a.libs) == 0 {
		return cmdline.Usagef("compare needs at least one LIBRARY")
	}
	ks, err := cmdline.ParseKs(a.ks)
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
		return cmdline.Usagef("flag -oracle-errors needs -gold-edges: the oracle answers from them")
	case a.role != "" && a.role != harness.RoleTuning && a.role != harness.RoleCheck:
		return cmdline.Usagef("flag -role: %q is not %s or %s", a.role, harness.RoleTuning, harness.RoleCheck)
	}
	spec := harness.Spec{Libraries: a.libs, Tasks: tasks, Ks: ks, OracleErrors: rates, OracleSeed: a.oracleSeed,
		Title: a.title, Label: a.label, Role: a.role, Command: a.command(),
		TasksFile: a.tasks, GoldFile: a.gold, TracesFile: a.traces}
	if a.gold != "" {
		if spec.Gold, err = eval.ReadGoldEdges(a.gold); err != nil {
			return err
		}
	}
	spec.Options = builder.DefaultOptions()
	spec.Options.Budget = a.budget
	if a.traces != "" {
		if spec.Traces, err = builder.ReadTraces(a.traces); err != nil {
			return err
		}
	}
	if err := spec.Options.Validate(); err != nil {
		return cmdline.Usagef("%v", err)
	}
	res, err := harness.Compare(context.Background(), spec)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if a.json {
		b, _ := json.MarshalIndent(res, "", "  ")
		buf.Write(b)
		buf.WriteByte('\n')
	} else {
		res.WriteMarkdown(&buf)
		res.WriteTimes(&buf)
	}
	if a.out != "" {
		return atomicfile.Write(a.out, buf.Bytes())
	}
	_, err = stdout.Write(buf.Bytes())
	return err
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
			return nil, cmdline.Usagef("flag -oracle-errors: %q is not an error rate in [0, 1]", f)
		}
		if slices.Contains(rates, r) {
			return nil, cmdline.Usagef("flag -oracle-errors: %v given twice", r)
		}
		rates = append(rates, r)
	}
	return rates, nil
}
