package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/lab/harness"
)

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

// runCompare is eval --compare: it reads the inputs the flags name, runs the comparison and
// prints it, JSON or Markdown, to standard output or -o.
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
	case a.role != "" && a.role != harness.RoleTuning && a.role != harness.RoleCheck:
		return usagef("flag -role: %q is not %s or %s", a.role, harness.RoleTuning, harness.RoleCheck)
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
		return usagef("%v", err)
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
	_, err = c.stdout.Write(buf.Bytes())
	return err
}
