package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// Kinds of rows in a comparison.
const (
	kindVariant   = "variant"   // a build variant of the pipeline, retrieved with the graph
	kindBaseline  = "baseline"  // seeds alone, no graph
	kindReference = "reference" // the whole library handed to the agent
)

// compareRow is one line of the comparison table.
type compareRow struct {
	Name    string       `json:"name"`
	Kind    string       `json:"kind"`
	Summary eval.Summary `json:"summary"`
	// MRR of the main skill and prerequisite coverage, averaged over the tasks that name a
	// main skill (and, for coverage, have other gold skills); nil when no task does.
	MRR      *float64 `json:"mrr_main,omitempty"`
	Coverage *float64 `json:"prerequisite_coverage,omitempty"`
	Chars    float64  `json:"mean_bundle_chars"`
	// Edges scores the published graph against gold edges: "all" and one entry per state.
	Edges map[string]*eval.EdgeScores `json:"edges,omitempty"`
	// Published is the number of published edges of a variant.
	Published int `json:"published_edges,omitempty"`
}

// compareResult is one comparison: what was compared, the command that reproduces it, and
// the rows. It is what eval --compare --json writes and eval --report reads.
type compareResult struct {
	Title     string       `json:"title"`
	Label     string       `json:"label"`
	Command   string       `json:"command"`
	Libraries []string     `json:"libraries"`
	Tasks     string       `json:"tasks"`
	NumTasks  int          `json:"num_tasks"`
	Skills    int          `json:"skills"`
	GoldEdges string       `json:"gold_edges,omitempty"`
	Traces    string       `json:"traces,omitempty"`
	Budget    int          `json:"budget"`
	Ks        []int        `json:"ks"`
	Rows      []compareRow `json:"rows"`
}

// compareK is the cutoff of nDCG, MRR's "in the bundle", prerequisite coverage and the bundle
// whose characters are counted: the top 10, as DESIGN §7 measures.
const compareK = 10

// compare builds every variant of the library and scores them and the seed baselines on tasks.
func compare(libs []string, tasks []eval.Task, gold []eval.GoldEdge, opt build.Options, ks []int) ([]compareRow, int, error) {
	lib, err := ingest.Load(libs...)
	if err != nil {
		return nil, 0, err
	}
	if len(lib.Skills) == 0 {
		return nil, 0, fmt.Errorf("no skills in %s", strings.Join(libs, " "))
	}
	emb, err := build.BuiltinEmbedder(lib.Skills)
	if err != nil {
		return nil, 0, err
	}
	opt.Embedder = emb
	var rows []compareRow
	var fullGraph *graphs.Graph
	for _, v := range build.Variants {
		o := opt
		o.Variant = v
		data, _, err := build.BuildContext(context.Background(), lib.Skills, o)
		if err != nil {
			return nil, 0, fmt.Errorf("variant %s: %w", v, err)
		}
		g, err := graphs.Decode(data)
		if err != nil {
			return nil, 0, err
		}
		if v == build.VariantFull {
			fullGraph = g
		}
		row, err := scoreRun(v, engine.New(g), tasks, ks, engine.Request{})
		if err != nil {
			return nil, 0, err
		}
		row.Kind, row.Published = kindVariant, g.NumEdges()
		if gold != nil {
			row.Edges = scoreEdges(g, gold)
		}
		rows = append(rows, row)
	}
	// The seeds do not depend on the graph: the baselines run on the full artifact.
	eng := engine.New(fullGraph)
	for _, base := range []struct {
		name string
		req  engine.Request
	}{
		{"lexical seeds", engine.Request{NoGraph: true, NoSemantic: true}},
		{"vector seeds", engine.Request{NoGraph: true, NoLexical: true}},
		{"lexical + vector seeds", engine.Request{NoGraph: true}},
	} {
		row, err := scoreRun(base.name, eng, tasks, ks, base.req)
		if err != nil {
			return nil, 0, err
		}
		row.Kind = kindBaseline
		rows = append(rows, row)
	}
	rows = append(rows, wholeLibrary(fullGraph, tasks, ks))
	return rows, len(lib.Skills), nil
}

// scoreRun answers every task with req's options and averages the metrics. The bundle is the
// engine's rendered text of the top compareK skills at the default budgets.
func scoreRun(name string, eng *engine.Engine, tasks []eval.Task, ks []int, req engine.Request) (compareRow, error) {
	row := compareRow{Name: name}
	var all []eval.Scores
	var mrr, cov float64
	var mainN, covN int
	for _, t := range tasks {
		r := req
		r.Query, r.K = t.Query, max(ks[len(ks)-1], compareK)
		resp, err := eng.Query(r)
		if err != nil {
			return row, fmt.Errorf("%s: task %s (line %d): %w", name, t.ID, t.Line, err)
		}
		names := make([]string, len(resp.Results))
		for i, x := range resp.Results {
			names[i] = x.Name
		}
		all = append(all, eval.Score(names, t.Gold, ks))
		r.K, r.Render = compareK, true
		bundle, err := eng.Query(r)
		if err != nil {
			return row, fmt.Errorf("%s: task %s (line %d): %w", name, t.ID, t.Line, err)
		}
		row.Chars += float64(utf8.RuneCountInString(bundle.Rendered))
		if t.Main != "" {
			m := eval.ScoreMain(names, t.Gold, t.Main, compareK)
			mrr += m.RR
			mainN++
			if m.HasPrereq {
				cov += m.Coverage
				covN++
			}
		}
	}
	row.Summary = eval.Summarize(all, ks)
	row.Chars /= float64(max(1, len(tasks)))
	row.MRR, row.Coverage = mean(mrr, mainN), mean(cov, covN)
	return row, nil
}

