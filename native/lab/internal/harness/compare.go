package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/lab/internal/oracle"
	"github.com/caskg/caskg/wasm/engine"
)

// Spec is one comparison: the library, the tasks it is scored on and what it is built with
// besides the default artifact and publish-all. The caller reads the input files; the *File
// fields only name them in the result.
type Spec struct {
	Libraries []string    // paths for ingest.Load
	Tasks     []eval.Task // the tasks every row is scored on
	Ks        []int       // cutoffs of R@k and COMP@k, ascending
	// Options are the default build's; the other builds vary them. Compare sets the embedder
	// to the builtin model learned from the library, and records Options.Budget.
	Options builder.Options
	// Traces, when non-nil, adds a default + traces build.
	Traces []builder.Trace
	// Gold, when non-nil, scores every build's edges and lets OracleErrors add, per error rate,
	// a build probed by the oracle answering from Gold, its wrong answers picked by OracleSeed.
	Gold         []eval.GoldEdge
	OracleErrors []float64
	OracleSeed   uint64
	// Title heads the result's tables (default: the libraries on the task file); Label names it
	// in the summaries (default: the title); Role is RoleTuning, RoleCheck or "" (not
	// classified); Command is the command line that reproduces the comparison.
	Title, Label, Role, Command     string
	TasksFile, GoldFile, TracesFile string
}

// Compare builds the library as the spec asks and scores the builds, the seeds alone, each
// seed channel alone and the whole library on the tasks. Every figure of the result but the
// build times is the same in every run.
func Compare(ctx context.Context, s Spec) (*Result, error) {
	switch {
	case len(s.Ks) == 0 || !slices.IsSorted(s.Ks) || s.Ks[0] < 1:
		return nil, fmt.Errorf("harness: cutoffs %v are not ascending and positive", s.Ks)
	case len(s.OracleErrors) > 0 && s.Gold == nil:
		return nil, errors.New("harness: oracle error rates need gold edges: the oracle answers from them")
	case !validRole(s.Role):
		return nil, fmt.Errorf("harness: role %q is not %s or %s", s.Role, RoleTuning, RoleCheck)
	}
	rows, skills, err := compare(ctx, s)
	if err != nil {
		return nil, err
	}
	res := &Result{Title: s.Title, Label: s.Label, Role: s.Role, Command: s.Command, Libraries: s.Libraries,
		Tasks: s.TasksFile, NumTasks: len(s.Tasks), Skills: skills, GoldEdges: s.GoldFile, Traces: s.TracesFile,
		OracleErrors: s.OracleErrors, Budget: s.Options.Budget, Ks: s.Ks, Rows: rows}
	if len(s.OracleErrors) > 0 {
		res.OracleSeed = s.OracleSeed
	}
	if res.Title == "" {
		res.Title = fmt.Sprintf("%s on %s", strings.Join(s.Libraries, " "), s.TasksFile)
	}
	if res.Label == "" {
		res.Label = res.Title
	}
	return res, nil
}

