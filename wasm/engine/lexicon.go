package engine

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/caskg/caskg/graphs"
)

// Doc is the text of one skill as the lexical index sees it.
type Doc struct {
	Name        string
	Description string
	Tags        []string
	Schema      string // parameter names and descriptions of a tool's schemas
	Body        string
}

// Field weights of the BM25F-style index: a term in the name counts eight times as much as one
// in the body head or a tool's parameter text. Only the first BodyHeadRunes runes of a body are
// indexed, so a long manual cannot drown its own name. k1 is higher than the textbook 1.2
// because the field weights inflate term frequencies; the values were chosen on the ToolLinkOS
// and SkillsBench task sets (README, results).
const (
	WeightName        = 4.0
	WeightDescription = 2.0
	WeightTags        = 2.0
	WeightSchema      = 0.5
	WeightBody        = 0.5
	BodyHeadRunes     = 1500

	// weightAPIName is the weight of the words before "api" in a name of the form
	// API_api_ENDPOINT (apiNameEnd): every endpoint of that API repeats them, so they say which
	// API a tool belongs to, not what the tool does. At the name's full weight they made every
	// endpoint of the API a multi-need query names most fully outrank the one tool of a need
	// named in fewer words (native/lab/NOTES.md: "API names in endpoint names"). Fitted on the
	// Seal-Tools half-0 verbose-API catalog, the middle of its plateau (0.5–1.5 by nDCG@10).
	weightAPIName = 1.0

	DefaultK1 = 2.0
	DefaultB  = 0.75
)

// BuildLexicon indexes docs (one per skill, in skill order) for BM25 retrieval.
func BuildLexicon(docs []Doc) graphs.Lexicon {
	tf := map[string]map[uint32]float32{}
	lens := make([]float32, len(docs))
	var total float64
	for i, d := range docs {
		add := func(text string, w float32) {
			for _, t := range Tokenize(text) {
				m := tf[t]
				if m == nil {
					m = map[uint32]float32{}
					tf[t] = m
				}
				m[uint32(i)] += w
				lens[i] += w
			}
		}
		j := apiNameEnd(d.Name)
		add(d.Name[:j], weightAPIName)
		add(d.Name[j:], WeightName)
		add(d.Description, WeightDescription)
		for _, tag := range d.Tags {
			add(tag, WeightTags)
		}
		add(d.Schema, WeightSchema)
		add(HeadRunes(d.Body, BodyHeadRunes), WeightBody)
		total += float64(lens[i])
	}
	lx := graphs.Lexicon{K1: DefaultK1, B: DefaultB, DocLen: lens}
	if len(docs) > 0 {
		lx.AvgDL = float32(total / float64(len(docs)))
	}
	for t := range tf {
		lx.Terms = append(lx.Terms, t)
	}
	slices.Sort(lx.Terms)
	lx.Postings = make([][]graphs.Posting, len(lx.Terms))
	for i, t := range lx.Terms {
		ps := make([]graphs.Posting, 0, len(tf[t]))
		for d, f := range tf[t] {
			ps = append(ps, graphs.Posting{Doc: d, TF: f})
		}
		slices.SortFunc(ps, func(a, b graphs.Posting) int { return cmp.Compare(a.Doc, b.Doc) })
		lx.Postings[i] = ps
	}
	return lx
}

// apiNameEnd returns the length of the API part of name, 0 when it has none. Collections of
// REST APIs export their endpoints as API_api_ENDPOINT ("film_api_get_film_info",
// "academic-publishing-api-get-journal"): the API part ends after the first word "api" (any
// case) that has a word before it and one after it, words being separated by '_', '-' or '.'.
func apiNameEnd(name string) int {
	for i := 1; i+4 < len(name); i++ {
		if isNameSep(name[i-1]) && i > 1 && !isNameSep(name[i-2]) &&
			(name[i]|0x20) == 'a' && (name[i+1]|0x20) == 'p' && (name[i+2]|0x20) == 'i' &&
			isNameSep(name[i+3]) && !isNameSep(name[i+4]) {
			return i + 4
		}
	}
	return 0
}

func isNameSep(c byte) bool { return c == '_' || c == '-' || c == '.' }

// HeadRunes returns at most n runes of s, cut at a rune boundary.
func HeadRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := 0; j < n && i < len(s); j++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// queryTerm is one distinct query term found in the lexicon, with its weight in the query.
type queryTerm struct {
	term   int
	weight float64
	tok    int // the query token it stands for: a misspelt word stands for several terms
}

// bm25Impacts returns, for every posting of the lexicon in storage order, its term-frequency
// factor tf·(k1+1)/(tf + k1·(1 − b + b·len/avg)): what BM25 adds for it, before the term's idf
// and query weight. Computing them once per engine spares each posting a division and a look-up
// of its document's length at query time; at 100,000 skills a query reads 160,000 postings.
func bm25Impacts(g *graphs.Graph) []float64 {
	k1, b, avg := g.BM25()
	if avg <= 0 {
		avg = 1
	}
	norms := make([]float64, g.NumSkills())
	for d := range norms {
		norms[d] = float64(k1) * (1 - float64(b) + float64(b)*float64(g.DocLen(d))/float64(avg))
	}
	var total int
	if g.NumTerms() > 0 {
		_, total = g.Postings(g.NumTerms() - 1)
	}
	impacts := make([]float64, total)
	for p := range impacts {
		d, tf := g.Posting(p)
		impacts[p] = float64(tf) * (float64(k1) + 1) / (float64(tf) + norms[d])
	}
	return impacts
}

// bm25 adds the BM25 score of every document containing a query term to scores (indexed by
// skill, zero beforehand). impacts are bm25Impacts(g).
//
// The loop over the postings has no branch but its own and takes four postings a pass. In
// WebAssembly each taken branch, the loop's own included, goes through the function's block
// dispatcher (how Go compiles for it); at 100,000 skills a query reads 160,000 postings. Nothing
// keeps a list of the scored skills: the passes after it read the score array in order, and the
// caller clears it whole.
func bm25(g *graphs.Graph, impacts []float64, terms []queryTerm, scores []float64) {
	n := float64(g.NumSkills())
	for _, qt := range terms {
		lo, hi := g.Postings(qt.term)
		ps := g.PostingBytes(qt.term)
		w := qt.weight * idf(n, hi-lo)
		imp := impacts[lo:hi]
		ps = ps[:8*len(imp)] // one length for both: no bounds check below
		i := 0
		for ; i+4 <= len(imp); i += 4 {
			q, x := ps[8*i:8*i+32:8*i+32], imp[i:i+4:i+4]
			scores[binary.LittleEndian.Uint32(q)] += w * x[0]
			scores[binary.LittleEndian.Uint32(q[8:])] += w * x[1]
			scores[binary.LittleEndian.Uint32(q[16:])] += w * x[2]
			scores[binary.LittleEndian.Uint32(q[24:])] += w * x[3]
		}
		for ; i < len(imp); i++ {
			scores[binary.LittleEndian.Uint32(ps[8*i:])] += w * imp[i]
		}
	}
}

// idf is BM25's inverse document frequency of a term in df of n skills.
func idf(n float64, df int) float64 {
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}
