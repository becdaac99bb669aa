package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/lines"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/service"
	"golang.org/x/text/width"
)

// queryFlags are the retrieval options shared by query and eval (eval has no filter).
type queryFlags struct {
	k, seeds int
	gamma    float64
	noGraph  bool
	noMemory bool
	minScore float64
	filter   engine.Filter
}

// registerFilter adds query's --allow, --deny and --namespace: each may be repeated and takes
// a comma-separated list, as the API's GET parameters do.
func (q *queryFlags) registerFilter(fs *flag.FlagSet) {
	fs.Var((*listFlag)(&q.filter.Allow), "allow", "return only skills whose name matches a `glob` ('*' any run, '?' one character; repeat or comma-separate)")
	fs.Var((*listFlag)(&q.filter.Deny), "deny", "never return skills whose name matches a `glob` (wins over --allow)")
	fs.Var((*listFlag)(&q.filter.Namespaces), "namespace", "return only skills of a `namespace`, the part of a name before its first \"__\" (SERVER__TOOL)")
	fs.Float64Var(&q.minScore, "min-score", 0, "return only skills whose match (score × the answer's match strength) is at least this, in [0, 1]; 0.4 drops every weak answer")
}

// checkFilter holds a filter, from the flags or a --batch line, to the limits and the globs'
// syntax.
func checkFilter(f engine.Filter) error {
	if err := service.Service.Check(engine.Request{Filter: f}); err != nil {
		return err
	}
	return f.Check()
}

// listFlag is a flag that collects comma-separated values, however often it is given.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, strings.Split(v, ",")...)
	return nil
}

func (q *queryFlags) register(fs *flag.FlagSet, k int) {
	fs.IntVar(&q.k, "k", k, "number of skills to return")
	fs.IntVar(&q.seeds, "seeds", engine.DefaultSeeds, "number of seed skills PPR starts from")
	fs.Float64Var(&q.gamma, "gamma", engine.DefaultGamma, "PPR restart probability γ")
	fs.BoolVar(&q.noGraph, "no-graph", false, "rank by the seeds alone (the lexical baseline)")
	fs.BoolVar(&q.noMemory, "no-memory", false, "leave the artifact's memory of past tasks out of the ranking")
}

// check holds the retrieval flags given on the command line to their ranges: -gamma to (0, 1],
// -k and --seeds to lim (service.Service for query, the limits every surface shares; eval keeps the
// engine's bound on k), in the order of the flags' names. A 0 is an error, not the default:
// the default is what an absent flag means.
func (q *queryFlags) check(fs *flag.FlagSet, lim service.Limits) error {
	var given []string
	gamma := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "k" || f.Name == "seeds" {
			given = append(given, f.Name)
		}
		gamma = gamma || f.Name == "gamma"
	})
	if gamma && !(q.gamma > 0 && q.gamma <= 1) {
		return usagef("flag -gamma: %v is outside (0, 1]", q.gamma)
	}
	if !(q.minScore >= 0 && q.minScore <= 1) {
		return usagef("flag -min-score: %v is outside [0, 1]", q.minScore)
	}
	var fe *service.FieldError
	if errors.As(lim.Check(engine.Request{K: q.k, Seeds: q.seeds}, given...), &fe) {
		return usagef("flag -%s: %s", fe.Field, fe.Problem)
	}
	return nil
}

func (q *queryFlags) request(text string) engine.Request {
	return engine.Request{Query: text, K: q.k, Seeds: q.seeds, Gamma: q.gamma, NoGraph: q.noGraph, NoMemory: q.noMemory, MinScore: q.minScore, Filter: q.filter}
}

// renderFlags ask query for the rendered bundle (engine Request.Render) instead of the list.
type renderFlags struct {
	on           bool
	skill, total int
}

func (r *renderFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.on, "render", false, "print the bundle an agent reads: the skills' text within the budgets")
	fs.IntVar(&r.skill, "skill-budget", engine.DefaultSkillBudget, "characters of rendered text per skill (implies --render)")
	fs.IntVar(&r.total, "total-budget", engine.DefaultTotalBudget, "characters of rendered text in all (implies --render)")
}

