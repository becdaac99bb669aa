package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/embed"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// compareRow is one line of the comparison table.
type compareRow struct {
	Name     string                      `json:"name"`
	Summary  eval.Summary                `json:"summary"`
	MRR      float64                     `json:"mrr_main"`
	Coverage float64                     `json:"prerequisite_coverage"`
	Chars    float64                     `json:"mean_bundle_chars"`
	Edges    *eval.EdgeScores            `json:"edges,omitempty"`
	ByState  map[string]*eval.EdgeScores `json:"edges_by_state,omitempty"`
}

// Bundle budgets of DESIGN §4, for the mean bundle size.
const (
	bundleSkillChars = 2400
	bundleTotalChars = 12000
)

// compare builds every variant of the library and scores them and the seed baselines on tasks.
func compare(c *ctx, libs []string, tasks []eval.Task, gold []eval.GoldEdge, opt build.Options, ks []int) ([]compareRow, error) {
	lib, err := ingest.Load(libs...)
	if err != nil {
		return nil, err
	}
	sorted := append([]ingest.Skill(nil), lib.Skills...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	texts := make([]string, len(sorted))
	for i, s := range sorted {
		texts[i] = build.SkillText(s)
	}
	emb, err := embed.NewBuiltin(texts, embed.BuiltinOptions{})
	if err != nil {
		return nil, err
	}
	opt.Embedder = emb
	var rows []compareRow
	var fullGraph *graphs.Graph
	for _, v := range build.Variants {
		o := opt
		o.Variant = v
		data, _, err := build.BuildContext(context.Background(), lib.Skills, o)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", v, err)
		}
		g, err := graphs.Decode(data)
		if err != nil {
			return nil, err
		}
		if v == build.VariantFull {
			fullGraph = g
		}
		row, err := scoreRun(v, engine.New(g), tasks, ks, engine.Request{})
		if err != nil {
			return nil, err
		}
		if gold != nil {
			by := scoreEdges(g, gold)
			row.Edges, row.ByState = by["all"], by
			delete(row.ByState, "all")
		}
		rows = append(rows, row)
	}
	eng := engine.New(fullGraph)
	for _, base := range []struct {
		name string
		req  engine.Request
	}{
		{"lexical seeds (no graph)", engine.Request{NoGraph: true, NoSemantic: true}},
		{"vector seeds (no graph)", engine.Request{NoGraph: true, NoLexical: true}},
		{"lexical + vector seeds (no graph)", engine.Request{NoGraph: true}},
	} {
		row, err := scoreRun(base.name, eng, tasks, ks, base.req)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	rows = append(rows, wholeLibrary(fullGraph, tasks, ks))
	return rows, nil
}

// scoreRun answers every task with req's options and averages the metrics.
func scoreRun(name string, eng *engine.Engine, tasks []eval.Task, ks []int, req engine.Request) (compareRow, error) {
	row := compareRow{Name: name}
	g := eng.Graph()
	var all []eval.Scores
	var covN, mainN int
	for _, t := range tasks {
		r := req
		r.Query, r.K = t.Query, max(ks[len(ks)-1], 10)
		resp, err := eng.Query(r)
		if err != nil {
			return row, fmt.Errorf("%s: task %s: %w", name, t.ID, err)
		}
		names := make([]string, len(resp.Results))
		ids := make([]int, len(resp.Results))
		for i, x := range resp.Results {
			names[i], ids[i] = x.Name, x.ID
		}
		all = append(all, eval.Score(names, t.Gold, ks))
		row.Chars += bundleChars(g, ids[:min(10, len(ids))])
		if t.Main != "" {
			m := eval.ScoreMain(names, t.Gold, t.Main, 10)
			row.MRR += m.RR
			mainN++
			if m.HasPrereq {
				row.Coverage += m.Coverage
				covN++
			}
		}
	}
	row.Summary = eval.Summarize(all, ks)
	row.Chars /= float64(max(1, len(tasks)))
	if mainN > 0 {
		row.MRR /= float64(mainN)
	}
	if covN > 0 {
		row.Coverage /= float64(covN)
	}
	return row, nil
}

// bundleChars is the size of the rendered text of skills: each skill's description and body head
// up to the per-skill budget, all of them up to the total budget.
func bundleChars(g *graphs.Graph, ids []int) float64 {
	total := 0
	for _, i := range ids {
		n := len([]rune(g.Name(i))) + len([]rune(g.Description(i))) + len([]rune(g.Body(i)))
		total += min(n, bundleSkillChars)
	}
	return float64(min(total, bundleTotalChars))
}

// wholeLibrary is the reference of handing the agent every skill.
func wholeLibrary(g *graphs.Graph, tasks []eval.Task, ks []int) compareRow {
	row := compareRow{Name: "whole library"}
	var all []eval.Scores
	total := 0
	for i := range g.NumSkills() {
		total += len([]rune(g.Name(i))) + len([]rune(g.Description(i))) + len([]rune(g.Body(i)))
	}
	for _, t := range tasks {
		s := eval.Score(t.Gold, t.Gold, ks) // every gold skill is in the bundle
		all = append(all, s)
	}
	row.Summary = eval.Summarize(all, ks)
	row.MRR, row.Coverage, row.Chars = 1, 1, float64(total)
	return row
}

// writeCompareMarkdown prints the comparison as Markdown tables.
func writeCompareMarkdown(w io.Writer, title string, rows []compareRow, ks []int) {
	fmt.Fprintf(w, "### %s\n\n", title)
	var head, rule []string
	head = append(head, "build")
	for _, k := range ks {
		head = append(head, fmt.Sprintf("R@%d", k))
	}
	for _, k := range ks {
		head = append(head, fmt.Sprintf("COMP@%d", k))
	}
	head = append(head, "nDCG@10", "MRR main", "prereq. cov.", "bundle chars")
	for range head {
		rule = append(rule, "---")
	}
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(rule, "|"))
	for _, r := range rows {
		cells := []string{r.Name}
		for _, k := range ks {
			cells = append(cells, fmt.Sprintf("%.3f", r.Summary.Recall[k]))
		}
		for _, k := range ks {
			cells = append(cells, fmt.Sprintf("%.3f", r.Summary.Complete[k]))
		}
		cells = append(cells, fmt.Sprintf("%.3f", r.Summary.NDCG10), fmt.Sprintf("%.3f", r.MRR),
			fmt.Sprintf("%.3f", r.Coverage), fmt.Sprintf("%.0f", r.Chars))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	if rows[0].Edges == nil {
		return
	}
	fmt.Fprintln(w, "| build | edges | gold | precision | recall | F1 | by state: edges / precision |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		if r.Edges == nil {
			continue
		}
		var states []string
		for _, st := range graphs.States() {
			if s := r.ByState[st.String()]; s != nil {
				states = append(states, fmt.Sprintf("%s %d / %.3f", st, s.Published, s.Precision))
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.3f | %.3f | %.3f | %s |\n", r.Name, r.Edges.Published, r.Edges.Gold,
			r.Edges.Precision, r.Edges.Recall, r.Edges.F1, strings.Join(states, "; "))
	}
	fmt.Fprintln(w)
}
