package builder

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/native/testlib/table"
	"github.com/caskg/caskg/wasm/engine"
)

// synonymCases are rules in each form of the Solr synonyms format, and what they add to a text.
var synonymCases = []struct {
	name, rules, text, want string
}{
	{"equivalent", "gizmo, widget, doohickey", "a gizmo", "a gizmo\ndoohickey widget"},
	{"equivalent the other way", "gizmo, widget, doohickey", "a doohickey", "a doohickey\ngizmo widget"},
	{"stemmed match", "spreadsheet, tabular", "Spreadsheets here", "Spreadsheets here\ntabular"},
	{"explicit", "sea biscuit, sea biscit => seabiscuit", "the sea biscit won", "the sea biscit won\nseabiscuit"},
	{"explicit is one way", "sea biscuit => seabiscuit", "seabiscuit won", "seabiscuit won"},
	{"phrase words apart", "sea biscuit => seabiscuit", "a biscuit by the sea", "a biscuit by the sea"},
	{"phrase in an equivalence", "laughing out loud, lol", "lol", "lol\nlaughing loud"},
	{"right side of several words", "k8s => container orchestration", "k8s pods", "k8s pods\ncontainer orchestration"},
	{"merged", "gizmo => widget\ngizmo => doohickey", "gizmo", "gizmo\ndoohickey widget"},
	{"repeated", "gizmo => widget\ngizmo => widget, widget", "gizmo", "gizmo\nwidget"},
	{"keeps its own words", "gizmo => gizmo widget", "gizmo", "gizmo\nwidget"},
	{"comments, blank lines, CRLF, BOM", "\ufeff# a comment\r\n\r\n   # indented\r\ngizmo, widget\r\n", "widget", "widget\ngizmo"},
	{"trailing comma", "gizmo, widget,", "gizmo", "gizmo\nwidget"},
	{"commas alone", ",,", "gizmo", "gizmo"},
	{"escaped comma joins a term", `gizmo\,widget => doohickey`, "gizmo", "gizmo"},
	{"escaped comma phrase", `gizmo\,widget => doohickey`, "gizmo widget", "gizmo widget\ndoohickey"},
	{"escaped arrow", `plus\=>minus, delta`, "plus minus", "plus minus\ndelta"},
	{"escaped space", `big\ data => hadoop`, "big data", "big data\nhadoop"},
	{"escaped backslash", `gizmo\\, widget`, "gizmo", "gizmo\nwidget"},
	{"hash inside a line is text", "csharp, dotnet#", "dotnet", "dotnet\ncsharp"},
	{"lone term", "gizmo", "gizmo", "gizmo"},
	{"nothing to add", "gizmo, widget", "boil water", "boil water"},
}

func TestParseSynonyms(t *testing.T) {
	for _, c := range synonymCases {
		s, err := parseSynonyms("syn.txt", []byte(c.rules))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := (aliasTable{}).with(s).expandAliases(c.text); got != c.want {
			t.Errorf("%s: rules %q: expandAliases(%q) = %q, want %q", c.name, c.rules, c.text, got, c.want)
		}
	}
}

