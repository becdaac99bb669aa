package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize splits text into normalized index terms: lower case, split at every non-letter,
// non-digit rune and at camelCase boundaries (so snake_case, kebab-case and camelCase
// identifiers match plain words), stop words dropped, and each word reduced by Stem. The index
// builder and the query path call this same function, which is what keeps them in agreement.
func Tokenize(text string) []string {
	var out []string
	eachTerm(text, func(t string) { out = append(out, t) })
	return out
}

// eachTerm calls f with every term Tokenize returns for text, in order, without collecting
// them.
func eachTerm(text string, f func(term string)) {
	eachWord(text, func(w string) {
		if len(w) < 2 || stopwords[w] {
			return
		}
		f(Stem(w))
	})
}

// Words splits text into lower-case words at non-alphanumeric runes and camelCase boundaries,
// without stemming or stop-word removal.
func Words(text string) []string {
	var out []string
	eachWord(text, func(w string) { out = append(out, w) })
	return out
}

// eachWord calls f with every word Words returns for text, in order.
func eachWord(text string, f func(word string)) {
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 {
			f(lower(text[start:end]))
			start = -1
		}
	}
	for i, r := range text {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case !alnum:
			flush(i)
		case start < 0:
			start = i
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
// valid UTF-8): s itself when it has no upper case, else one allocation for ASCII. Written out
// because strings.ToLower, with the strings.Map it calls, costs the WebAssembly module 6 KB.
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
