package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize splits text into normalized index terms: lower case, split at every non-letter,
// non-digit rune and at camelCase boundaries (so snake_case, kebab-case and camelCase
// identifiers match plain words), stop words dropped, and each word reduced by Stem. A run of
// Chinese, Japanese or Korean letters (isCJK), written without spaces between its words, gives
// its overlapping bigrams instead ("查询北京" → 查询, 询北, 北京), or itself when it is one
// character, as Lucene's CJK analyzer does: two texts that share words share bigrams, whatever
// else surrounds them. The index builder and the query path call this same function, which is
// what keeps them in agreement.
func Tokenize(text string) []string {
	var out []string
	eachTerm(text, func(t string) { out = append(out, t) })
	return out
}

// eachTerm calls f with every term Tokenize returns for text, in order, without collecting
// them.
func eachTerm(text string, f func(term string)) {
	eachWord(text, func(w string) {
		// A word is all CJK or has none (eachWord splits at the script), and a CJK word starts
		// with a byte of 0xE1 or above (U+1100 is the first CJK letter).
		if w[0] >= 0xE1 {
			if r, n := utf8.DecodeRuneInString(w); isCJK(r) {
				eachBigram(w, n, f)
				return
			}
		}
		if len(w) < 2 || stopwords[w] {
			return
		}
		f(Stem(w))
	})
}

// eachBigram calls f with the overlapping two-rune pieces of the CJK word w, whose first rune
// is n bytes long, or with w when it is one rune. The pieces are w's own bytes: no allocation.
func eachBigram(w string, n int, f func(term string)) {
	if n == len(w) {
		f(w)
		return
	}
	for start := 0; n < len(w); {
		_, m := utf8.DecodeRuneInString(w[n:])
		f(w[start : n+m])
		start, n = n, n+m
	}
}

// isCJK reports whether r belongs to the scripts Tokenize cuts into bigrams: Han (with its
// radicals, strokes and the ideographic planes), Hiragana, Katakana (half-width included),
// Bopomofo and Hangul (syllables and jamo). The blocks are written out: unicode.Is with the
// script tables would cost the WebAssembly module their data. Only letters reach it (eachWord),
// so the symbols within the blocks do not matter.
func isCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x11FF: // Hangul jamo
		return true
	case r < 0x2E80:
		return false
	case r <= 0x9FFF: // radicals, CJK symbols (々), kana, bopomofo, compatibility jamo, ideographs
		return true
	}
	return r >= 0xA960 && r <= 0xA97F || // Hangul jamo extended A
		r >= 0xAC00 && r <= 0xD7FF || // Hangul syllables, jamo extended B
		r >= 0xF900 && r <= 0xFAFF || // compatibility ideographs
		r >= 0xFF66 && r <= 0xFFDC || // half-width katakana and Hangul
		r >= 0x20000 && r <= 0x3FFFF // supplementary and tertiary ideographic planes
}

// Words splits text into lower-case words at non-alphanumeric runes, camelCase boundaries and
// where CJK letters (isCJK) meet others ("用Python查询" → 用, python, 查询), without stemming,
// stop-word removal or bigrams: a CJK run is one word.
func Words(text string) []string {
	var out []string
	eachWord(text, func(w string) { out = append(out, w) })
	return out
}

// eachWord calls f with every word Words returns for text, in order.
func eachWord(text string, f func(word string)) {
	start := -1
	var prev rune
	cjk := false // the word from start is CJK
	flush := func(end int) {
		if start >= 0 {
			f(lower(text[start:end]))
			start = -1
		}
	}
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		c := isCJK(r) // once a rune, not in two cases: 0.4 KB less of the WebAssembly module
		switch {
		case !alnum:
			flush(i)
		case start < 0:
			start, cjk = i, c
		case c != cjk:
			flush(i)
			start, cjk = i, c
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			// "getUserName" → get, user, name.
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev):
			// "HTTPServer" → http, server: the last capital starts the next word.
			p := i - utf8.RuneLen(prev)
			flush(p)
			start = p
		}
		if alnum {
			prev = r
		} else {
			prev = 0
		}
	}
	flush(len(text))
}

// lower is strings.ToLower for a word of eachWord, whose runes are all letters and digits (so
// valid UTF-8), with full-width Latin letters and digits folded to ASCII ("ＰＤＦ" → pdf, as
// CJK text often writes them): s itself when it is lower-case ASCII, else one allocation.
// Written out because strings.ToLower, with the strings.Map it calls, costs the WebAssembly
// module 6 KB.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return lowerFrom(s, i)
		}
	}
	return s
}

// lowerFrom is lower of s whose first i bytes are lower-case ASCII.
func lowerFrom(s string, i int) string {
	b := make([]byte, i, len(s))
	copy(b, s)
	for _, r := range s[i:] {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFF01 - '!'
		}
		b = utf8.AppendRune(b, unicode.ToLower(r))
	}
	return string(b)
}

// trimLeft is strings.TrimLeftFunc and trimRight strings.TrimRightFunc: the engine's trims,
// strings.TrimSpace and TrimFunc among them, go through these two, which spares the WebAssembly
// module the standard library's trim family (3 KB).
func trimLeft(s string, f func(rune) bool) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !f(r) {
			break
		}
		s = s[n:]
	}
	return s
}

func trimRight(s string, f func(rune) bool) string {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !f(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}

// Stem is a light, deterministic English suffix stripper: it folds plurals, -ing and -ed forms
// onto one key ("heats", "heated", "heating" → "heat"; "measure", "measured" → "measur").
// It is deliberately simpler than Porter's algorithm; what matters is that it is applied the
// same way to documents and queries.
func Stem(w string) string {
	if len(w) <= 3 || !isASCIIWord(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = w[:len(w)-2]
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	if n := len(w); n > 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) && w[n-1] != 's' {
		w = w[:n-1]
	}
	return w
}

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func isVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

// stopwords are frequent English function words that carry no retrieval signal.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	// Split by eachWord, which the module links anyway, rather than strings.Fields (3.6 KB).
	eachWord(`a an and are as at be been being but by can could did do does
		for from had has have he her him his how i if in into is it its itself just me my no nor not
		of off on once only or other our ours out over own please same she should so some such than
		that the their them then there these they this those through to too under until up very
		was we were what when where which while who whom why will with would you your yours
		also any each few more most both all again about above after before below between during
		further here let may might must shall us via`, func(w string) { m[w] = true })
	return m
}()