func TestParseSynonymsErrors(t *testing.T) {
	big := strings.Repeat("gizmo, ", maxSynonymsBytes/7+1)
	var group strings.Builder
	for i := range 1100 {
		group.WriteString("zq" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + ", ")
	}
	// parse parses the synonyms file syn.txt that holds in; its errors are the package's.
	parse := func(in string) error {
		_, err := parseSynonyms("syn.txt", []byte(in))
		if err != nil && !strings.HasPrefix(err.Error(), "builder: ") {
			return fmt.Errorf("%q lacks the prefix \"builder: \"", err)
		}
		return err
	}
	table.Errors(t, "parseSynonyms", parse, []table.Case[string, string]{
		{"no left side", "=> widget", `syn.txt:1:1: no term before "=>"`},
		{"no right side", "gizmo =>", `syn.txt:1:9: no term after "=>"`},
		{"right side only commas", "gizmo => , ,", `syn.txt:1:9: no term after "=>"`},
		{"two arrows", "gizmo => widget => doohickey", `syn.txt:1:17: a second "=>"`},
		{"escape at the end", `gizmo, widget\`, `syn.txt:1:14: '\' at the end of the line escapes nothing`},
		{"stop words only", "gizmo, the", `syn.txt:1:8: term "the" has no searchable word`},
		{"punctuation only", "gizmo => --", `syn.txt:1:10: term "--" has no searchable word`},
		{"line and column", "# rules\n\ngizmo, widget\n  sprocket =>\n", `syn.txt:4:14: no term after "=>"`},
		{"invalid UTF-8", "gizmo, wid\xffget", `syn.txt:1:11: invalid UTF-8`},
		{"right side of several terms a word", "gizmo => 查询北京", `syn.txt:1:10: term "查询北京" adds no word`},
		{"too large", big, "more than the 4194304 a synonyms file may have"},
		{"too many words", group.String(), "the rules add up to more than 1048576 words"},
	})
}

// TestSynonymsOrder: the same rules in another order, or said twice, are the same rules.
func TestSynonymsOrder(t *testing.T) {
	a, err := parseSynonyms("a", []byte("gizmo, widget\nsea biscuit => seabiscuit, horse\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseSynonyms("b", []byte("sea biscuit => horse\nwidget, gizmo\nsea biscuit => seabiscuit\ngizmo => widget\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || a.hash() != b.hash() {
		t.Errorf("rules in another order differ:\n%+v\n%+v", a.rules, b.rules)
	}
	if a.len() != 3 {
		t.Errorf("len %d, want 3 (gizmo, widget, sea biscuit)", a.len())
	}
}

func FuzzParseSynonyms(f *testing.F) {
	for _, c := range synonymCases {
		f.Add(c.rules, c.text)
	}
	f.Add("a\\", "")
	f.Add("=>=>,\\,\\=>", "x")
	f.Fuzz(func(t *testing.T, rules, text string) {
		s, err := parseSynonyms("f", []byte(rules))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "builder: f:") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if !slices.IsSortedFunc(s.rules, func(x, y synonymRule) int { return strings.Compare(x.From, y.From) }) {
			t.Fatalf("rules not sorted: %+v", s.rules)
		}
		defaultAliases.with(s).expandAliases(text)
	})
}

// synonymsLib is a library of our own whose kubernetes skill no query in a word it does not
// hold finds, but for the synonyms.
const synonymsLib = "testdata/aliases"

// TestSynonymsBuild: a rule of the owner's makes a query in their word find the skill written
// in another, which it misses without; the artifact names the rules' hash in its build
// parameters, and is the same bytes for the same rules in another order.
func TestSynonymsBuild(t *testing.T) {
	skills := loadLib(t, synonymsLib)
	const query, want = "minikube file", "kubernetes-rollout"
	g, plain := buildGraph(t, skills, DefaultOptions())
	if got := topNames(t, engine.New(g), query, 3); slices.Contains(got, want) {
		t.Fatalf("%q without synonyms: %v holds %s already", query, got, want)
	}
	syn := func(text string) Options {
		s, err := parseSynonyms("syn.txt", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.Synonyms = s
		return o
	}
	g, data := buildGraph(t, skills, syn("# ours\nkubernetes, minikube\ndocx => word\n"))
	if got := topNames(t, engine.New(g), query, 3); got[0] != want {
		t.Errorf("%q with synonyms: %v, want %s first", query, got, want)
	}
	art, err := g.Artifact()
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := art.Params["synonyms"].(string); !strings.HasPrefix(h, "sha256:") {
		t.Errorf("params synonyms = %v, want the rules' hash", art.Params["synonyms"])
	}
	_, again := buildGraph(t, skills, syn("docx => word\nminikube, kubernetes\nkubernetes, minikube"))
	if !bytes.Equal(data, again) {
		t.Error("the same rules in another order made other bytes")
	}
	// No rules is no synonyms: the artifact of a build without them.
	if _, none := buildGraph(t, skills, syn("# nothing yet\n")); !bytes.Equal(none, plain) {
		t.Error("an empty synonyms file changed the artifact")
	}
}

// TestSynonymsUpdate: the build state keeps the rules, so an update from it makes the bytes a
// full build with them makes; an update with other rules is a full build with those.
func TestSynonymsUpdate(t *testing.T) {
	skills := loadLib(t, synonymsLib)
	s, err := parseSynonyms("syn.txt", []byte("kubernetes, minikube\n"))
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Synonyms = s
	runs := []Trace{
		{ID: "1", Skills: []string{"helm-package", "kubernetes-rollout"}},
		{ID: "2", Skills: []string{"helm-package", "kubernetes-rollout"}},
		{ID: "3", Skills: []string{"xlsx-formulas", "pptx-builder"}},
		{ID: "4", Skills: []string{"postgresql-backup", "kubernetes-rollout"}},
	}
	ctx := context.Background()
	first, err := Build(ctx, Input{Skills: skills, Options: &opt, Runs: runs[:2], State: true})
	if err != nil {
		t.Fatal(err)
	}
	full, err := Build(ctx, Input{Skills: skills, Options: &opt, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	kept := first.State.Options()
	if !reflect.DeepEqual(kept.Synonyms, s) {
		t.Fatalf("state options' synonyms %+v, want %+v", kept.Synonyms, s)
	}
	// Through the encoded state, as caskg update reads it.
	st := reread(t, first.State)
	data, _, rep, err := updateOf(ctx, Input{Previous: st, Old: first.Artifact, Runs: runs[2:]}, st.Options())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Update.Mode != "incremental" || !bytes.Equal(data, full.Artifact) {
		t.Errorf("update with the state's synonyms: mode %s (%s), same bytes as a full build: %v", rep.Update.Mode, rep.Update.Reason, bytes.Equal(data, full.Artifact))
	}
	g := fixture.Decode(t, data)
	if got := topNames(t, engine.New(g), "minikube file", 1); got[0] != "kubernetes-rollout" {
		t.Errorf("after the update, minikube finds %v", got)
	}
	// Other rules: not the old lexicon, but a full build with the new rules.
	other := st.Options()
	other.Synonyms = nil
	data, _, rep, err = updateOf(ctx, Input{Previous: st, Old: first.Artifact, Runs: runs[2:]}, other)
	if err != nil {
		t.Fatal(err)
	}
	plain := DefaultOptions()
	want, err := Build(ctx, Input{Skills: skills, Options: &plain, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Update.Mode != "full" || !strings.Contains(rep.Update.Reason, "synonyms differ") || !bytes.Equal(data, want.Artifact) {
		t.Errorf("update without the synonyms: mode %s (%s), same bytes as a full build without: %v", rep.Update.Mode, rep.Update.Reason, bytes.Equal(data, want.Artifact))
	}
}