// check validates the budgets and lets a budget given on the command line imply --render.
func (r *renderFlags) check(fs *flag.FlagSet) error {
	for _, b := range []struct {
		name string
		v    int
	}{{"skill-budget", r.skill}, {"total-budget", r.total}} {
		if b.v < 1 || b.v > engine.MaxBudget {
			return usagef("flag -%s: %d is outside [1, %d]", b.name, b.v, engine.MaxBudget)
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "skill-budget" || f.Name == "total-budget" {
			r.on = true
		}
	})
	return nil
}

func (r *renderFlags) apply(req engine.Request) engine.Request {
	req.Render, req.SkillBudget, req.TotalBudget = r.on, r.skill, r.total
	return req
}

// batchLine is one line of --batch --json output: the answer to one task, or the error of a
// task that could not be answered (a line that is not a task, a query over a limit), with the
// number of its input line.
type batchLine struct {
	ID       json.RawMessage `json:"id"` // echoed as given: a number stays a number; null when unknown
	Results  []engine.Result `json:"results"`
	Match    *float64        `json:"match,omitempty"` // engine.Response.Match; none on an error's line
	Note     string          `json:"note,omitempty"`  // engine.Response.Note
	Rendered string          `json:"rendered,omitempty"`
	Line     int             `json:"line,omitempty"`
	Error    string          `json:"error,omitempty"`
}

func runQuery(c *ctx, args []string) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, engine.DefaultK)
	q.registerFilter(fs)
	jsonOut := fs.Bool("json", false, "print JSON instead of text")
	batch := fs.String("batch", "", "answer every line {\"id\", \"query\"[, \"k\", \"filter\"]} of a JSONL `file` (- for stdin)")
	var rf renderFlags
	rf.register(fs)
	pos, err := parse(c, fs, args, "ARTIFACT \"task text\" [-k 8] [--allow GLOB] [--deny GLOB] [--namespace NS] [--json] [--render [--skill-budget N] [--total-budget N]] | ARTIFACT --batch TASKS.jsonl [--json]")
	if err != nil {
		return err
	}
	if err := rf.check(fs); err != nil {
		return err
	}
	if err := q.check(fs, service.Service); err != nil {
		return err
	}
	if err := checkFilter(q.filter); err != nil {
		return usagef("flags --allow, --deny, --namespace: %v", err)
	}
	if len(pos) == 0 {
		return usagef("no ARTIFACT given")
	}
	eng, err := loadEngine(pos[0])
	if err != nil {
		return err
	}
	if *batch != "" {
		if len(pos) > 1 {
			return usagef("give either a task text or --batch, not both")
		}
		return queryBatch(c, eng, &q, &rf, *batch, *jsonOut)
	}
	if len(pos) < 2 {
		return usagef("no task text given")
	}
	text := strings.Join(pos[1:], " ")
	if strings.TrimSpace(text) == "" {
		return usagef("the task text is empty")
	}
	var fe *service.FieldError
	if errors.As(service.Service.Check(engine.Request{Query: text}), &fe) {
		return fmt.Errorf("the task text is %s", fe.Problem)
	}
	resp, err := eng.Query(rf.apply(q.request(text)))
	if err != nil {
		return err
	}
	if *jsonOut {
		b, _ := json.Marshal(resp)
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	if rf.on {
		fmt.Fprint(c.stdout, resp.Rendered)
		return nil
	}
	printResults(c.stdout, eng, text, resp, q.noGraph)
	return nil
}

// errTooMany stops reading a --batch file at its service.MaxBatch+1st task.
var errTooMany = errors.New("too many tasks")

// batchTask is one non-blank line of a --batch file: a task, or why it is not one. A task's
// own "k" and "filter" (engine.Filter's JSON) take the place of the command line's.
type batchTask struct {
	line   int
	task   eval.Task
	k      int // 0: the command line's
	filter *engine.Filter
	err    error
}

// lineOptions are the fields of a --batch line besides its task's: what it may set for itself.
var lineOptions = []string{"k", "filter"}

// requestOnly are engine.Request's fields a --batch line may not set: the command line's flags
// set them for the whole run. A line that has one is refused, so that a caller who sends what
// POST /v1/retrieve takes learns that it was not applied. Other fields are ignored, so that an
// eval task file with its own metadata ("gold", "split") can be answered as it is.
// The first eight have flags.
var requestOnly = []string{"seeds", "gamma", "no_graph", "render", "skill_budget", "total_budget", "no_memory", "min_score",
	"vector", "semantic_weight", "no_semantic", "no_lexical"}

