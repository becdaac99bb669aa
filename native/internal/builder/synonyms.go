package builder

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/caskg/caskg/wasm/engine"
)

// Synonyms are alias rules of the library's owner, read from a file in the Solr synonyms format
// (parseSynonyms), which Elasticsearch and OpenSearch also read. A build applies them as it
// applies the built-in table (builtinAliases): a skill's text is also indexed under the words
// the rules give its words, so a query in those words finds it on every host.
//
// The rules are kept as one-way mappings from a phrase to words, merged, sorted and without
// repeats: two files with the same rules in another order, or with a rule said twice, are the
// same Synonyms and make the same artifact.
type Synonyms struct {
	rules []synonymRule
}

// synonymRule maps the phrase From (its words, space-separated, as engine.Words gives them) to
// the words To, each one term, sorted. Its fields are exported for the build state's gob.
type synonymRule struct {
	From string
	To   []string
}

// Limits of a synonyms file: its size, and the words its rules may add up to (a group of n
// equivalent terms gives n rules of n-1 terms each).
const (
	maxSynonymsBytes = 4 << 20
	maxSynonymWords  = 1 << 20
)

// len is the number of one-way rules: a group of n equivalent terms counts n.
func (s *Synonyms) len() int {
	if s == nil {
		return 0
	}
	return len(s.rules)
}

// Equal reports whether s and t hold the same rules; nil holds none.
func (s *Synonyms) Equal(t *Synonyms) bool {
	return slices.EqualFunc(s.saved(), t.saved(), func(x, y synonymRule) bool {
		return x.From == y.From && slices.Equal(x.To, y.To)
	})
}

// saved is the rules as the build state keeps them: nil for none.
func (s *Synonyms) saved() []synonymRule {
	if s.len() == 0 {
		return nil
	}
	return s.rules
}

// hash is the SHA-256 of the rules, the build parameter "synonyms".
func (s *Synonyms) hash() string {
	h := sha256.New()
	for _, r := range s.rules {
		fmt.Fprintf(h, "%s\x00%s\n", r.From, strings.Join(r.To, "\x00"))
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// ReadSynonyms reads the synonyms file at path (parseSynonyms), for Options.Synonyms.
func ReadSynonyms(path string) (*Synonyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("builder: synonyms: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSynonymsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("builder: synonyms: %w", err)
	}
	return parseSynonyms(path, data)
}

// parseSynonyms reads rules in the Solr synonyms format from data, the text of the file named
// file (for errors, which read FILE:LINE:COL: what is wrong):
//
//	# a comment: a line whose first non-blank character is '#'
//	ipod, i-pod, i pod       equivalent terms: a text with any of them is also indexed under
//	                         the others (Solr's expand=true)
//	i-pod, i pod => ipod     explicit mapping: a text with a left term is also indexed under
//	                         every right term (one way)
//	a\,b, c\=>d              '\' makes the next character literal: ',' and "=>" in a term
//
// Terms may be several words; rules for the same term merge. A text is matched and expanded
// after Tokenize, as the built-in table is, and keeps its own words: an explicit mapping adds
// its right side rather than replacing the left (Solr's a => a, b), since one index serves
// every query and no query is rewritten. Rules do not chain: the words one adds are not
// matched again. An empty term in a list (a trailing comma) is skipped, as Solr does.
func parseSynonyms(file string, data []byte) (*Synonyms, error) {
	if len(data) > maxSynonymsBytes {
		return nil, fmt.Errorf("builder: %s: %d bytes, more than the %d a synonyms file may have", file, len(data), maxSynonymsBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	to := map[string]map[string]bool{}
	words := 0
	line := 0
	for raw := range strings.Lines(string(data)) {
		line++
		raw = strings.TrimRight(raw, "\r\n")
		at := func(col int, format string, a ...any) error {
			return fmt.Errorf("builder: %s:%d:%d: %s", file, line, col, fmt.Sprintf(format, a...))
		}
		if !utf8.ValidString(raw) {
			col := 1 + utf8.RuneCountInString(raw[:invalidUTF8(raw)])
			return nil, at(col, "invalid UTF-8")
		}
		if t := strings.TrimLeftFunc(raw, unicode.IsSpace); t == "" || t[0] == '#' {
			continue
		}
		left, right, err := splitRule(raw)
		if err != nil {
			return nil, at(err.col, "%s", err.msg)
		}
		lhs, err := ruleTerms(left)
		if err != nil {
			return nil, at(err.col, "%s", err.msg)
		}
		// add maps from to the words of rhs but its term skip. Every word counts towards the
		// limit, repeats too: a group of n terms costs n² however few words it has.
		add := func(from synonymTerm, rhs []synonymTerm, skip int) error {
			m := to[from.phrase]
			if m == nil {
				m = map[string]bool{}
				to[from.phrase] = m
			}
			for k, t := range rhs {
				if k == skip {
					continue
				}
				for _, w := range t.words {
					if words++; words > maxSynonymWords {
						return at(from.col, "the rules add up to more than %d words", maxSynonymWords)
					}
					m[w] = true
				}
			}
			return nil
		}
		if right == nil {
			for i, t := range lhs {
				if err := add(t, lhs, i); err != nil {
					return nil, err
				}
			}
			continue
		}
		if len(lhs) == 0 {
			return nil, at(1, "no term before %q", "=>")
		}
		rhs, err := ruleTerms(*right)
		if err != nil {
			return nil, at(err.col, "%s", err.msg)
		}
		if len(rhs) == 0 {
			return nil, at(right.col, "no term after %q", "=>")
		}
		for _, t := range rhs {
			if len(t.words) == 0 {
				return nil, at(t.col, "term %q adds no word an index holds whole (each of its words is several terms)", t.phrase)
			}
		}
		for _, t := range lhs {
			if err := add(t, rhs, -1); err != nil {
				return nil, err
			}
		}
	}
	s := &Synonyms{}
	for _, from := range slices.Sorted(maps.Keys(to)) {
		var ws []string
		self := map[string]bool{}
		for _, term := range engine.Tokenize(from) {
			self[term] = true
		}
		for w := range to[from] {
			// A word of a term the phrase holds (excel => excels) adds nothing to a text it matches.
			if ts := engine.Tokenize(w); len(ts) == 1 && self[ts[0]] {
				continue
			}
			ws = append(ws, w)
		}
		if len(ws) > 0 {
			slices.Sort(ws)
			s.rules = append(s.rules, synonymRule{From: from, To: ws})
		}
	}
	return s, nil
}

// invalidUTF8 is the byte offset of the first invalid UTF-8 sequence in s.
func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return i
			}
		}
	}
	return len(s)
}

