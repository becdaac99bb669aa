package engine

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

// newRenderEngine builds an engine over skills that carry sources and bodies.
func newRenderEngine(tb testing.TB, skills []graphs.Skill, edges []graphs.Edge) *Engine {
	tb.Helper()
	return artifactEngine(tb, &graphs.Artifact{Skills: skills, Edges: edges, Lexicon: lexicon(skills)})
}

// The tea library: fill-kettle is a confirmed prerequisite of boil-water, brew-tea follows it
// in an uncertain workflow; brew-tea's body is Japanese and French (multi-byte runes), serve-tea
// has no body.
var teaSkills = []graphs.Skill{
	{Name: "fill-kettle", Description: "Fill a kettle from the tap.", Source: "lib/fill-kettle/SKILL.md",
		Body: "## Steps\n1. Take the kettle to the sink.\n2. Fill it to the line."},
	{Name: "boil-water", Description: "Boil water on the stove until it bubbles.", Source: "lib/boil-water/SKILL.md",
		Body: "## Steps\n1. Put the kettle on the stove.\n2. Turn the stove on.\n3. Wait for the whistle."},
	{Name: "brew-tea", Description: "Steep tea leaves in hot water.", Source: "lib/brew-tea/SKILL.md",
		Body: "## 手順\nお湯を注ぐ。三分待つ。\n## Étapes\nVerser l'eau frémissante sur les feuilles, attendre trois minutes — pas plus."},
	{Name: "serve-tea", Description: "Pour the tea into cups and serve it.", Source: "lib/serve-tea/SKILL.md"},
}

var teaEdges = []graphs.Edge{
	{Source: 0, Target: 1, Weight: 0.5, Assoc: 0.5, State: graphs.Confirmed, Type: graphs.Dependency},
	{Source: 1, Target: 2, Weight: 0.6, Assoc: 0.6, State: graphs.Uncertain, Type: graphs.Workflow},
	{Source: 2, Target: 3, Weight: 0.25, Assoc: 0.25, State: graphs.Scaffold, Type: graphs.Semantic},
}

