package engine

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/agnivade/levenshtein"
)

// editDistance must agree with a plain Levenshtein implementation wherever it claims to be exact.
var distanceCases = []struct{ a, b string }{
	{"", ""}, {"", "abc"}, {"abc", ""}, {"kitten", "sitting"}, {"flaw", "lawn"},
	{"extract", "extarct"}, {"pdf extract", "pdf extarct tables"}, {"héllo", "hello"},
	{"日本語", "日本"}, {"aaaa", "aaab"}, {"abcdef", "fedcba"}, {"same", "same"},
	{"a long identifier name", "a lung identifier named"}, {"x", "y"},
}

func TestEditDistance(t *testing.T) {
	for _, c := range distanceCases {
		want := levenshtein.ComputeDistance(c.a, c.b)
		for bound := 0; bound <= want+2; bound++ {
			got := editDistance(c.a, c.b, bound)
			if want <= bound && got != want || want > bound && got <= bound {
				t.Errorf("editDistance(%q, %q, %d) = %d, distance %d", c.a, c.b, bound, got, want)
			}
		}
		if d := bits.OnesCount32(charMask(c.a) ^ charMask(c.b)); d > 2*want {
			t.Errorf("charMask(%q) and charMask(%q) differ in %d bits, more than twice the distance %d", c.a, c.b, d, want)
		}
	}
}

func FuzzEditDistance(f *testing.F) {
	for _, c := range distanceCases {
		f.Add(c.a, c.b, 2)
	}
	f.Fuzz(func(t *testing.T, a, b string, bound int) {
		if len(a) > 200 || len(b) > 200 || bound < 0 || bound > 300 {
			return
		}
		want := levenshtein.ComputeDistance(a, b)
		got := editDistance(a, b, bound)
		if want <= bound && got != want || want > bound && got <= bound {
			t.Errorf("editDistance(%q, %q, %d) = %d, distance %d", a, b, bound, got, want)
		}
		if d := bits.OnesCount32(charMask(a) ^ charMask(b)); d > 2*want {
			t.Errorf("charMask(%q) and charMask(%q) differ in %d bits, more than twice the distance %d", a, b, d, want)
		}
	})
}

// TestTypoTermsMatchesScan holds typoTerms, which skips terms by their character masks, to the
// plain scan: every term with the same first byte at the least distance found, up to the bound.
func TestTypoTermsMatchesScan(t *testing.T) {
	e := randomLibrary(t, 300, 8)
	g := e.g
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := "abcdefghijklmnopqrstuvwxyz0123456789é"
	checked := 0
	for k := 0; k < 3000; k++ {
		w := []rune(g.Term(rng.IntN(g.NumTerms())))
		for range 1 + rng.IntN(3) { // one to three random edits after the first rune
			if len(w) < 2 {
				break
			}
			i, c := 1+rng.IntN(len(w)-1), []rune(alphabet)[rng.IntN(len([]rune(alphabet)))]
			switch rng.IntN(3) {
			case 0:
				w[i] = c
			case 1:
				w = append(w[:i], w[i+1:]...)
			default:
				w = append(w[:i], append([]rune{c}, w[i:]...)...)
			}
		}
		word := string(w)
		if _, ok := g.FindTerm(word); ok || len(word) < minTypoLength {
			continue
		}
		maxd := 1
		if len(word) >= 8 {
			maxd = 2
		}
		var want []int
		bestd := maxd
		for term := range g.NumTerms() {
			s := g.Term(term)
			if s[0] != word[0] {
				continue
			}
			switch d := levenshtein.ComputeDistance(word, s); {
			case d < bestd || d == bestd && want == nil:
				want, bestd = []int{term}, d
			case d == bestd:
				want = append(want, term)
			}
		}
		checked++
		if got := typoTerms(g, &e.terms, word); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("typoTerms(%q) = %v, scan %v", word, got, want)
		}
	}
	if checked < 500 {
		t.Fatalf("only %d words checked", checked)
	}
}
