package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/native/oracle"
	"github.com/caskg/caskg/wasm/engine"
)

// Kinds of rows in a comparison.
const (
	kindVariant   = "variant"   // a build, retrieved with its graph
	kindBaseline  = "baseline"  // the seeds alone, no graph (--no-graph on the default artifact)
	kindChannel   = "channel"   // one seed channel alone: the per-channel ablation
	kindReference = "reference" // the whole library handed to the agent
)

// Names of the rows every comparison has (the oracle rows are named by oracleRow).
const (
	rowNoGraph    = "no graph"
	rowDefault    = "default"
	rowTraces     = "default + traces"
	rowPublishAll = "publish-all"
	rowLexical    = "lexical seeds"
	rowVector     = "vector seeds"
	rowWhole      = "whole library"
)

// oracleRow names the build probed by the oracle at an error rate.
func oracleRow(rate float64) string { return "oracle, error " + strconv.FormatFloat(rate, 'g', -1, 64) }

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
	// BuildSeconds is the wall-clock time of a variant's build, learning the builtin model
	// included. It is the one figure that is not deterministic: tables keep it apart.
	BuildSeconds float64 `json:"build_seconds,omitempty"`
}

// Roles of a dev set in the evaluation discipline (EVALUATION.md).
const (
	roleTuning = "tuning" // defaults may be chosen looking at its figures
	roleCheck  = "check"  // reported only, never tuned on
)

// compareResult is one comparison: what was compared, the command that reproduces it, and
// the rows. It is what eval --compare --json writes and eval --report reads.
type compareResult struct {
	Title        string       `json:"title"`
	Label        string       `json:"label"`
	Role         string       `json:"role,omitempty"`
	Command      string       `json:"command"`
	Libraries    []string     `json:"libraries"`
	Tasks        string       `json:"tasks"`
	NumTasks     int          `json:"num_tasks"`
	Skills       int          `json:"skills"`
	GoldEdges    string       `json:"gold_edges,omitempty"`
	Traces       string       `json:"traces,omitempty"`
	OracleErrors []float64    `json:"oracle_errors,omitempty"`
	OracleSeed   uint64       `json:"oracle_seed,omitempty"`
	Budget       int          `json:"budget"`
	Ks           []int        `json:"ks"`
	Rows         []compareRow `json:"rows"`
}

// compareK is the cutoff of nDCG, MRR's "in the bundle", prerequisite coverage and the bundle
// whose characters are counted: the top 10, as DESIGN §7 measures.
const compareK = 10

// compareSetup is what a comparison builds besides the default artifact and publish-all.
type compareSetup struct {
	traces       []build.Trace   // non-nil: a default + traces build
	gold         []eval.GoldEdge // non-nil: edge scores, and the oracle's answers
	oracleErrors []float64       // with gold: one build probed by the oracle per error rate
	oracleSeed   uint64
}

