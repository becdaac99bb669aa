package gateway

import (
	"sort"
	"strings"
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
		d := editDistance(lw, ln)
		ok := d <= limit || len(lw) >= 3 && strings.Contains(ln, lw)
		if _, tool, found := strings.Cut(ln, "__"); found {
			if dt := editDistance(wtool, tool); dt <= toolLimit {
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

// editDistance is the optimal string alignment distance in runes: a swap of neighbours is one
// edit, so "deyn" is one slip from "deny".
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
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