// mean is sum/n, nil when n is 0.
func mean(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}

// wholeLibrary is the reference of handing the agent every skill: every gold skill the library
// has is in the bundle, at any cutoff, and the bundle is the text of the whole library (each
// skill's name, description and the body head the artifact stores). There is no ranking, so
// nDCG and MRR do not apply.
func wholeLibrary(g *graphs.Graph, tasks []eval.Task, ks []int) compareRow {
	row := compareRow{Name: "whole library", Kind: kindReference}
	var names []string
	for i := range g.NumSkills() {
		names = append(names, g.Name(i))
		row.Chars += float64(utf8.RuneCountInString(g.Name(i)) + utf8.RuneCountInString(g.Description(i)) +
			utf8.RuneCountInString(g.Body(i)))
	}
	n := len(names)
	var all []eval.Scores
	var cov float64
	var covN int
	for _, t := range tasks {
		// The library is one bundle: every cutoff sees all of it.
		s := eval.Score(names, t.Gold, []int{n})
		at := eval.Scores{Recall: map[int]float64{}, Complete: map[int]bool{}}
		for _, k := range ks {
			at.Recall[k], at.Complete[k] = s.Recall[n], s.Complete[n]
		}
		all = append(all, at)
		if t.Main != "" {
			if m := eval.ScoreMain(names, t.Gold, t.Main, n); m.HasPrereq {
				cov += m.Coverage
				covN++
			}
		}
	}
	row.Summary = eval.Summarize(all, ks)
	row.Summary.NDCG10 = 0
	row.Coverage = mean(cov, covN)
	return row
}

// f3 formats a metric with three decimals.
func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

// optF3 formats an optional metric, "—" when it does not apply.
func optF3(x *float64) string {
	if x == nil {
		return "—"
	}
	return f3(*x)
}

// header is the heading line of a comparison: what was compared and the command that
// reproduces it.
func (r *compareResult) header(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", r.Title)
	fmt.Fprintf(w, "%d tasks, %d skills", r.NumTasks, r.Skills)
	if r.Traces != "" {
		fmt.Fprintf(w, ", traces `%s`", r.Traces)
	}
	if r.GoldEdges != "" {
		fmt.Fprintf(w, ", gold edges `%s`", r.GoldEdges)
		for _, row := range r.Rows {
			if s := row.Edges["all"]; s != nil {
				fmt.Fprintf(w, " (%d between skills of the library)", s.Gold)
				break
			}
		}
	}
	fmt.Fprintf(w, "; frontier: %s. Rerun:\n\n```sh\n%s\n```\n\n", budgetText(r.Budget), r.Command)
}

// writeMarkdown prints the comparison as Markdown: the retrieval table and, with gold edges,
// the edge table by state.
func (r *compareResult) writeMarkdown(w io.Writer) {
	r.header(w)
	head := []string{"build"}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("R@%d", k))
	}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("COMP@%d", k))
	}
	head = append(head, "nDCG@10", "MRR main", "prereq. cov.", "bundle chars")
	var rows [][]string
	for _, row := range r.Rows {
		cells := []string{rowLabel(row)}
		for _, k := range r.Ks {
			cells = append(cells, f3(row.Summary.Recall[k]))
		}
		for _, k := range r.Ks {
			cells = append(cells, f3(row.Summary.Complete[k]))
		}
		ndcg := f3(row.Summary.NDCG10)
		if row.Kind == kindReference {
			ndcg = "—"
		}
		cells = append(cells, ndcg, optF3(row.MRR), optF3(row.Coverage), fmt.Sprintf("%.0f", row.Chars))
		rows = append(rows, cells)
	}
	writeTable(w, head, rows)
	if r.GoldEdges == "" {
		return
	}
	fmt.Fprintln(w)
	var erows [][]string
	for _, row := range r.Rows {
		if row.Edges == nil {
			continue
		}
		for _, st := range append([]string{"all"}, edgeStates()...) {
			s := row.Edges[st]
			if s == nil {
				continue
			}
			name := ""
			if st == "all" {
				name = "`" + row.Name + "`"
			}
			erows = append(erows, []string{name, st, fmt.Sprint(s.Published), fmt.Sprint(s.Hits),
				f3(s.Precision), f3(s.Recall), f3(s.F1)})
		}
	}
	writeTable(w, []string{"build", "state", "edges", "gold hits", "precision", "recall", "F1"}, erows)
}

// rowLabel names a row in tables: variants as code, baselines and the reference in words.
func rowLabel(row compareRow) string {
	switch row.Kind {
	case kindVariant:
		return "`" + row.Name + "`"
	case kindBaseline:
		return row.Name + " (no graph)"
	}
	return row.Name
}

// edgeStates lists the edge states in the artifact's order.
func edgeStates() []string {
	var out []string
	for _, s := range graphs.States() {
		out = append(out, s.String())
	}
	return out
}

// writeTable prints a Markdown table.
func writeTable(w io.Writer, head []string, rows [][]string) {
	rule := make([]string, len(head))
	for i := range rule {
		rule[i] = "---"
	}
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(rule, "|"))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
}

// budgetText says what a frontier budget means for a build with the contract prober.
func budgetText(b int) string {
	switch b {
	case build.BudgetAuto, 0:
		return "every candidate probed"
	}
	return fmt.Sprintf("the %d highest-A candidates probed", b)
}