// compare builds the library as the setup asks (default, default + traces, publish-all, the
// oracle builds) and scores them, the seeds alone, each seed channel alone and the whole
// library on tasks.
func compare(libs []string, tasks []eval.Task, opt build.Options, setup compareSetup, ks []int) ([]compareRow, int, error) {
	lib, err := ingest.Load(libs...)
	if err != nil {
		return nil, 0, err
	}
	if len(lib.Skills) == 0 {
		return nil, 0, fmt.Errorf("no skills in %s", strings.Join(libs, " "))
	}
	start := time.Now()
	emb, err := build.BuiltinEmbedder(lib.Skills)
	if err != nil {
		return nil, 0, err
	}
	learn := time.Since(start).Seconds()
	opt.Embedder = emb
	type spec struct {
		name string
		opt  build.Options
	}
	specs := []spec{{rowDefault, opt}}
	if setup.traces != nil {
		o := opt
		o.Traces = setup.traces
		specs = append(specs, spec{rowTraces, o})
	}
	pa := opt
	pa.Variant = build.VariantPublishAll
	specs = append(specs, spec{rowPublishAll, pa})
	if setup.gold != nil {
		for _, rate := range setup.oracleErrors {
			p, err := oracle.New(setup.gold, oracle.Options{ErrorRate: rate, Seed: setup.oracleSeed})
			if err != nil {
				return nil, 0, err
			}
			o := opt
			o.Prober = p
			if o.Budget == build.BudgetAuto { // free, like the contract prober: every candidate
				o.Budget = 0
			}
			specs = append(specs, spec{oracleRow(rate), o})
		}
	}
	var builds []compareRow
	var defaultGraph *graphs.Graph
	for _, s := range specs {
		data, rep, err := build.BuildContext(context.Background(), lib.Skills, s.opt)
		if err != nil {
			return nil, 0, fmt.Errorf("build %s: %w", s.name, err)
		}
		g, err := graphs.Decode(data)
		if err != nil {
			return nil, 0, err
		}
		if s.name == rowDefault {
			defaultGraph = g
		}
		row, err := scoreRun(s.name, engine.New(g), tasks, ks, engine.Request{})
		if err != nil {
			return nil, 0, err
		}
		row.Kind, row.Published, row.BuildSeconds = kindVariant, g.NumEdges(), learn+rep.TotalSeconds
		if setup.gold != nil {
			row.Edges = scoreEdges(g, setup.gold)
		}
		builds = append(builds, row)
	}
	// The seeds do not depend on the graph: the seed rows run on the default artifact.
	eng := engine.New(defaultGraph)
	var rows []compareRow
	for _, base := range []struct {
		name, kind string
		req        engine.Request
	}{
		{rowNoGraph, kindBaseline, engine.Request{NoGraph: true}},
		{rowLexical, kindChannel, engine.Request{NoGraph: true, NoSemantic: true}},
		{rowVector, kindChannel, engine.Request{NoGraph: true, NoLexical: true}},
	} {
		row, err := scoreRun(base.name, eng, tasks, ks, base.req)
		if err != nil {
			return nil, 0, err
		}
		row.Kind = base.kind
		rows = append(rows, row)
	}
	// Table order: the seeds alone, then the builds, then the channels and the reference.
	rows = append(append([]compareRow{rows[0]}, builds...), rows[1:]...)
	rows = append(rows, wholeLibrary(defaultGraph, tasks, ks))
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
	row := compareRow{Name: rowWhole, Kind: kindReference}
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

// header is the heading of a comparison: what was compared, the set's role and the command
// that reproduces it.
func (r *compareResult) header(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", r.Title)
	fmt.Fprintf(w, "%d tasks, %d skills", r.NumTasks, r.Skills)
	switch r.Role {
	case roleTuning:
		fmt.Fprint(w, "; a tuning set")
	case roleCheck:
		fmt.Fprint(w, "; a check set (never tuned on)")
	}
	if r.Traces != "" {
		fmt.Fprintf(w, "; traces `%s`", r.Traces)
	}
	if r.GoldEdges != "" {
		fmt.Fprintf(w, "; gold edges `%s`", r.GoldEdges)
		for _, row := range r.Rows {
			if s := row.Edges["all"]; s != nil {
				fmt.Fprintf(w, " (%d between skills of the library)", s.Gold)
				break
			}
		}
	}
	if len(r.OracleErrors) > 0 {
		fmt.Fprintf(w, "; oracle seed %d", r.OracleSeed)
	}
	fmt.Fprintf(w, "; frontier: %s. Rerun:\n\n```sh\n%s\n```\n\n", budgetText(r.Budget), r.Command)
}

// rowsOf returns the rows of the given kinds, in order.
func (r *compareResult) rowsOf(kinds ...string) []compareRow {
	var out []compareRow
	for _, row := range r.Rows {
		if slices.Contains(kinds, row.Kind) {
			out = append(out, row)
		}
	}
	return out
}

// writeMarkdown prints the comparison as Markdown: the retrieval table of the builds, the
// seeds alone and the whole library; with gold edges, the edge table by state; and the
// per-channel ablation of the seeds. Everything it prints is deterministic (build times are
// left to writeTimes).
func (r *compareResult) writeMarkdown(w io.Writer) {
	r.header(w)
	head := append(r.metricHead(), "edges")
	if r.GoldEdges != "" {
		head = append(head, "edge precision", "edge recall")
	}
	var rows [][]string
	for _, row := range r.rowsOf(kindBaseline, kindVariant, kindReference) {
		cells := append([]string{rowLabel(row)}, r.metricCells(row)...)
		edges := "—"
		if row.Kind == kindVariant {
			edges = fmt.Sprint(row.Published)
		}
		cells = append(cells, edges)
		if r.GoldEdges != "" {
			p, rc := "—", "—"
			if s := row.Edges["all"]; s != nil {
				p, rc = f3(s.Precision), f3(s.Recall)
			}
			cells = append(cells, p, rc)
		}
		rows = append(rows, cells)
	}
	writeTable(w, head, rows)
	if r.GoldEdges != "" {
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
					name = rowLabel(row)
				}
				erows = append(erows, []string{name, st, fmt.Sprint(s.Published), fmt.Sprint(s.Hits),
					f3(s.Precision), f3(s.Recall), f3(s.F1)})
			}
		}
		writeTable(w, []string{"build", "state", "edges", "gold hits", "precision", "recall", "F1"}, erows)
	}
	channels := r.rowsOf(kindChannel)
	if len(channels) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPer-channel ablation: the seeds alone, one channel at a time and fused.")
	fmt.Fprintln(w)
	var crows [][]string
	for _, row := range append(channels, r.rowsOf(kindBaseline)...) {
		crows = append(crows, append([]string{rowLabel(row)}, r.metricCells(row)...))
	}
	writeTable(w, r.metricHead(), crows)
}

