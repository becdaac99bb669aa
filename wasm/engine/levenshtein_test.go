package engine

import (
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
	})
}
