package harness

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
)

// WriteMarkdown prints the comparison as Markdown under a heading that names the set, its role
// and the command that reproduces it: the retrieval table of the builds, the seeds alone and
// the whole library; with gold edges, the edge table by state; and the per-channel ablation of
// the seeds. Everything it prints is deterministic (build times are left to WriteTimes).
func (r *Result) WriteMarkdown(w io.Writer) {
	r.header(w)
	head := append(r.metricHead(), "edges")
	if r.GoldEdges != "" {
		head = append(head, "edge precision", "edge recall")
	}
	var rows [][]string
	for _, row := range r.rowsOf(kindBaseline, KindVariant, kindReference) {
		cells := append([]string{rowLabel(row)}, r.metricCells(row)...)
		edges := "—"
		if row.Kind == KindVariant {
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

// WriteTimes prints the build times of the comparison's builds: wall clock, not deterministic.
func (r *Result) WriteTimes(w io.Writer) {
	var rows [][]string
	for _, row := range r.rowsOf(KindVariant) {
		rows = append(rows, []string{rowLabel(row), fmt.Sprintf("%.2f", row.BuildSeconds)})
	}
	fmt.Fprintln(w, "\nBuild times (wall clock, learning the builtin model included; they vary from run to run):")
	fmt.Fprintln(w)
	writeTable(w, []string{"build", "seconds"}, rows)
}

// header is the heading of a comparison: what was compared, the set's role and the command
// that reproduces it.
func (r *Result) header(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", r.Title)
	fmt.Fprintf(w, "%d tasks, %d skills", r.NumTasks, r.Skills)
	switch r.Role {
	case RoleTuning:
		fmt.Fprint(w, "; a tuning set")
	case RoleCheck:
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
func (r *Result) rowsOf(kinds ...string) []Row {
	var out []Row
	for _, row := range r.Rows {
		if slices.Contains(kinds, row.Kind) {
			out = append(out, row)
		}
	}
	return out
}

// metricHead is the heading of metricCells, after a "build" column.
func (r *Result) metricHead() []string {
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
func (r *Result) metricCells(row Row) []string {
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

// rowLabel names a row in tables.
func rowLabel(row Row) string {
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
	case builder.BudgetAuto, 0:
		return "every candidate probed"
	}
	return fmt.Sprintf("the %d highest-A candidates probed", b)
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
