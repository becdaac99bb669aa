package cmdline

import (
	"flag"
	"slices"
	"strings"
)

// suggest returns the candidates closest to word, sorted, when they are close enough to be a
// slip of the keyboard: one edit, plus one per four letters, and fewer edits than word has
// letters. Unknown commands and unknown flags both ask it, so both get the same "did you mean".
func suggest(word string, candidates []string) []string {
	n := len([]rune(word))
	limit := min(1+n/4, n-1)
	best := limit + 1
	var near []string
	for _, c := range candidates {
		d := EditDistance(word, c)
		switch {
		case d > limit || d > best:
		case d < best:
			best, near = d, []string{c}
		default:
			near = append(near, c)
		}
	}
	slices.Sort(near)
	return slices.Compact(near)
}

// DidYouMean is suggest as the tail of an error message, "; did you mean X?" (or "X or Y"),
// or "" when nothing is close. prefix goes before each name: "-" for flags.
func DidYouMean(word string, candidates []string, prefix string) string {
	near := suggest(word, candidates)
	if len(near) == 0 {
		return ""
	}
	for i := range near {
		near[i] = prefix + near[i]
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

// flagNames lists the names of fs's flags, without dashes.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	return out
}

// EditDistance is the optimal string alignment distance between a and b in runes: insertions,
// deletions, substitutions and transpositions of neighbours each cost one ("qeury" is one slip
// from "query"). The gateway's suggestions of tool names use it too.
func EditDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j]; three rows suffice.
	prev2, prev, cur := make([]int, len(t)+1), make([]int, len(t)+1), make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