func TestRenderLayout(t *testing.T) {
	e := newRenderEngine(t, teaSkills, teaEdges)
	resp, err := e.Query(Request{Query: "boil water", K: 3, Render: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(resp.Results); !cmp.Equal(got, []string{"boil-water", "brew-tea", "fill-kettle"}) {
		t.Fatalf("results %v; the layout below assumes boil-water, brew-tea, fill-kettle", got)
	}
	want := `3 skills for this task, most relevant first.
Task: boil water
Why: a seed matches the task best; via graph: an edge from a seed raised the skill; a match matches the task below the seeds, no edge raised it. Under each skill, the edges that link it to the others, with calibration state and weight.
Text marked [… cut] goes on in the skill's source file.

[1] boil-water (seed #1)
Boil water on the stove until it bubbles.
source: lib/boil-water/SKILL.md
- needs fill-kettle (confirmed dependency, w=0.50)
- before brew-tea (uncertain workflow, w=0.60)

## Steps
1. Put the kettle on the stove.
2. Turn the stove on.
3. Wait for the whistle.

[2] brew-tea (seed #2)
Steep tea leaves in hot water.
source: lib/brew-tea/SKILL.md
- after boil-water (uncertain workflow, w=0.60)

## 手順
お湯を注ぐ。三分待つ。
## Étapes
Verser l'eau frémissante sur les feuilles, attendre trois minutes — pas plus.

[3] fill-kettle (via graph)
Fill a kettle from the tap.
source: lib/fill-kettle/SKILL.md
- needed by boil-water (confirmed dependency, w=0.50)

## Steps
1. Take the kettle to the sink.
2. Fill it to the line.
`
	if diff := cmp.Diff(want, resp.Rendered); diff != "" {
		t.Errorf("rendered bundle (-want +got):\n%s", diff)
	}
}

func TestRenderCases(t *testing.T) {
	e := newRenderEngine(t, teaSkills, teaEdges)
	tests := []struct {
		name    string
		req     Request
		want    []string // substrings, in this order
		notWant []string
	}{
		{"no graph", Request{Query: "tea", NoGraph: true},
			[]string{"(the skill graph was not used)", "(seed #1)"}, []string{"via graph"}},
		{"no results", Request{Query: "zebra quasar"},
			[]string{"No skills found for this task.\nTask: zebra quasar\n"}, []string{"[1]"}},
		{"one result", Request{Query: "kettle", K: 1, NoGraph: true},
			[]string{"1 skill for this task.", "[1] fill-kettle (seed #1)"}, []string{"[2]"}},
		{"empty body", Request{Query: "serve cups", K: 1, NoGraph: true},
			[]string{"[1] serve-tea (seed #1)\nPour the tea into cups and serve it.\nsource: lib/serve-tea/SKILL.md"},
			[]string{"\n" + cutMark, "\n\n\n"}},
		{"task on one line, clipped", Request{Query: "boil\n\twater " + strings.Repeat("é", 300)},
			[]string{"Task: boil water " + strings.Repeat("é", maxTaskRunes-len("boil water ")-1) + "…\n"}, nil},
		{"control characters", Request{Query: "boil\x1b[31m water\x00"},
			[]string{"Task: boil [31m water\n"}, []string{"\x1b", "\x00"}},
		{"body cut at a line", Request{Query: "boil water", K: 1, SkillBudget: 150},
			[]string{"[1] boil-water", "## Steps\n1. Put the kettle on the stove.\n" + cutMark + "\n"}, []string{"Turn"}},
		{"left out by the total", Request{Query: "boil water", K: 4, TotalBudget: 472},
			[]string{"file.\n\n[1] boil-water (seed #1)\n\n[2] brew-tea (seed #2)\n\n[2 more skills left out by the budget: fill-kettle, serve-tea]\n"},
			nil},
		{"left-out names clipped", Request{Query: "boil water", K: 4, TotalBudget: 422},
			[]string{"file.\n\n[4 more skills left out by the budget: boil-water, brew-tea, …]\n"}, nil},
		{"headings before descriptions", Request{Query: "boil water", K: 4, TotalBudget: 502},
			[]string{"[1] boil-water (seed #1)\nBoil water on the stove until it bubbles.\n\n[2] brew-tea (seed #2)\n\n[3] fill-kettle (via graph)\n\n[4] serve-tea (via graph)\n"},
			nil},
		{"descriptions before evidence", Request{Query: "boil water", K: 4, TotalBudget: 622},
			[]string{"[1] boil-water (seed #1)\nBoil water on the stove until it bubbles.\n\n[2]", "Steep tea leaves in hot water.\n\n[3]",
				"Fill a kettle from the tap.\n\n[4]", "Pour the tea into cups and serve it.\n"},
			[]string{"- needs"}},
		{"headings that do not fit are named", Request{Query: "boil water", K: 4, SkillBudget: 20},
			[]string{"\n\n[4 more skills left out by the budget: boil-water, brew-tea, fill-kettle, serve-tea]\n"},
			[]string{"[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Render = true
			resp, err := e.Query(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			text := resp.Rendered
			rest := text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("rendered text lacks %q (in order):\n%s", w, text)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("rendered text contains %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestRenderOff(t *testing.T) {
	e := newRenderEngine(t, teaSkills, teaEdges)
	plain, err := e.Query(Request{Query: "boil water for tea"})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Rendered != "" {
		t.Errorf("Rendered = %q without Render", plain.Rendered)
	}
	rendered, err := e.Query(Request{Query: "boil water for tea", Render: true, SkillBudget: 50, TotalBudget: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Rendering never changes the ranking.
	if diff := cmp.Diff(plain.Results, rendered.Results); diff != "" {
		t.Errorf("results changed by Render (-off +on):\n%s", diff)
	}
}

func TestRenderBudgetErrors(t *testing.T) {
	e := newRenderEngine(t, teaSkills, teaEdges)
	for _, tt := range []struct {
		req  Request
		want string
	}{
		{Request{Query: "tea", SkillBudget: -1}, `engine: field "skill_budget": -1 is outside [1, 1048576]`},
		{Request{Query: "tea", SkillBudget: MaxBudget + 1}, `engine: field "skill_budget"`},
		{Request{Query: "tea", TotalBudget: -5, Render: true}, `engine: field "total_budget": -5 is outside`},
		{Request{Query: "tea", TotalBudget: MaxBudget + 1}, `engine: field "total_budget"`},
	} {
		_, err := e.Query(tt.req)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Query(skill %d, total %d) error %v, want %q", tt.req.SkillBudget, tt.req.TotalBudget, err, tt.want)
		}
	}
	for _, req := range []Request{
		{Query: "tea", SkillBudget: 1, TotalBudget: 1, Render: true},
		{Query: "tea", SkillBudget: MaxBudget, TotalBudget: MaxBudget, Render: true},
	} {
		if _, err := e.Query(req); err != nil {
			t.Errorf("Query(skill %d, total %d): %v", req.SkillBudget, req.TotalBudget, err)
		}
	}
}

// sectionStart matches the heading of a rendered skill section.
var sectionStart = regexp.MustCompile(`\n\n\[(\d+)\] `)

// TestRenderBudgets checks the budget invariants over every budget pair of a grid, for libraries
// of ASCII, multi-byte, empty and single-line bodies: the text never exceeds the total, no
// section exceeds the skill budget, the text is valid UTF-8 and ends in a newline, sections are
// ranks 1..m in order, skills left out are named at the end (when that fits), every body shown
// is the start of the skill's body, and larger budgets never show fewer skills.
func TestRenderBudgets(t *testing.T) {
	libs := map[string][]graphs.Skill{
		"tea": teaSkills,
		"multi-byte": {
			{Name: "日本語-スキル", Description: "説明文。" + strings.Repeat("あ", 40), Source: "lib/日本/SKILL.md",
				Body: strings.Repeat("一行目の文章です。\n", 30)},
			{Name: "emoji-skill", Description: "Handles 🎉 and 👩‍👩‍👧 sequences.", Source: "lib/emoji/SKILL.md",
				Body: strings.Repeat("🎉👩‍👩‍👧 ", 200)},
			{Name: "mixed-skill", Description: "Ünïcödé everywhere, née café.", Source: "lib/mixed/SKILL.md",
				Body: strings.Repeat("Ça coûte 5 €; ", 100)},
		},
		"empty bodies": {
			{Name: "a-skill", Description: "First skill.", Source: "a.json"},
			{Name: "b-skill", Description: "Second skill.", Source: "a.json"},
			{Name: "c-skill", Description: "Third skill.", Source: ""},
		},
		"one long line": {
			{Name: "long-line", Description: strings.Repeat("word ", 200), Source: "x/SKILL.md",
				Body: strings.Repeat("x", 5000)},
			{Name: "long-words", Description: "Words.", Source: "y/SKILL.md", Body: strings.Repeat("word ", 1000)},
			{Name: "long-name-" + strings.Repeat("n", 300), Description: "A long name.", Source: "z/SKILL.md", Body: "Short body, long line."},
		},
	}
	edges := []graphs.Edge{
		{Source: 0, Target: 1, Weight: 0.7, State: graphs.Confirmed, Type: graphs.Dependency},
		{Source: 1, Target: 2, Weight: 0.4, State: graphs.Uncertain, Type: graphs.Alternative},
	}
	queries := map[string]string{
		"tea": "boil water for tea and serve it", "multi-byte": "skill 🎉 café 日本語",
		"empty bodies": "skill first second third", "one long line": "long words line",
	}
	budgets := []int{1, 2, 3, 5, 8, 13, 20, 40, 64, 100, 150, 240, 400, 700, 1000, 2400, 5000, 12000, 100000}
	for name, skills := range libs {
		e := newRenderEngine(t, skills, edges)
		bodies := map[string]string{}
		for _, s := range skills {
			bodies[s.Name] = strings.TrimSpace(s.Body)
		}
		for _, sb := range budgets {
			prevShown := -1
			for _, tb := range budgets {
				req := Request{Query: queries[name], Render: true, SkillBudget: sb, TotalBudget: tb}
				resp, err := e.Query(req)
				if err != nil {
					t.Fatal(err)
				}
				text := resp.Rendered
				where := fmt.Sprintf("%s, skill budget %d, total %d", name, sb, tb)
				again, _ := e.Query(req)
				if again.Rendered != text {
					t.Errorf("%s: rendering is not deterministic", where)
				}
				if !utf8.ValidString(text) || !strings.HasSuffix(text, "\n") {
					t.Fatalf("%s: invalid UTF-8 or no final newline: %q", where, text)
				}
				if n := utf8.RuneCountInString(text); n > tb {
					t.Errorf("%s: %d characters:\n%s", where, n, text)
				}
				locs := sectionStart.FindAllStringSubmatchIndex(text, -1)
				for i, loc := range locs {
					if rank := text[loc[2]:loc[3]]; rank != fmt.Sprint(i+1) {
						t.Fatalf("%s: section %d has rank %s", where, i+1, rank)
					}
					end := len(text) - 1
					if i+1 < len(locs) {
						end = locs[i+1][0]
					} else if j := strings.LastIndex(text, "\n\n["); j > loc[0] && !sectionStart.MatchString(text[j:]) {
						end = j // the closing left-out line
					}
					sec := text[loc[0]+2 : end]
					if n := utf8.RuneCountInString(sec); n > sb {
						t.Errorf("%s: section %d has %d characters:\n%s", where, i+1, n, sec)
					}
					r := resp.Results[i]
					if _, body, ok := strings.Cut(sec, "\n\n"); ok {
						body, cut := strings.CutSuffix(body, "\n"+cutMark)
						full := bodies[r.Name]
						if !strings.HasPrefix(full, body) || cut == (body == full) {
							t.Errorf("%s: section %d body %q is not the start of %q (cut %v)", where, i+1, body, full, cut)
						}
					}
				}
				shown := len(locs)
				header, _, _ := strings.Cut(text, "\n\n")
				if shown < len(resp.Results) && tb >= utf8.RuneCountInString(header)+1+2+len(leftOutCount(99)) {
					// There was room for the left-out line's short form after the header.
					if !strings.Contains(text, fmt.Sprintf("[%d more skill", len(resp.Results)-shown)) {
						t.Errorf("%s: %d of %d skills shown and no left-out line:\n%s", where, shown, len(resp.Results), text)
					}
				}
				if shown < prevShown {
					t.Errorf("%s: %d skills shown, %d with a smaller total", where, shown, prevShown)
				}
				prevShown = shown
				if sb >= 100000 && tb >= 100000 && (shown != len(resp.Results) || strings.Contains(text, cutMark+"\n")) {
					t.Errorf("%s: with ample budgets every skill is shown whole:\n%s", where, text)
				}
			}
		}
	}
}

func TestCutText(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"fits", "abc", 3, "abc"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -4, ""},
		{"line boundary", "first line\nsecond line", 15, "first line"},
		{"early line boundary ignored, space", "a\nbcdefgh ijklmnop", 14, "a\nbcdefgh"},
		{"no boundary", "abcdefghij", 4, "abcd"},
		{"multi-byte rune boundary", "日本語のテキスト", 3, "日本語"},
		{"multi-byte line", "日本語\nテキストです", 6, "日本語"},
		{"emoji", "🎉🎉🎉🎉", 2, "🎉🎉"},
		{"trailing space dropped", "abc   \ndef", 6, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutText(tt.in, tt.n)
			if got != tt.want {
				t.Errorf("cutText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func TestClipRunes(t *testing.T) {
	tests := []struct {
		in, want string
		n        int
	}{
		{"abc", "abc", 3},
		{"abcd", "ab…", 3},
		{"ab cd", "ab…", 4},
		{"abcd", "…", 1},
		{"abcd", "", 0},
		{"日本語テキスト", "日本語…", 4},
		{"", "", 0},
	}
	for _, tt := range tests {
		if got := clipRunes(tt.in, tt.n); got != tt.want {
			t.Errorf("clipRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestViaEvidence(t *testing.T) {
	tests := []struct {
		v    Via
		want string
	}{
		{Via{From: "x", State: "confirmed", Weight: 0.725, Type: "dependency"}, "needs x (confirmed dependency, w=0.73)"}, // the float32 0.725 is 0.72500002,
		{Via{From: "x", State: "confirmed", Weight: 0.73, Type: "dependency", Reverse: true}, "needed by x (confirmed dependency, w=0.73)"},
		{Via{From: "x", State: "uncertain", Weight: 0.5, Type: "workflow"}, "after x (uncertain workflow, w=0.50)"},
		{Via{From: "x", State: "uncertain", Weight: 0.5, Type: "workflow", Reverse: true}, "before x (uncertain workflow, w=0.50)"},
		{Via{From: "x", State: "scaffold", Weight: 0.01, Type: "semantic", Reverse: true}, "similar to x (scaffold semantic, w=0.01)"},
		{Via{From: "x", State: "unvalidated", Weight: 1, Type: "alternative"}, "alternative to x (unvalidated alternative, w=1.00)"},
	}
	for _, tt := range tests {
		if got := tt.v.Evidence(); got != tt.want {
			t.Errorf("%+v.Evidence() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// BenchmarkRender renders 8 results with 2,400-character bodies at the default budgets.
func BenchmarkRender(b *testing.B) {
	var skills []graphs.Skill
	for i := range 64 {
		skills = append(skills, graphs.Skill{
			Name:        fmt.Sprintf("skill-%02d-boil", i),
			Description: fmt.Sprintf("Skill %d boils water in a kettle of some kind, step by step.", i),
			Source:      fmt.Sprintf("lib/skill-%02d/SKILL.md", i),
			Body:        strings.Repeat("## Steps\n1. Fill the kettle with water from the tap.\n2. Switch it on and wait.\n", 40)[:2400],
		})
	}
	var edges []graphs.Edge
	for i := 1; i < len(skills); i++ {
		edges = append(edges, graphs.Edge{Source: i - 1, Target: i, Weight: 0.5, State: graphs.Confirmed, Type: graphs.Dependency})
	}
	e := newRenderEngine(b, skills, edges)
	req := Request{Query: "boil water in a kettle"}
	if err := req.normalize(); err != nil {
		b.Fatal(err)
	}
	resp, err := e.Query(req)
	if err != nil || len(resp.Results) != DefaultK {
		b.Fatalf("%d results, %v", len(resp.Results), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.render(&req, resp.Results, resp.Note)
	}
}
