package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/caskg/caskg/wasm/engine"
)

// TestExpandAliases expands texts with the builtin table and with one parsed from a file of
// rules, comments and blank lines.
func TestExpandAliases(t *testing.T) {
	type in struct{ table, text string }
	tables := map[string]aliasTable{
		"builtin": defaultAliases,
		"parsed":  parseAliases("# comment\naa, bb # trailing comment\ncc dd => ee, ff\n\n=> gg\nhh =>\n"),
	}
	expand := func(c in) string { return tables[c.table].expandAliases(c.text) }
	table.Run(t, "expandAliases", expand, []table.Case[in, string]{
		{"equivalent", in{"builtin", "Edit .xlsx files"}, "Edit .xlsx files\nexcel xls spreadsheet workbook sheet"},
		{"equivalent the other way", in{"builtin", "Open it in Excel"}, "Open it in Excel\nxlsx xls"},
		{"stemmed match", in{"builtin", "Deploy to Kubernetes clusters"}, "Deploy to Kubernetes clusters\nk8s"},
		{"one way", in{"builtin", "Count each word"}, "Count each word"},
		{"phrase", in{"builtin", "Fill in a Word document"}, "Fill in a Word document\ndocx"},
		{"phrase words apart", in{"builtin", "word counts per document"}, "word counts per document"},
		{"present terms not repeated", in{"builtin", "pptx slides and decks"}, "pptx slides and decks\npowerpoint ppt presentation"},
		{"nothing to add", in{"builtin", "boil water on the stove"}, "boil water on the stove"},
		{"empty", in{"builtin", ""}, ""},
		{"group forward", in{"parsed", "aa"}, "aa\nbb"},
		{"group backward", in{"parsed", "bb"}, "bb\naa"},
		{"phrase rule", in{"parsed", "cc dd"}, "cc dd\nee ff"},
		{"half a phrase", in{"parsed", "cc"}, "cc"},
		{"rule without a left side", in{"parsed", "gg"}, "gg"},
		{"rule without a right side", in{"parsed", "hh"}, "hh"},
	})
}

// TestAliasQueries asks a small library of our own in the words users say: every answer is
// a skill written in other words, beside a distractor that shares the user's word.
func TestAliasQueries(t *testing.T) {
	e := engine.New(decodeBuild(t, "testdata/aliases"))
	// first is the skill ranked first for the query q.
	first := func(q string) string {
		resp, err := e.Query(engine.Request{Query: q, K: 1})
		if err != nil {
			return err.Error()
		}
		if len(resp.Results) == 0 {
			return "no results"
		}
		return resp.Results[0].Name
	}
	table.Run(t, "first", first, []table.Case[string, string]{
		{"excel", "chart an excel sheet", "xlsx-formulas"},
		{"powerpoint", "turn my outline into a powerpoint deck", "pptx-builder"},
		{"word", "review edits in a word document", "docx-redline"},
		{"k8s", "restart the pods on k8s", "kubernetes-rollout"},
		{"postgres", "dump a postgres db", "postgresql-backup"},
		{"js", "lint my js code", "javascript-lint"},
	})
}

// TestAliasRealLibrary holds two queries in the words users say (excel for xlsx, powerpoint and
// word for pptx and docx) on the 859 real skills to the ranks docs/cli.md gives them (the
// alias- figures; -update rewrites them).
func TestAliasRealLibrary(t *testing.T) {
	dir := filepath.Join(sharedData, "skills")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("skipped: the real skills (../shared/data/skills) are not beside the checkout")
	}
	if testing.Short() {
		t.Skip("skipped in -short: builds the 859 real skills")
	}
	e := engine.New(decodeBuild(t, dir))
	var names []string
	ranks := map[string]string{}
	for _, c := range []struct{ query, want string }{
		{"convert a pdf table to an excel sheet and chart it", "xlsx"},
		{"make a powerpoint deck from a word document", "pptx"},
	} {
		got := topNames(t, e, c.query, 5)
		if !slices.Contains(got, c.want) {
			t.Errorf("%q: %s not in the top 5 %q", c.query, c.want, got)
		}
		names = append(names, "alias-"+c.want)
		ranks["alias-"+c.want] = fmt.Sprintf("#%d", slices.Index(got, c.want)+1)
	}
	fixture.CheckFigures(t, "../../..", fixture.DocFigures(t, "../../..", "alias"), names, ranks, *update, "./native/internal/builder")
}

func decodeBuild(t *testing.T, dir string) *graphs.Graph {
	t.Helper()
	g, _ := buildGraph(t, loadLib(t, dir), DefaultOptions())
	return g
}

func topNames(t *testing.T, e *engine.Engine, query string, k int) []string {
	t.Helper()
	resp, err := e.Query(engine.Request{Query: query, K: k})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resp.Results {
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		t.Fatalf("%q: no results", query)
	}
	return names
}
