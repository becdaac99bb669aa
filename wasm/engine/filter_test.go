package engine

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib/table"
)

// The gateway library: tools of two servers named SERVER__TOOL, a login every github tool
// depends on, and one skill in no namespace.
var gatewaySkills = []testSkill{
	{"github__login", "Log in to GitHub with a token.", ""},
	{"github__create_issue", "Create an issue in a repository.", ""},
	{"github__list_issues", "List the issues of a repository.", ""},
	{"jira__create_issue", "Create an issue in a Jira project.", ""},
	{"jira__list_issues", "List the issues of a Jira project.", ""},
	{"issue-template", "Write an issue from a template.", ""},
}

var gatewayEdges = []graphs.Edge{
	{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency},
	{Source: 0, Target: 2, Weight: 0.9, Assoc: 0.9, State: graphs.Confirmed, Type: graphs.Dependency},
	{Source: 5, Target: 3, Weight: 0.6, Assoc: 0.6, State: graphs.Uncertain, Type: graphs.Workflow},
}

func TestFilter(t *testing.T) {
	e := newTestEngine(t, gatewaySkills, gatewayEdges)
	all := []string{"github__create_issue", "github__list_issues", "github__login", "issue-template", "jira__create_issue", "jira__list_issues"}
	tests := []struct {
		name   string
		filter Filter
		want   []string // the answer's skills, in any order
	}{
		{"none", Filter{}, all},
		{"allow glob", Filter{Allow: []string{"jira__*"}}, []string{"jira__create_issue", "jira__list_issues"}},
		{"allow two", Filter{Allow: []string{"*__create_issue", "issue-?emplate"}}, []string{"github__create_issue", "issue-template", "jira__create_issue"}},
		{"allow exact", Filter{Allow: []string{"github__login"}}, []string{"github__login"}},
		{"deny", Filter{Deny: []string{"github__*"}}, []string{"issue-template", "jira__create_issue", "jira__list_issues"}},
		{"deny wins", Filter{Allow: []string{"github__*"}, Deny: []string{"*create*"}}, []string{"github__list_issues", "github__login"}},
		{"namespace", Filter{Namespaces: []string{"github"}}, []string{"github__create_issue", "github__list_issues", "github__login"}},
		{"namespaces and allow narrow both", Filter{Namespaces: []string{"github", "jira"}, Allow: []string{"*list*"}}, []string{"github__list_issues", "jira__list_issues"}},
		{"namespace is exact", Filter{Namespaces: []string{"git", "github_"}}, nil},
		{"no match", Filter{Allow: []string{"slack__*"}}, nil},
		{"deny all", Filter{Deny: []string{"*"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, noGraph := range []bool{false, true} {
				resp, err := e.Query(Request{Query: "create an issue and list issues from a template, log in", K: 10, Filter: tt.filter, NoGraph: noGraph})
				if err != nil {
					t.Fatal(err)
				}
				got := names(resp.Results)
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("no_graph %v: got %q, want %q", noGraph, got, tt.want)
				}
				for _, r := range resp.Results {
					for _, v := range r.Via {
						if !slices.Contains(tt.want, v.From) {
							t.Errorf("no_graph %v: %s came via %s, which the filter leaves out", noGraph, r.Name, v.From)
						}
					}
				}
			}
		})
	}
}

// A filtered-out skill is no seed: the login a denied create_issue needs does not come with it,
// and the allowed skills still fill k.
func TestFilterSeedsAndFill(t *testing.T) {
	e := newTestEngine(t, gatewaySkills, gatewayEdges)
	q := "create an issue in a repository"
	got := names(query(t, e, Request{Query: q, K: 3}))
	if !slices.Contains(got, "github__login") {
		t.Fatalf("unfiltered %q: want the login the seed depends on", got)
	}
	got = names(query(t, e, Request{Query: q, K: 3, Filter: Filter{Deny: []string{"github__create_issue", "github__list_issues"}}}))
	if slices.Contains(got, "github__login") || slices.Contains(got, "github__create_issue") {
		t.Errorf("denied seed: got %q; the login came through a seed the filter leaves out", got)
	}
	if len(got) != 3 {
		t.Errorf("got %d results %q, want k = 3 from the allowed skills", len(got), got)
	}
}

