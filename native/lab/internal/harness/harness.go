// Package harness is caskg's evaluation harness. It scores one artifact on a task set; it
// compares the ways of building a library (default, default + traces, publish-all and builds
// probed by the evaluation-only oracle) with the seeds alone, each seed channel alone and the
// whole library; and it writes what it finds: the JSON result of a comparison, its Markdown
// tables, docs/evaluation-results.md and the README's results span.
//
// The metrics themselves are package eval's; the lab command caskg-lab parses flags and input
// files, calls the harness and prints. Everything the harness writes is deterministic except
// the build times, which the tables keep apart.
package harness

import (
	"strconv"

	"github.com/caskg/caskg/native/internal/eval"
)

// Kinds of rows in a comparison.
const (
	KindVariant   = "variant"   // a build, retrieved with its graph
	kindBaseline  = "baseline"  // the seeds alone, no graph (--no-graph on the default artifact)
	kindChannel   = "channel"   // one seed channel alone: the per-channel ablation
	kindReference = "reference" // the whole library handed to the agent
)

// Names of the rows every comparison has (the oracle rows are named by oracleRow).
const (
	rowNoGraph    = "no graph"
	RowDefault    = "default"
	RowTraces     = "default + traces"
	rowPublishAll = "publish-all"
	rowLexical    = "lexical seeds"
	rowVector     = "vector seeds"
	rowWhole      = "whole library"
)

// oracleRow names the build probed by the oracle at an error rate.
func oracleRow(rate float64) string { return "oracle, error " + strconv.FormatFloat(rate, 'g', -1, 64) }

// Roles of a dev set in the evaluation discipline (docs/evaluation-results.md).
const (
	RoleTuning = "tuning" // defaults may be chosen looking at its figures
	RoleCheck  = "check"  // reported only, never tuned on
)

// validRole reports whether role is a role or "" (not classified).
func validRole(role string) bool { return role == "" || role == RoleTuning || role == RoleCheck }

// Row is one line of a comparison.
type Row struct {
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

// Result is one comparison: what was compared, the command that reproduces it, and the rows.
// It is what caskg-lab compare --json writes and caskg-lab report reads.
type Result struct {
	Title        string    `json:"title"`
	Label        string    `json:"label"`
	Role         string    `json:"role,omitempty"`
	Command      string    `json:"command"`
	Libraries    []string  `json:"libraries"`
	Tasks        string    `json:"tasks"`
	NumTasks     int       `json:"num_tasks"`
	Skills       int       `json:"skills"`
	GoldEdges    string    `json:"gold_edges,omitempty"`
	Traces       string    `json:"traces,omitempty"`
	OracleErrors []float64 `json:"oracle_errors,omitempty"`
	OracleSeed   uint64    `json:"oracle_seed,omitempty"`
	Budget       int       `json:"budget"`
	Ks           []int     `json:"ks"`
	Rows         []Row     `json:"rows"`
}

// row returns the result's row of that name.
func (r *Result) row(name string) (Row, bool) {
	for _, row := range r.Rows {
		if row.Name == name {
			return row, true
		}
	}
	return Row{}, false
}

// cutoff is the k of nDCG, MRR's "in the bundle", prerequisite coverage, the bundle whose
// characters are counted and the summary's COMP@k: the top 10, the cut at which an agent's context is judged.
const cutoff = 10