// synonymError is a problem at a column (1-based, in runes) of a line.
type synonymError struct {
	col int
	msg string
}

// span is a part of a line: its characters, escapes resolved, and the column it starts at.
// esc marks the characters that were escaped.
type span struct {
	text []rune
	esc  []bool
	col  int
}

// splitRule cuts a line at its "=>" (right nil when it has none), resolving escapes.
func splitRule(line string) (left span, right *span, err *synonymError) {
	cur := &left
	cur.col = 1
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r, esc := rs[i], false
		if r == '\\' {
			if i+1 == len(rs) {
				return left, nil, &synonymError{i + 1, `'\' at the end of the line escapes nothing`}
			}
			i++
			r, esc = rs[i], true
		} else if r == '=' && i+1 < len(rs) && rs[i+1] == '>' {
			if right != nil {
				return left, nil, &synonymError{i + 1, `a second "=>": a rule maps one way once (escape a literal one as \=>)`}
			}
			right = &span{col: i + 3}
			cur = right
			i++
			continue
		}
		cur.text, cur.esc = append(cur.text, r), append(cur.esc, esc)
	}
	return left, right, nil
}

// synonymTerm is one term of a rule: its phrase (words joined by spaces), the words of it that
// are one term each (what an index adds), and its column.
type synonymTerm struct {
	phrase string
	words  []string
	col    int
}

// ruleTerms splits one side of a rule at its unescaped commas into terms; empty ones are left
// out, and a term with no searchable word is an error.
func ruleTerms(s span) ([]synonymTerm, *synonymError) {
	var terms []synonymTerm
	start := 0
	for i := 0; i <= len(s.text); i++ {
		if i < len(s.text) && (s.text[i] != ',' || s.esc[i]) {
			continue
		}
		raw := string(s.text[start:i])
		col := s.col + start + (len([]rune(raw)) - len([]rune(strings.TrimLeftFunc(raw, unicode.IsSpace))))
		start = i + 1
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if len(engine.Tokenize(raw)) == 0 {
			return nil, &synonymError{col, fmt.Sprintf("term %q has no searchable word (only stop words or punctuation)", strings.TrimSpace(raw))}
		}
		ws, _ := aliasWords(raw)
		terms = append(terms, synonymTerm{phrase: strings.Join(engine.Words(raw), " "), words: ws, col: col})
	}
	return terms, nil
}

// with returns the table t followed, for each phrase, by the rules of s: t's own rules keep
// their order, so a build without synonyms indexes what it did before them.
func (t aliasTable) with(s *Synonyms) aliasTable {
	if s.len() == 0 {
		return t
	}
	out := make(aliasTable, len(t))
	for k, rs := range t {
		out[k] = slices.Clip(rs)
	}
	for _, r := range s.rules {
		from := engine.Tokenize(r.From)
		to, terms := aliasWords(strings.Join(r.To, " "))
		if len(from) > 0 && len(to) > 0 {
			out[from[0]] = append(out[from[0]], aliasRule{from, to, terms})
		}
	}
	return out
}
