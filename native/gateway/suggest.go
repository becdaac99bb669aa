package gateway

import (
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// nearest is the known word closest to word when it is close enough to be a slip: at most one
// edit per three letters. "" when none is.
func nearest(word string, known []string) string {
	near := suggestions(word, known, 1)
	if len(near) == 0 {
		return ""
	}
	return near[0]
}

// suggestions are up to n names closest to word, closest first (then by name): names within one
// edit per three letters of word, or containing it, or whose part after "__" is within that
// distance of word's (so "read_file" finds "fs__read_file").
func suggestions(word string, names []string, n int) []string {
	lw := strings.ToLower(word)
	limit := max(1, len([]rune(word))/3)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		ln := strings.ToLower(name)
		d := levenshtein.ComputeDistance(lw, ln)
		if _, tool, ok := strings.Cut(ln, "__"); ok {
			if _, wtool, ok := strings.Cut(lw, "__"); ok {
				d = min(d, levenshtein.ComputeDistance(wtool, tool)+1)
			} else {
				d = min(d, levenshtein.ComputeDistance(lw, tool))
			}
		}
		if d > limit && len(lw) >= 3 && strings.Contains(ln, lw) {
			d = limit
		}
		if d <= limit {
			cs = append(cs, cand{name, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := make([]string, 0, min(n, len(cs)))
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}
