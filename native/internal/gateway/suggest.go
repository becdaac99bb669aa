package gateway

import (
	"sort"
	"strings"

	"github.com/caskg/caskg/native/internal/cmdline"
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
// edit per four letters of word, or containing it, or whose part after "__" is within one edit
// per three letters of word's (so "read_file" finds "fs__read_file").
func suggestions(word string, names []string, n int) []string {
	lw := strings.ToLower(word)
	wtool := lw
	if _, t, ok := strings.Cut(lw, "__"); ok {
		wtool = t
	}
	limit, toolLimit := max(1, len([]rune(lw))/4), max(1, len([]rune(wtool))/3)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		ln := strings.ToLower(name)
		d := cmdline.EditDistance(lw, ln)
		ok := d <= limit || len(lw) >= 3 && strings.Contains(ln, lw)
		if _, tool, found := strings.Cut(ln, "__"); found {
			if dt := cmdline.EditDistance(wtool, tool); dt <= toolLimit {
				ok, d = true, min(d, dt)
			}
		}
		if ok {
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