// metricHead is the heading of metricCells, after a "build" column.
func (r *compareResult) metricHead() []string {
	head := []string{"build"}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("R@%d", k))
	}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("COMP@%d", k))
	}
	return append(head, "nDCG@10", "MRR main", "prereq. cov.", "bundle chars")
}

// metricCells are a row's R@k, COMP@k, nDCG@10, MRR main, prerequisite coverage and bundle
// characters.
func (r *compareResult) metricCells(row compareRow) []string {
	var cells []string
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
	return append(cells, ndcg, optF3(row.MRR), optF3(row.Coverage), fmt.Sprintf("%.0f", row.Chars))
}

// writeTimes prints the build times of the comparison's builds: wall clock, not deterministic.
func (r *compareResult) writeTimes(w io.Writer) {
	var rows [][]string
	for _, row := range r.rowsOf(kindVariant) {
		rows = append(rows, []string{rowLabel(row), fmt.Sprintf("%.2f", row.BuildSeconds)})
	}
	fmt.Fprintln(w, "\nBuild times (wall clock, learning the builtin model included; they vary from run to run):")
	fmt.Fprintln(w)
	writeTable(w, []string{"build", "seconds"}, rows)
}

// rowLabel names a row in tables.
func rowLabel(row compareRow) string {
	switch {
	case row.Kind == kindBaseline:
		return "no graph (seeds alone)"
	case row.Kind == kindChannel && row.Name == rowLexical:
		return "lexical seeds (BM25 + fuzzy names)"
	case row.Kind == kindChannel && row.Name == rowVector:
		return "vector seeds (builtin model)"
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

// budgetText says what a frontier budget means for a build with a free prober (contract or
// oracle).
func budgetText(b int) string {
	switch b {
	case build.BudgetAuto, 0:
		return "every candidate probed"
	}
	return fmt.Sprintf("the %d highest-A candidates probed", b)
}
