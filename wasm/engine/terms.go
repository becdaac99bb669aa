package engine

import (
	"math"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/graphs/errtext"
)

// A query's words are tokenized once and each distinct term is looked up once, in a table of
// the artifact's vocabulary the engine builds at load: BM25 and the query encoder then read
// term ids, with no string search per term and no map built per query.

// vocabulary maps every term of the artifact's lexicon and query encoder to its ids in both.
type vocabulary struct {
	ids map[string]int32 // term → 1 + its index into lex and enc (0: absent, read without comma-ok, which links one map accessor fewer into the module)
	lex []int32          // lexicon term id, or -1
	enc []int32          // encoder term id, or -1
}

func newVocabulary(g *graphs.Graph) vocabulary {
	v := vocabulary{ids: make(map[string]int32, g.NumTerms())}
	add := func(term string) int32 {
		k := v.ids[term] - 1
		if k < 0 {
			k = int32(len(v.lex))
			v.ids[term] = k + 1
			v.lex, v.enc = append(v.lex, -1), append(v.enc, -1)
		}
		return k
	}
	for t := range g.NumTerms() {
		v.lex[add(g.Term(t))] = int32(t)
	}
	if g.HasEncoder() {
		for t := range g.NumEncoderTerms() {
			v.enc[add(g.EncoderTerm(t))] = int32(t)
		}
	}
	return v
}

// queryToken is one distinct term of a query, in order of first occurrence: its vocabulary
// index (-1 when the artifact knows it nowhere) and how often the query says it.
type queryToken struct {
	_     [0]func() // not comparable: no equality function in the WebAssembly module
	text  string
	vocab int32
	count int32
}

// maxScannedUnknown is how many distinct unknown terms analyze finds repeats of by a linear
// scan; beyond, by a map. A task text in the library's language has a handful.
const maxScannedUnknown = 32

// analyze tokenizes text (Tokenize) into its distinct terms, in order of first occurrence, in
// sc's buffer: valid until the next call with sc.
func (e *Engine) analyze(sc *scratch, text string) []queryToken {
	out := sc.tokens[:0]
	sc.vocabSeen.reset(len(e.vocab.lex))
	// unknown maps the unknown terms seen to 1 + their place in out, once there are more than
	// a linear scan finds cheaply: a long CJK text against a library in another language is
	// thousands of distinct unknown bigrams, and the scan alone would be quadratic.
	var unknown map[string]int32
	unknowns := 0
	eachTerm(text, func(t string) {
		k := e.vocab.ids[t] - 1
		if k < 0 {
			if unknown != nil {
				if x := unknown[t]; x > 0 {
					out[x-1].count++
					return
				}
				unknown[t] = int32(len(out)) + 1
			} else {
				for i := range out {
					if out[i].vocab < 0 && out[i].text == t {
						out[i].count++
						return
					}
				}
				if unknowns++; unknowns == maxScannedUnknown {
					unknown = make(map[string]int32, 2*maxScannedUnknown)
					for i := range out {
						if out[i].vocab < 0 {
							unknown[out[i].text] = int32(i) + 1
						}
					}
					unknown[t] = int32(len(out)) + 1
				}
			}
			out = append(out, queryToken{text: t, vocab: -1, count: 1})
			return
		}
		if x, ok := sc.vocabSeen.get(int(k)); ok {
			out[x].count++
			return
		}
		sc.vocabSeen.set(int(k), len(out))
		out = append(out, queryToken{text: t, vocab: k, count: 1})
	})
	sc.tokens = out
	return out
}

// unknownNote is Response.Note for a query whose distinct terms are toks: NoTermNote of them
// when the library knows none of them, in its lexicon, its query encoder or as a typo of a
// lexicon term; else "".
func (e *Engine) unknownNote(toks []queryToken) string {
	for _, tk := range toks {
		if tk.vocab >= 0 {
			return ""
		}
	}
	for _, tk := range toks {
		if typoTerms(e.g, &e.terms, tk.text) != nil {
			return ""
		}
	}
	return noTermNote(toks)
}

// NoTermNote names at most maxNoteTerms terms, each clipped to maxNoteTermRunes.
const (
	maxNoteTerms     = 8
	maxNoteTermRunes = 40
)

// NoTermNote is the note of an answer to a query none of whose terms, the distinct terms
// Tokenize gives in order, is in the library's index. Every door that searches a library says
// it in these words.
func NoTermNote(terms []string) string {
	toks := make([]queryToken, len(terms))
	for i, t := range terms {
		toks[i].text = t
	}
	return noTermNote(toks)
}

// noTermNote is NoTermNote of a query's distinct terms toks. It reads the query's tokens rather
// than a list of their texts that unknownNote would build, and concatenates strings rather than
// appending to a byte slice: the other forms cost the WebAssembly module 2 KB more code.
func noTermNote(toks []queryToken) string {
	note := "no term of the query is in this library's index: "
	if len(toks) == 0 {
		return note + "it has only stop words, single letters or symbols"
	}
	for i, tk := range toks[:min(len(toks), maxNoteTerms)] {
		if i > 0 {
			note += ", "
		}
		note += clipRunes(tk.text, maxNoteTermRunes)
	}
	if len(toks) > maxNoteTerms {
		note += " and " + errtext.Itoa(len(toks)-maxNoteTerms) + " more"
	}
	return note
}

// embedTokens is Embed over analyzed tokens: the encoder rows of the known terms, each weighted
// 1 + ln(count) times its encoder weight, summed in order of first occurrence and scaled to
// unit length; nil when no term has a non-zero row. With sc the sum and the vector live in sc's
// buffers until the query ends (Embed passes nil: its caller keeps the vector).
func (e *Engine) embedTokens(sc *scratch, toks []queryToken) []float32 {
	g := e.g
	if !g.HasEncoder() {
		return nil
	}
	var acc []float64
	if sc != nil && cap(sc.acc) >= g.VectorDim() {
		acc = sc.acc[:g.VectorDim()]
		clear(acc)
	} else {
		acc = make([]float64, g.VectorDim())
		if sc != nil {
			sc.acc = acc
		}
	}
	found := false
	for _, tk := range toks {
		if tk.vocab < 0 || e.vocab.enc[tk.vocab] < 0 {
			continue
		}
		row, scale, w := g.EncoderVector(int(e.vocab.enc[tk.vocab]))
		f := (1 + math.Log(float64(tk.count))) * float64(w) * float64(scale)
		if f == 0 {
			continue
		}
		found = true
		// Four components a pass, one bounds check for the four: each sum is its own, so the
		// order within a pass changes nothing.
		row = row[:len(acc)]
		j := 0
		for ; j+4 <= len(row); j += 4 {
			x, a := row[j:j+4:j+4], acc[j:j+4:j+4]
			a[0] += f * float64(x[0])
			a[1] += f * float64(x[1])
			a[2] += f * float64(x[2])
			a[3] += f * float64(x[3])
		}
		for ; j < len(row); j++ {
			acc[j] += f * float64(row[j])
		}
	}
	if !found {
		return nil
	}
	if sc == nil {
		return unit32(acc)
	}
	sc.qvec = unitInto(sc.qvec, acc)
	return sc.qvec
}