// lineRequest reads a --batch line's own "k" and "filter", if it has them, within the limits.
// A field of engine.Request the line may not set, or a known field spelt in another case
// ("K", "Query"), is an error naming it.
func lineRequest(data []byte) (k int, f *engine.Filter, err error) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return 0, nil, nil // ParseTasks said it is an object
	}
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		switch {
		case slices.Contains(requestOnly[:8], key):
			return 0, nil, fmt.Errorf("field %q: not taken per line; give it to the whole run as a flag (--%s)",
				key, strings.ReplaceAll(key, "_", "-"))
		case slices.Contains(requestOnly, key):
			return 0, nil, fmt.Errorf("field %q: caskg query does not take it (POST /v1/retrieve does)", key)
		case slices.Contains(lineOptions, key), slices.Contains([]string{"id", "query", "gold", "main"}, key):
		case slices.ContainsFunc(append(lineOptions, "id", "query"), func(s string) bool { return strings.EqualFold(s, key) }):
			return 0, nil, fmt.Errorf("field %q: unknown; the fields are spelt in lower case: id, query, k, filter", key)
		}
	}
	if v := raw["k"]; v != nil && string(v) != "null" {
		var x float64
		if err := json.Unmarshal(v, &x); err != nil || x != math.Trunc(x) || math.Abs(x) > math.MaxInt32 {
			return 0, nil, fmt.Errorf("field \"k\": %s is not a whole number", v)
		}
		k = int(x)
		var fe *service.FieldError
		if errors.As(service.Service.Check(engine.Request{K: k}, "k"), &fe) {
			return 0, nil, fmt.Errorf("field \"k\": %s", fe.Problem)
		}
	}
	if v := raw["filter"]; v != nil && string(v) != "null" {
		d := json.NewDecoder(bytes.NewReader(v))
		d.DisallowUnknownFields()
		f = new(engine.Filter)
		if err := d.Decode(f); err != nil {
			return 0, nil, fmt.Errorf("field \"filter\": %w", err)
		}
		if err := checkFilter(*f); err != nil {
			return 0, nil, err
		}
	}
	return k, f, nil
}

// readBatch reads the lines of a --batch file (- for stdin). A line that is not a task is kept
// with its error, so that the others are still answered; only an unreadable file, a file over
// service.MaxBatch tasks or one without any fails the run. name is the file's name in messages.
func readBatch(path string) (name string, tasks []batchTask, err error) {
	name, r := path, stdin
	if path == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return name, nil, err
		}
		defer f.Close()
		r = f
	}
	line, err := lines.Each(r, func(line int, data []byte) error {
		if len(tasks) == service.MaxBatch {
			return errTooMany
		}
		// ParseTasks checks one task as it checks a file; its error names line 1 of data,
		// so keep the reason and put this line's number back.
		t, err := eval.ParseTasks(bytes.NewReader(data), name, false)
		bt := batchTask{line: line, err: errors.Unwrap(err)}
		if err == nil {
			bt.k, bt.filter, bt.err = lineRequest(data)
		}
		if bt.err == nil {
			bt.task = t[0]
			bt.task.Line = line
		} else {
			// Echo the id of a bad task when there is one to echo.
			var raw struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(data, &raw) == nil && string(raw.ID) != "null" {
				bt.task.RawID = raw.ID
			}
		}
		tasks = append(tasks, bt)
		return nil
	})
	switch {
	case err == errTooMany:
		return name, nil, fmt.Errorf("--batch %s: more than %d tasks, at most %d in one run; split the file", name, service.MaxBatch, service.MaxBatch)
	case err != nil:
		return name, nil, fmt.Errorf("--batch %s:%d: %w", name, line, err)
	case len(tasks) == 0:
		return name, nil, fmt.Errorf("--batch %s: no tasks", name)
	}
	return name, tasks, nil
}

