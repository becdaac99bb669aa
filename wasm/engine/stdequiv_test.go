package engine

import (
	"strings"
	"testing"
	"unicode"
)

// The functions written out to keep the WebAssembly module small are held to the standard
// library's compositions they replace.

// oneLineRef is what oneLine was: strings.Map, Fields and Join.
func oneLineRef(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, cleanText(s))
	return clipRunes(strings.Join(strings.Fields(s), " "), n)
}

var oneLineCases = []string{
	"", " ", "word", " word", "word ", "  two  words  ", "a\tb\nc\r\nd", "\x00a\x1fb\x7f",
	"x\u0085y\u00a0z", "ok\u2028line\u3000end", "\xff bad \xfe", "é à", "\u200bzero width",
	"long description with many words that runs past the clip at some point or other",
}

func TestOneLineMatchesStrings(t *testing.T) {
	for _, s := range oneLineCases {
		for _, n := range []int{0, 1, 3, 10, MaxBudget} {
			if got, want := oneLine(s, n), oneLineRef(s, n); got != want {
				t.Errorf("oneLine(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

func FuzzOneLine(f *testing.F) {
	for _, s := range oneLineCases {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if got, want := oneLine(s, n), oneLineRef(s, n); got != want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", s, n, got, want)
		}
	})
}

var lowerCases = []string{
	"", "abc", "ABC", "getUser", "aB", "HTTP2", "éÉ", "ÀB", "straße", "ΣΑΣ", "İstanbul",
	"ǅ", "ꞫⱭ", "x\U0001D400", "\U00010400abc", "ｈＥＬＬＯ１２",
}

// stdLower is lower by the standard library: strings.ToLower after folding the fullwidth
// forms of ASCII (U+FF01 to U+FF5E) onto ASCII, as lower does.
func stdLower(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 0xFF01 && r <= 0xFF5E {
			return r - (0xFF01 - '!')
		}
		return r
	}, s))
}

func TestLowerMatchesStrings(t *testing.T) {
	for _, s := range lowerCases {
		if got, want := lower(s), stdLower(s); got != want {
			t.Errorf("lower(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzLower feeds lower what eachWord does: words of letters and digits.
func FuzzLower(f *testing.F) {
	for _, s := range lowerCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		eachWord(s, func(w string) {
			if got, want := w, strings.ToLower(w); got != want {
				t.Errorf("eachWord(%q) gave %q, want %q", s, got, want)
			}
		})
		if !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if got, want := lower(s), stdLower(s); got != want {
				t.Errorf("lower(%q) = %q, want %q", s, got, want)
			}
		}
	})
}

func TestSectionString(t *testing.T) {
	for _, tt := range []struct {
		s    section
		want string
	}{
		{section{heading: "h"}, "h"},
		{section{heading: "h", source: "s"}, "h\ns"},
		{section{heading: "h", desc: "d", source: "s", evidence: []string{"- a", "- b"}}, "h\nd\ns\n- a\n- b"},
		{section{heading: "h", evidence: []string{"- a"}, body: "b"}, "h\n- a\n\nb"},
		{section{heading: "h", desc: "d", body: "b", cut: true}, "h\nd\n\nb\n" + cutMark},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.s, got, tt.want)
		}
	}
}
