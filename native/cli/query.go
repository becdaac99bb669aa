package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/wasm/api"
	"github.com/caskg/caskg/wasm/engine"
)

// queryFlags are the retrieval options shared by query and eval.
type queryFlags struct {
	k, seeds int
	gamma    float64
	noGraph  bool
}

func (q *queryFlags) register(fs *flag.FlagSet, k int) {
	fs.IntVar(&q.k, "k", k, "number of skills to return")
	fs.IntVar(&q.seeds, "seeds", engine.DefaultSeeds, "number of seed skills PPR starts from")
	fs.Float64Var(&q.gamma, "gamma", engine.DefaultGamma, "PPR restart probability γ")
	fs.BoolVar(&q.noGraph, "no-graph", false, "rank by the seeds alone (the lexical baseline)")
}

// check holds -k and --seeds to the limits every surface shares (wasm/api); 0 means the
// engine's default, as in a request.
func (q *queryFlags) check() error {
	for _, f := range []struct {
		name  string
		v, hi int
	}{{"k", q.k, api.MaxK}, {"seeds", q.seeds, api.MaxSeeds}} {
		if f.v < 0 || f.v > f.hi {
			return usagef("flag -%s: %d is outside [1, %d]", f.name, f.v, f.hi)
		}
	}
	return nil
}

func (q *queryFlags) request(text string) engine.Request {
	return engine.Request{Query: text, K: q.k, Seeds: q.seeds, Gamma: q.gamma, NoGraph: q.noGraph}
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

// batchLine is one line of --batch output.
type batchLine struct {
	ID       json.RawMessage `json:"id"` // echoed as given: a number stays a number
	Results  []engine.Result `json:"results"`
	Rendered string          `json:"rendered,omitempty"`
	Error    string          `json:"error,omitempty"`
}

func runQuery(c *ctx, args []string) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, engine.DefaultK)
	jsonOut := fs.Bool("json", false, "print JSON instead of text")
	batch := fs.String("batch", "", "answer every line {\"id\", \"query\"} of a JSONL `file` (- for stdin)")
	var rf renderFlags
	rf.register(fs)
	pos, err := parse(c, fs, args, "ARTIFACT \"task text\" [-k 8] [--json] [--render [--skill-budget N] [--total-budget N]] | ARTIFACT --batch TASKS.jsonl [--json]")
	if err != nil {
		return err
	}
	if err := rf.check(fs); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
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
	if len(text) > api.MaxQueryBytes {
		return fmt.Errorf("the task text is %d bytes, at most %d", len(text), api.MaxQueryBytes)
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
	printResults(c.stdout, eng, text, resp.Results, q.noGraph)
	return nil
}

func queryBatch(c *ctx, eng *engine.Engine, q *queryFlags, rf *renderFlags, path string, jsonOut bool) error {
	var tasks []eval.Task
	var err error
	if path == "-" {
		tasks, err = readTasksFrom(c, "stdin")
	} else {
		tasks, err = eval.ReadTasks(path, false)
	}
	if err != nil {
		return err
	}
	if len(tasks) > api.MaxBatch {
		return fmt.Errorf("--batch %s: %d tasks, at most %d in one run; split the file", path, len(tasks), api.MaxBatch)
	}
	w := bufio.NewWriter(c.stdout)
	defer w.Flush()
	for _, t := range tasks {
		req := rf.apply(q.request(t.Query))
		var resp engine.Response
		err := api.CheckRequest(req)
		if err == nil {
			resp, err = eng.Query(req)
		}
		if !jsonOut {
			fmt.Fprintf(w, "== %s\n", t.ID)
			switch {
			case err != nil:
				fmt.Fprintf(w, "error: %v\n", err)
			case rf.on:
				fmt.Fprint(w, resp.Rendered)
			default:
				printResults(w, eng, t.Query, resp.Results, q.noGraph)
			}
			continue
		}
		line := batchLine{ID: t.RawID, Results: resp.Results, Rendered: resp.Rendered}
		if err != nil {
			line.Error = err.Error()
		}
		if line.Results == nil {
			line.Results = []engine.Result{}
		}
		b, _ := json.Marshal(line)
		w.Write(append(b, '\n'))
	}
	return nil
}

// stdin is where --batch - reads from; tests replace it.
var stdin io.Reader = os.Stdin

func readTasksFrom(c *ctx, name string) ([]eval.Task, error) {
	return eval.ParseTasks(stdin, name, false)
}

// printResults prints a ranked bundle for people.
func printResults(w io.Writer, eng *engine.Engine, query string, res []engine.Result, noGraph bool) {
	g := eng.Graph()
	fmt.Fprintf(w, "%d skills for %q\n", len(res), clipText(query, 80))
	for i, r := range res {
		tag := "via graph"
		if noGraph {
			tag = "lexical"
		}
		if r.SeedRank > 0 {
			tag = fmt.Sprintf("seed #%d", r.SeedRank)
		}
		fmt.Fprintf(w, "%2d. %-40s %.4f  %s\n", i+1, r.Name, r.Score, tag)
		fmt.Fprintf(w, "    %s\n", clipText(g.Description(r.ID), 110))
		for _, v := range r.Via {
			rel := "after"
			if v.Reverse {
				rel = "needed by"
			}
			fmt.Fprintf(w, "    ↳ %s %s (%s %s edge, w=%.2f)\n", rel, v.From, v.State, v.Type, v.Weight)
		}
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