func TestFilterErrors(t *testing.T) {
	e := kitchen()
	long := strings.Repeat("a", MaxPatternBytes+1)
	tests := []struct {
		filter Filter
		want   string
	}{
		{Filter{Allow: []string{"ok*", ""}}, `field "filter.allow[1]": empty`},
		{Filter{Deny: []string{"a[bc]"}}, `field "filter.deny[0]": '[', ']' and '\' are reserved`},
		{Filter{Allow: []string{`a\*`}}, `field "filter.allow[0]": '[', ']' and '\' are reserved`},
		{Filter{Namespaces: []string{"git", "a__b"}}, `field "filter.namespaces[1]": a namespace has no "__"`},
		{Filter{Deny: []string{long}}, `field "filter.deny[0]": 1025 bytes, at most 1024`},
		{Filter{Allow: make([]string, MaxFilterPatterns+1)}, `field "filter.allow": 1001 entries, at most 1000`},
	}
	for _, tt := range tests {
		_, err := e.Query(Request{Query: "boil water", Filter: tt.filter})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "engine: ") {
			t.Errorf("%+v: error %v, want one with %q", tt.filter, err, tt.want)
		}
	}
}

func TestMatch(t *testing.T) {
	type in struct{ glob, name string }
	matches := func(c in) bool { return match(c.glob, c.name) }
	table.Run(t, "match", matches, []table.Case[in, bool]{
		{"star matches empty", in{"*", ""}, true},
		{"star crosses separators", in{"*", "anything/at__all"}, true},
		{"empty matches empty", in{"", ""}, true},
		{"empty matches nothing else", in{"", "a"}, false},
		{"literal", in{"a", "a"}, true},
		{"literal is whole, not a prefix", in{"a", "ab"}, false},
		{"name shorter than the literal", in{"ab", "a"}, false},
		{"trailing star matches nothing more", in{"a*", "a"}, true},
		{"inner star", in{"a*c", "abbbc"}, true},
		{"inner star, text after the end", in{"a*c", "abbbcd"}, false},
		{"leading star, repeated last letter", in{"*c", "cccc"}, true},
		{"two stars", in{"a*b*c", "a-b-b-c"}, true},
		{"two stars, out of order", in{"a*b*c", "a-c-b"}, false},
		{"question mark is one character, not one byte", in{"?", "é"}, true},
		{"two question marks, one character", in{"??", "é"}, false},
		{"question mark for an accented letter", in{"caf?", "café"}, true},
		{"star then an accented letter", in{"*é", "caféé"}, true},
		{"namespace prefix", in{"github__*", "github__create_issue"}, true},
		{"namespace prefix, one underscore", in{"github__*", "github_create"}, false},
		{"inside a namespace", in{"*__list_*", "jira__list_issues"}, true},
		{"two question marks around a star, one character", in{"?*?", "a"}, false},
		{"two stars in a row", in{"**", "xy"}, true},
	})
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"a*b?c", "axxbyc"}, {"*__*", "github__x"}, {"?é*", "aé"}, {"**?", ""}, {"a*", "\xff\xfe"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		got := match(glob, name)
		if !strings.ContainsAny(glob, "*?") && got != (glob == name) {
			t.Fatalf("match(%q, %q) = %v for a literal", glob, name, got)
		}
		if glob == "*" && !got {
			t.Fatalf("* does not match %q", name)
		}
		// Allows matches folded names against folded globs (bytes not UTF-8 fold to U+FFFD).
		f := Filter{Allow: []string{glob}}
		if f.Check() == nil && f.Allows(name) != match(fold(glob), fold(name)) {
			t.Fatalf("Allows and match of the folded strings disagree on %q, %q", glob, name)
		}
		// A glob of bytes that are not UTF-8 can match part of a character before folding and
		// not after (its bytes fold to U+FFFD); JSON cannot carry one.
		if got && f.Check() == nil && utf8.ValidString(glob) && !f.Allows(name) {
			t.Fatalf("%q matches %q, but not regardless of case", glob, name)
		}
	})
}

// A compiled filter is reused only for an equal filter.
func TestFilterCache(t *testing.T) {
	e := newTestEngine(t, gatewaySkills, gatewayEdges)
	q := "create an issue"
	filters := []Filter{
		{Allow: []string{"github__*"}},
		{Allow: []string{"github__*", ""}[:1], Deny: []string{"*list*"}},
		{Deny: []string{"github__*"}},
		{Allow: []string{"g", "ithub__*"}},
		{Allow: []string{"github__*;"}},
		{Namespaces: []string{"github"}},
		{Namespaces: []string{"jira"}},
	}
	for round := range 3 {
		for _, f := range filters {
			uncached := newTestEngine(t, gatewaySkills, gatewayEdges) // nothing compiled yet
			want := names(query(t, uncached, Request{Query: q, Filter: f}))
			if got := names(query(t, e, Request{Query: q, Filter: f})); !slices.Equal(got, want) {
				t.Errorf("round %d, %+v: got %q, want %q", round, f, got, want)
			}
		}
	}
}

