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

func (q *queryFlags) request(text string) engine.Request {
	return engine.Request{Query: text, K: q.k, Seeds: q.seeds, Gamma: q.gamma, NoGraph: q.noGraph}
}

// batchLine is one line of --batch output.
type batchLine struct {
	ID      json.RawMessage `json:"id"` // echoed as given: a number stays a number
	Results []engine.Result `json:"results"`
	Error   string          `json:"error,omitempty"`
}

func runQuery(c *ctx, args []string) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	var q queryFlags
	q.register(fs, engine.DefaultK)
	jsonOut := fs.Bool("json", false, "print JSON instead of text")
	batch := fs.String("batch", "", "answer every line {\"id\", \"query\"} of a JSONL `file` (- for stdin)")
	pos, err := parse(c, fs, args, "ARTIFACT \"task text\" [-k 8] [--json] | ARTIFACT --batch TASKS.jsonl [--json]")
	if err != nil {
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
		return queryBatch(c, eng, &q, *batch, *jsonOut)
	}
	if len(pos) < 2 {
		return usagef("no task text given")
	}
	text := strings.Join(pos[1:], " ")
	resp, err := eng.Query(q.request(text))
	if err != nil {
		return err
	}
	if *jsonOut {
		b, _ := json.Marshal(resp)
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	printResults(c.stdout, eng, text, resp.Results, q.noGraph)
	return nil
}

func queryBatch(c *ctx, eng *engine.Engine, q *queryFlags, path string, jsonOut bool) error {
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
	w := bufio.NewWriter(c.stdout)
	defer w.Flush()
	for _, t := range tasks {
		resp, err := eng.Query(q.request(t.Query))
		if !jsonOut {
			fmt.Fprintf(w, "== %s\n", t.ID)
			if err != nil {
				fmt.Fprintf(w, "error: %v\n", err)
				continue
			}
			printResults(w, eng, t.Query, resp.Results, q.noGraph)
			continue
		}
		line := batchLine{ID: t.RawID, Results: resp.Results}
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
