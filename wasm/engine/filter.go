package engine

import (
	"unicode"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs/errtext"
)

// Bounds of a Filter that keep compiling it sound for any host: it costs a match per skill and
// pattern, so 1,000 patterns over 100,000 skills is the most a request can ask. Services hold
// requests to tighter limits (wasm/service).
const (
	MaxFilterPatterns = 1000 // entries in each of Filter's lists
	MaxPatternBytes   = 1024 // bytes of one entry
)

// Filter narrows a request to some of the library's skills: a skill it leaves out is never a
// seed and never a result, though the propagation may pass through it (rank). A skill is kept
// when its name matches one of Allow (or Allow is empty), its namespace is one of Namespaces
// (or Namespaces is empty), and its name matches none of Deny: every list given narrows, and
// deny wins.
//
// Allow and Deny are globs over the whole name: '*' matches any run of characters (none
// included, '/' and '_' too), '?' one character, every other character itself regardless of
// case (fold). '[', ']' and '\' are reserved (an error), so that character classes can come
// later without changing what a valid pattern means. A namespace is the part of a name before
// its first "__", as the gateway names tools SERVER__TOOL; a name without "__" is in no
// namespace, and namespaces compare regardless of case too. The gateway filters its catalog
// with this same type, so that a pattern means one thing on every surface: a deny that let
// "Delete_All" or "admin/delete_user" past "*delete*" would be a hole, not a style.
type Filter struct {
	Allow      []string `json:"allow,omitempty"`
	Deny       []string `json:"deny,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// Check reports the first entry of f whose syntax is bad, naming it as the request's JSON does
// ("filter.allow[2]"): an empty one, a glob with a reserved character, a namespace with "__".
// The lists' sizes are limits (Limits.Check), which the engine holds a request to first.
func (f *Filter) Check() error {
	for l, v := range [...][]string{f.Allow, f.Deny, f.Namespaces} {
		field := "engine: field \"filter." + filterLists[l]
		for i, p := range v {
			why := GlobProblem(p)
			if l == 2 && p != "" {
				why = ""
				if namespaceEnd(p) < len(p) {
					why = "a namespace has no \"__\" (it is what comes before a name's first \"__\")"
				}
			}
			if why != "" {
				return errtext.New(field + "[" + errtext.Itoa(i) + "]\": " + why)
			}
		}
	}
	return nil
}

// GlobProblem says why p is not a pattern of Filter's Allow and Deny, or "" when it is one.
// The gateway checks its configuration's patterns with it, so that both accept the same ones.
func GlobProblem(p string) string {
	if p == "" {
		return "empty"
	}
	for j := range len(p) {
		if c := p[j]; c == '[' || c == ']' || c == '\\' {
			return "'[', ']' and '\\' are reserved; a pattern has '*' (any run of characters) and '?' (one character)"
		}
	}
	return ""
}

// filterLists names Filter's lists as its JSON does, in Check's order.
var filterLists = [...]string{"allow", "deny", "namespaces"}

// namespaceEnd is where name's namespace ends: the index of its first "__", or len(name) when
// it has none.
func namespaceEnd(name string) int {
	for i := 1; i < len(name); i++ {
		if name[i] == '_' && name[i-1] == '_' {
			return i - 1
		}
	}
	return len(name)
}

// Allows reports whether f keeps the skill called name. f must have passed Check.
func (f *Filter) Allows(name string) bool {
	name = fold(name)
	if len(f.Namespaces) > 0 {
		end := namespaceEnd(name)
		if end == len(name) || !matchAny(f.Namespaces, name[:end], false) {
			return false
		}
	}
	if len(f.Allow) > 0 && !matchAny(f.Allow, name, true) {
		return false
	}
	return !matchAny(f.Deny, name, true)
}

// matchAny reports whether the folded s matches one of globs, or with glob false equals one
// of them, both regardless of case (fold).
//
//go:noinline
func matchAny(globs []string, s string, glob bool) bool {
	for _, g := range globs {
		if g = fold(g); g == s || glob && match(g, s) {
			return true
		}
	}
	return false
}

// fold maps each character of s to one of its case: lower(upper(r)), so that "DELETE",
// "Delete" and "delete" fold alike, as do K, k and the Kelvin sign, or σ, ς and Σ. It joins
// every pair Unicode's simple case folding joins (TestFoldJoinsSimpleFolding), and a few more
// (dotless ı and dotted İ with i), which for a deny is the safe side. It reuses the case
// table unicode.ToLower already brings into the WebAssembly module: unicode.SimpleFold's orbit
// table and loop would cost more. A byte that is not UTF-8 folds to U+FFFD, in patterns and
// names alike. s itself when it is already folded ASCII, else one allocation.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			b := make([]byte, i, len(s)+utf8.UTFMax)
			copy(b, s)
			for _, r := range s[i:] {
				b = utf8.AppendRune(b, unicode.ToLower(unicode.ToUpper(r)))
			}
			return string(b)
		}
	}
	return s
}

// match reports whether name matches the glob p. The literal tail after p's last wildcard is
// compared first: most names a glob such as "*_v2" leaves out fail there at once, and a
// leading '*' would otherwise try every start. Then a failed literal goes back to the last '*'
// and lets it take one more character, so a match costs at most len(p)·len(name) steps, with
// no recursion. Literals compare as bytes: UTF-8 is self-synchronizing, and '*' and '?' step by
// whole characters, so a literal never matches inside a character.
func match(p, name string) bool {
	for i, j := len(p)-1, len(name)-1; i >= 0 && p[i] != '*' && p[i] != '?'; i, j = i-1, j-1 {
		if j < 0 || p[i] != name[j] {
			return false
		}
	}
	px, nx := 0, 0
	star, from := -1, 0 // the last '*' in p, and where in name its run ends
	for px < len(p) || nx < len(name) {
		if px < len(p) {
			switch c := p[px]; {
			case c == '*':
				star, from = px, nx
				px++
				continue
			case nx < len(name) && c == '?':
				px, nx = px+1, nx+runeLen(name[nx:])
				continue
			case nx < len(name) && c == name[nx]:
				px, nx = px+1, nx+1
				continue
			}
		}
		if star < 0 || from == len(name) {
			return false
		}
		from += runeLen(name[from:])
		px, nx = star+1, from
	}
	return true
}

// runeLen is the length in bytes of the character s starts with (1 for a bad byte).
func runeLen(s string) int {
	if s[0] < utf8.RuneSelf {
		return 1
	}
	_, size := utf8.DecodeRuneInString(s)
	return size
}

// compile returns the skills f keeps as a bit set (bit i of word i/64 for skill i), or nil when
// f keeps every skill by having no entries. The set is read-only: the engine keeps the last
// filterSlots sets it compiled, by the filter's entries, and a request with the same filter as
// one of them (an agent's session, a gateway's configuration) reuses its set instead of matching
// every skill's name again, which costs milliseconds at 100,000 skills (BenchmarkFilterCompile).
func (e *Engine) compile(f *Filter) []uint64 {
	if len(f.Allow)+len(f.Deny)+len(f.Namespaces) == 0 {
		return nil
	}
	// The key spells out every list with its entries' lengths, so two filters share a key only
	// when they are equal.
	var key []byte
	for _, l := range [...][]string{f.Allow, f.Deny, f.Namespaces} {
		key = append(key, errtext.Itoa(len(l))...)
		for _, p := range l {
			key = append(append(append(key, ':'), errtext.Itoa(len(p))...), p...)
		}
		key = append(key, ';')
	}
	for i := range e.filters {
		if c := e.filters[i].Load(); c != nil && c.key == string(key) {
			return c.set
		}
	}
	n := e.g.NumSkills()
	set := make([]uint64, (n+63)/64)
	for i := range n {
		if f.Allows(e.g.Name(i)) {
			set[i>>6] |= 1 << (i & 63)
		}
	}
	e.filters[e.nextFilter.Add(1)%filterSlots].Store(&compiledFilter{string(key), set})
	return set
}

// filterSlots is how many compiled filters an engine keeps.
const filterSlots = 4

// compiledFilter is a filter's key (compile) and the skills it keeps.
type compiledFilter struct {
	key string
	set []uint64
}

// kept reports whether the bit set keeps skill i; a nil set keeps every skill.
func kept(set []uint64, i int) bool {
	return set == nil || set[i>>6]&(1<<(i&63)) != 0
}

// keep removes from cs, in place, the candidates set leaves out. Not inlined: it runs twice a
// query, and a copy at each call cost the WebAssembly module its bytes.
//
//go:noinline
func keep(set []uint64, cs []candidate) []candidate {
	if set == nil {
		return cs
	}
	out := cs[:0]
	for _, c := range cs {
		if kept(set, c.id) {
			out = append(out, c)
		}
	}
	return out
}