// queryBatch answers every task of a --batch file in order. A bad line does not stop the
// batch: with --json it gets a line {"id", "results": [], "line", "error"} among the answers
// on stdout; in text it is reported on stderr as FILE:LINE: error. The run fails at the end
// when any line did.
func queryBatch(c *ctx, eng *engine.Engine, q *queryFlags, rf *renderFlags, path string, jsonOut bool) error {
	name, tasks, err := readBatch(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(c.stdout)
	defer w.Flush()
	failed := 0
	for _, bt := range tasks {
		t, err := bt.task, bt.err
		var resp engine.Response
		if err == nil {
			req := rf.apply(q.request(t.Query))
			if bt.filter != nil {
				req.Filter = *bt.filter
			}
			if bt.k != 0 {
				req.K = bt.k
			}
			if err = service.Service.Check(req); err == nil {
				resp, err = eng.Query(req)
			}
		}
		if err != nil {
			failed++
		}
		if jsonOut {
			line := batchLine{ID: t.RawID, Results: resp.Results, Note: resp.Note, Rendered: resp.Rendered}
			if err != nil {
				line.Line, line.Error = bt.line, err.Error()
			} else {
				line.Match = &resp.Match
			}
			if line.Results == nil {
				line.Results = []engine.Result{}
			}
			b, _ := json.Marshal(line)
			w.Write(append(b, '\n'))
			continue
		}
		switch {
		case err != nil:
			// stdout is flushed first, so that a terminal shows the report in its place.
			w.Flush()
			id := ""
			if t.RawID != nil {
				id = fmt.Sprintf(" (id %s)", t.RawID)
			}
			fmt.Fprintf(c.stderr, "caskg query: %s:%d%s: %v\n", name, bt.line, id, err)
		case rf.on:
			fmt.Fprintf(w, "== %s\n", t.ID)
			fmt.Fprint(w, resp.Rendered)
		default:
			fmt.Fprintf(w, "== %s\n", t.ID)
			printResults(w, eng, t.Query, resp, q.noGraph)
		}
	}
	if failed > 0 {
		return fmt.Errorf("--batch %s: %d of %d tasks failed", name, failed, len(tasks))
	}
	return nil
}

// stdin is where --batch - reads from; tests replace it.
var stdin io.Reader = os.Stdin

// printResults prints a ranked bundle for people, and the engine's note when it has one.
func printResults(w io.Writer, eng *engine.Engine, query string, resp engine.Response, noGraph bool) {
	g := eng.Graph()
	res := resp.Results
	fmt.Fprintf(w, "%s for %q (match %.2f)\n", countOf(len(res), "skill"), clipText(query, 80), resp.Match)
	if resp.Note != "" {
		fmt.Fprintf(w, "Note: %s.\n", resp.Note)
	}
	for i, r := range res {
		tag := engine.Why(r)
		fmt.Fprintf(w, "%2d. %s %.4f  %s\n", i+1, padWidth(r.Name, 40), r.Score, tag)
		fmt.Fprintf(w, "    %s\n", clipText(g.Description(r.ID), 110))
		for _, v := range r.Via {
			fmt.Fprintf(w, "    ↳ %s %s (%s %s edge, w=%.2f)\n", relationWords(v.Type, v.Reverse), v.From, v.State, v.Type, v.Weight)
		}
		if r.Recalled != nil {
			fmt.Fprintf(w, "    ↳ %s\n", clipText(r.Recalled.Evidence(), 110))
		}
	}
}

// relationWords says how a result relates to the skill an edge of type rel brought it in
// from. Dependency and workflow edges have a direction: the result comes after the other skill,
// or (reverse) is needed by it or comes before it. Semantic and alternative edges are
// symmetric, so their words have none.
func relationWords(rel string, reverse bool) string {
	switch {
	case rel == graphs.Semantic.String():
		return "similar to"
	case rel == graphs.Alternative.String():
		return "alternative to"
	case !reverse:
		return "after"
	case rel == graphs.Workflow.String():
		return "before"
	default:
		return "needed by"
	}
}

// clipText shortens s to n runes on one line.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// countOf is n and the noun, plural but for 1: "1 skill", "8 skills".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// padWidth pads s with spaces to n columns of a terminal: a wide character (CJK, full-width
// forms) takes two, so that the columns after a name in Chinese, Japanese or Korean line up.
func padWidth(s string, n int) string {
	w := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			w += 2
		default:
			w++
		}
	}
	if w >= n {
		return s
	}
	return s + strings.Repeat(" ", n-w)
}