// compare builds the library as the spec asks (default, default + traces, publish-all, the
// oracle builds) and scores them, the seeds alone, each seed channel alone and the whole
// library; it returns the rows in table order and the number of skills.
func compare(ctx context.Context, s Spec) ([]Row, int, error) {
	lib, err := ingest.Load(s.Libraries...)
	if err != nil {
		return nil, 0, err
	}
	if len(lib.Skills) == 0 {
		return nil, 0, fmt.Errorf("no skills in %s", strings.Join(s.Libraries, " "))
	}
	start := time.Now()
	// The builtin model caskg build learns, learnt once for every build of the comparison
	// rather than by each (Input.Embedder): its time is counted in each build's.
	emb, err := builder.BuiltinEmbedder(lib.Skills)
	if err != nil {
		return nil, 0, err
	}
	learn := time.Since(start).Seconds()
	opt := s.Options
	opt.Embedder = emb
	type spec struct {
		name string
		opt  builder.Options
		runs []builder.Trace
	}
	specs := []spec{{RowDefault, opt, nil}}
	if s.Traces != nil {
		specs = append(specs, spec{RowTraces, opt, s.Traces})
	}
	pa := opt
	pa.Variant = builder.VariantPublishAll
	specs = append(specs, spec{rowPublishAll, pa, nil})
	if s.Gold != nil {
		for _, rate := range s.OracleErrors {
			p, err := oracle.New(s.Gold, oracle.Options{ErrorRate: rate, Seed: s.OracleSeed})
			if err != nil {
				return nil, 0, err
			}
			o := opt
			o.Prober = p
			if o.Budget == builder.BudgetAuto { // free, like the contract prober: every candidate
				o.Budget = 0
			}
			specs = append(specs, spec{oracleRow(rate), o, nil})
		}
	}
	var builds []Row
	var defaultGraph *graphs.Graph
	for _, b := range specs {
		res, err := builder.Build(ctx, builder.Input{Skills: lib.Skills, Options: &b.opt, Runs: b.runs})
		if err != nil {
			return nil, 0, fmt.Errorf("build %s: %w", b.name, err)
		}
		rep := res.Report
		g, err := graphs.Decode(res.Artifact)
		if err != nil {
			return nil, 0, err
		}
		if b.name == RowDefault {
			defaultGraph = g
		}
		row, err := scoreRun(b.name, engine.New(g), s.Tasks, s.Ks, engine.Request{})
		if err != nil {
			return nil, 0, err
		}
		row.Kind, row.Published, row.BuildSeconds = KindVariant, g.NumEdges(), learn+rep.TotalSeconds
		if s.Gold != nil {
			row.Edges = eval.ScoreGraphEdges(g, s.Gold)
		}
		builds = append(builds, row)
	}
	// The seeds do not depend on the graph: the seed rows run on the default artifact.
	eng := engine.New(defaultGraph)
	var rows []Row
	for _, base := range []struct {
		name, kind string
		req        engine.Request
	}{
		{rowNoGraph, kindBaseline, engine.Request{NoGraph: true}},
		{rowLexical, kindChannel, engine.Request{NoGraph: true, NoSemantic: true}},
		{rowVector, kindChannel, engine.Request{NoGraph: true, NoLexical: true}},
	} {
		row, err := scoreRun(base.name, eng, s.Tasks, s.Ks, base.req)
		if err != nil {
			return nil, 0, err
		}
		row.Kind = base.kind
		rows = append(rows, row)
	}
	// Table order: the seeds alone, then the builds, then the channels and the reference.
	rows = append(append([]Row{rows[0]}, builds...), rows[1:]...)
	rows = append(rows, wholeLibrary(defaultGraph, s.Tasks, s.Ks))
	return rows, len(lib.Skills), nil
}

// scoreRun answers every task with req's options and averages the metrics. The bundle is the
// engine's rendered text of the top cutoff skills at the default budgets.
func scoreRun(name string, eng *engine.Engine, tasks []eval.Task, ks []int, req engine.Request) (Row, error) {
	row := Row{Name: name}
	var all []eval.Scores
	var mrr, cov float64
	var mainN, covN int
	for _, t := range tasks {
		r := req
		r.Query, r.K = t.Query, max(ks[len(ks)-1], cutoff)
		resp, err := eng.Query(r)
		if err != nil {
			return row, fmt.Errorf("%s: task %s (line %d): %w", name, t.ID, t.Line, err)
		}
		names := make([]string, len(resp.Results))
		for i, x := range resp.Results {
			names[i] = x.Name
		}
		all = append(all, eval.Score(names, t.Gold, ks))
		r.K, r.Render = cutoff, true
		bundle, err := eng.Query(r)
		if err != nil {
			return row, fmt.Errorf("%s: task %s (line %d): %w", name, t.ID, t.Line, err)
		}
		row.Chars += float64(utf8.RuneCountInString(bundle.Rendered))
		if t.Main != "" {
			m := eval.ScoreMain(names, t.Gold, t.Main, cutoff)
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
func wholeLibrary(g *graphs.Graph, tasks []eval.Task, ks []int) Row {
	row := Row{Name: rowWhole, Kind: kindReference}
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
