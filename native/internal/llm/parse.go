package llm

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxJSONStarts bounds how many '{' ParseScore tries to decode from, so a long answer full of
// braces costs linear time, not quadratic.
const maxJSONStarts = 64

// ParseScore extracts a score in [0,1] from a model's answer. The rules, in order:
//
//  1. JSON: the first {...} that decodes as an object with a "score" key (any case), also inside
//     ```json fences or surrounded by text. The value may be a number or a numeric string
//     ("0.7", "70%"). Once such an object is found its verdict is final: a score outside [0,1],
//     NaN, or a non-numeric value rejects the answer.
//  2. A number at the end of the text (trailing spaces and closing punctuation such as . } ) *
//     ignored). It is final too: "score: 7" is rejected, not rescaled.
//  3. The first number in [0,1] anywhere in the text.
//
// Numbers are written like "0.7", ".7", "1", "0" or as percentages ("70%" is 0.7); a leading
// minus makes them negative (and so out of range). Numbers glued to letters ("gpt4", "7th") or
// versions ("1.2.3") are not numbers. Scale mentions are not answers: both ends of a range
// ("0 to 1", "0-1", "[0, 1]", "between 0 and 1") are ignored, and in a fraction ("7/10",
// "3 out of 5") both numbers are ignored unless the denominator is 1 ("0.8 out of 1" is 0.8).
//
// ParseScore never guesses: if no rule applies it returns 0, false.
func ParseScore(text string) (float64, bool) {
	if v, ok := parseScore(text); ok {
		return v, true
	}
	return 0, false
}

func parseScore(text string) (float64, bool) {
	if v, found, ok := jsonScore(text); found {
		return v, ok
	}
	toks := candidates(text)
	if len(toks) > 0 {
		trimmed := strings.TrimRightFunc(text, func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune(".,;:!?)]}\"'*`", r)
		})
		if last := toks[len(toks)-1]; last.end == len(trimmed) {
			return last.val, inUnit(last.val)
		}
	}
	for _, t := range toks {
		if inUnit(t.val) {
			return t.val, true
		}
	}
	return 0, false
}

func inUnit(v float64) bool { return v >= 0 && v <= 1 } // false for NaN

// jsonScore applies rule 1. found reports whether an object with a score key was decoded.
func jsonScore(text string) (v float64, found, ok bool) {
	from := 0
	for range maxJSONStarts {
		i := strings.IndexByte(text[from:], '{')
		if i < 0 {
			return 0, false, false
		}
		start := from + i
		from = start + 1
		dec := json.NewDecoder(strings.NewReader(text[start:]))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) != nil {
			continue
		}
		val, has := obj["score"]
		if !has {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys) // deterministic when several keys differ only in case
			for _, k := range keys {
				if strings.EqualFold(k, "score") {
					val, has = obj[k], true
					break
				}
			}
		}
		if !has {
			continue
		}
		switch x := val.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			return f, true, err == nil && inUnit(f)
		case string:
			s := strings.TrimSpace(x)
			toks := scanNumbers(s)
			if len(toks) != 1 || toks[0].start != 0 || toks[0].end != len(s) {
				return 0, true, false
			}
			return toks[0].val, true, inUnit(toks[0].val)
		default:
			return 0, true, false
		}
	}
	return 0, false, false
}

// numTok is a number written in free text.
type numTok struct {
	start, end int     // byte span in the text, sign and '%' included
	val        float64 // signed, percentages divided by 100
}

// candidates returns the numbers of text that may be the answer: scale mentions (ranges and
// fractions, see ParseScore) are left out.
func candidates(text string) []numTok {
	toks := scanNumbers(text)
	drop := make([]bool, len(toks))
	for k := 1; k < len(toks); k++ {
		a, b := toks[k-1], toks[k]
		sep := strings.ToLower(strings.TrimSpace(text[a.end:b.start]))
		if sep == "" && text[b.start] == '-' {
			sep = "-" // "0 -1": the minus joins a range, it does not make b negative
		}
		switch sep {
		case "/", "out of":
			drop[k] = true
			if b.val != 1 {
				drop[k-1] = true
			}
		case "to", "-", "–", "—", "..":
			drop[k-1], drop[k] = true, true
		case "and":
			before := strings.TrimRightFunc(text[:a.start], unicode.IsSpace)
			if len(before) >= 7 && strings.EqualFold(before[len(before)-7:], "between") {
				drop[k-1], drop[k] = true, true
			}
		case ",":
			before := strings.TrimRightFunc(text[:a.start], unicode.IsSpace)
			after := strings.TrimLeftFunc(text[b.end:], unicode.IsSpace)
			if strings.HasSuffix(before, "[") || strings.HasSuffix(before, "(") {
				if strings.HasPrefix(after, "]") || strings.HasPrefix(after, ")") {
					drop[k-1], drop[k] = true, true
				}
			}
		}
	}
	out := toks[:0]
	for k, t := range toks {
		if !drop[k] {
			out = append(out, t)
		}
	}
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// wordRune reports whether r glues onto a number to make it part of a word ("gpt4", "7th").
func wordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// scanNumbers finds the numbers written in s: digits with an optional fraction (".7" too), an
// optional leading '-' and an optional trailing '%'.
func scanNumbers(s string) []numTok {
	var out []numTok
	for i := 0; i < len(s); {
		startsNumber := isDigit(s[i]) || (s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]))
		if !startsNumber {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		glued := false
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(s[:i])
			glued = wordRune(r) || r == '.'
		}
		if j < len(s) {
			r, _ := utf8.DecodeRuneInString(s[j:])
			glued = glued || wordRune(r) || (r == '.' && j+1 < len(s) && isDigit(s[j+1]))
		}
		if glued {
			// Skip the whole word or version so its tail is not read as a number.
			for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == '_' || s[j] < utf8.RuneSelf && unicode.IsLetter(rune(s[j]))) {
				j++
			}
			i = j
			continue
		}
		v, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil || math.IsInf(v, 0) {
			v = math.Inf(1) // absurdly long digit runs: out of range, never a score
		}
		t := numTok{start: i, end: j, val: v}
		if j < len(s) && s[j] == '%' {
			t.end++
			t.val /= 100
		}
		if i > 0 && s[i-1] == '-' {
			minusGlued := false
			if i > 1 {
				r, _ := utf8.DecodeLastRuneInString(s[:i-1])
				minusGlued = wordRune(r)
			}
			if !minusGlued {
				t.start--
				t.val = -t.val
			}
		}
		out = append(out, t)
		i = t.end
	}
	return out
}