// BenchmarkFilterCompile measures compiling a request's filter over 100,000 skills named as the
// gateway names tools (SERVER__TOOL, 100 servers): the cost a filtered query adds, once per
// request.
func BenchmarkFilterCompile(b *testing.B) {
	skills := make([]testSkill, 100_000)
	for i := range skills {
		skills[i] = testSkill{name: "server" + itoa(i%100) + "__tool_" + itoa(i), desc: "Tool " + itoa(i) + "."}
	}
	e := newTestEngine(b, skills, nil)
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"namespace", Filter{Namespaces: []string{"server7"}}},
		{"allow", Filter{Allow: []string{"server7__*"}}},
		{"deny", Filter{Deny: []string{"*_99999", "server1?__*"}}},
		{"10 globs", Filter{Allow: []string{"server1__*", "server2__*", "server3__*", "*tool_1*", "*tool_2*"}, Deny: []string{"*0", "*1", "*2", "*3", "*4"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				clear(e.filters[:]) // the work of a filter not compiled before
				e.compile(&bc.f)
			}
		})
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// One spelling of a name is enough to deny it: '*' crosses '/', and case does not count, in
// ASCII and beyond it.
func TestAllowsFoldsAndCrossesSlash(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		skill  string
		want   bool
	}{
		{"star crosses slash", Filter{Deny: []string{"*delete*"}}, "admin/delete_user", false},
		{"namespaced slash", Filter{Deny: []string{"s2__*delete*"}}, "s2__admin/delete_user", false},
		{"upper name", Filter{Deny: []string{"*delete*"}}, "Delete_All", false},
		{"upper pattern", Filter{Deny: []string{"*DELETE*"}}, "s__delete_all", false},
		{"mixed both", Filter{Deny: []string{"*DeLeTe*"}}, "S__dElEtE", false},
		{"kelvin sign", Filter{Deny: []string{"*kill*"}}, "\u212Aill", false},
		{"long s", Filter{Deny: []string{"*secret*"}}, "\u017Fecret", false},
		{"final sigma", Filter{Deny: []string{"*σ*"}}, "ΟΔΟΣ", false},
		{"sharp s", Filter{Deny: []string{"stra\u1E9Ee"}}, "straße", false},
		{"allow folds", Filter{Allow: []string{"GitHub__*"}}, "github__login", true},
		{"allow folds the other way", Filter{Allow: []string{"github__*"}}, "GITHUB__LOGIN", true},
		{"namespace folds", Filter{Namespaces: []string{"GitHub"}}, "github__login", true},
		{"other names stay", Filter{Deny: []string{"*delete*"}}, "s__deleted", false},
		{"not a near miss", Filter{Deny: []string{"*delete*"}}, "s__del_ete", true},
		{"question mark one folded character", Filter{Deny: []string{"?ill"}}, "\u212Aill", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.filter.Check(); err != nil {
				t.Fatal(err)
			}
			if got := tt.filter.Allows(tt.skill); got != tt.want {
				t.Errorf("%+v.Allows(%q) = %v, want %v", tt.filter, tt.skill, got, tt.want)
			}
		})
	}
}

// fold joins at least what Unicode's simple case folding joins, for every character: a deny
// written in one case holds for every case of it.
func TestFoldJoinsSimpleFolding(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		want := fold(string(r))
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if got := fold(string(o)); got != want {
				t.Fatalf("fold(%U) = %q, fold(%U) = %q; simple folding joins them", r, want, o, got)
			}
		}
	}
}

// FuzzAllowsFolds holds Allows to a reference: a glob made a regular expression with
// case-insensitive matching ((?i) is Unicode simple folding). Whatever the reference matches,
// Allows must match too (its folding is coarser, never finer), and on ASCII they agree.
func FuzzAllowsFolds(f *testing.F) {
	for _, s := range [][2]string{{"*delete*", "admin/delete_user"}, {"*DELETE*", "Delete_All"}, {"?ill", "\u212Aill"},
		{"s2__*delete*", "s2__admin/delete_user"}, {"a?c", "abc"}, {"*", ""}, {"*σ*", "ΟΔΟΣ"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		flt := Filter{Deny: []string{glob}}
		if flt.Check() != nil || !utf8.ValidString(glob) || !utf8.ValidString(name) {
			return
		}
		var re strings.Builder
		re.WriteString(`(?is)\A`)
		for _, r := range glob {
			switch r {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`\z`)
		want := regexp.MustCompile(re.String()).MatchString(name)
		denied := !flt.Allows(name)
		if want && !denied {
			t.Fatalf("deny %q lets %q through; (?i) matches it", glob, name)
		}
		if isASCII(glob+name) && want != denied {
			t.Fatalf("deny %q on %q: %v, the reference says %v", glob, name, denied, want)
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
