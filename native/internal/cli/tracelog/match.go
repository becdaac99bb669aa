package tracelog

import (
	"strings"
	"unicode"
)

// How says how a call's name matched a skill.
type How int

const (
	Unmatched How = iota
	Exact
	Normalized
)

// A Matcher maps the names logs call to an artifact's skill names: exactly, or else by their
// normalized keys (key), trying the name and then the name less each server prefix in turn
// (candidates). Two skills with one key match neither by it: a guess could pick the wrong one.
type Matcher struct {
	exact map[string]bool
	byKey map[string]string // "" for a key two skills share
}

// NewMatcher returns a Matcher over the skill names.
func NewMatcher(names []string) *Matcher {
	m := &Matcher{exact: map[string]bool{}, byKey: map[string]string{}}
	for _, n := range names {
		m.exact[n] = true
		k := key(n)
		if prev, ok := m.byKey[k]; ok && prev != n {
			m.byKey[k] = ""
		} else {
			m.byKey[k] = n
		}
	}
	return m
}

// Match returns the skill that name calls and how it matched; "" and Unmatched for none.
func (m *Matcher) Match(name string) (string, How) {
	if m.exact[name] {
		return name, Exact
	}
	for _, c := range candidates(name) {
		if s := m.byKey[key(c)]; s != "" {
			return s, Normalized
		}
	}
	return "", Unmatched
}

// key normalizes a name: camelCase words split, lower case, and every run of separators
// ('-', '_', '.', white space) one '-', none at either end.
func key(s string) string {
	var b strings.Builder
	sep := false
	var prev rune
	for _, r := range s {
		switch {
		case r == '-' || r == '_' || r == '.' || unicode.IsSpace(r):
			sep = b.Len() > 0
		default:
			if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) && b.Len() > 0 {
				sep = true
			}
			if sep {
				b.WriteByte('-')
				sep = false
			}
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return b.String()
}

// candidates is name followed by what is left as its server prefixes come off one by one:
// "mcp__" first, then a "server__", "server/", "plugin:" or "server." prefix.
func candidates(name string) []string {
	out := []string{name}
	for s := name; ; {
		next, ok := stripPrefix(s)
		if !ok {
			return out
		}
		out = append(out, next)
		s = next
	}
}

func stripPrefix(s string) (string, bool) {
	if len(s) > 5 && strings.EqualFold(s[:5], "mcp__") {
		return s[5:], true
	}
	if i := strings.Index(s, "__"); i > 0 && i+2 < len(s) {
		return s[i+2:], true
	}
	for _, sep := range []string{"/", ":"} {
		if i := strings.LastIndex(s, sep); i >= 0 && i+1 < len(s) {
			return s[i+1:], true
		}
	}
	if i := strings.Index(s, "."); i > 0 && i+1 < len(s) {
		return s[i+1:], true
	}
	return s, false
}
