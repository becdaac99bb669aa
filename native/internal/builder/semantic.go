package builder

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/embed"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// skillTextBodyRunes is how much of a skill's body skillText keeps: the body head the lexicon
// indexes. Sentence models truncate long texts themselves; the builtin model gains from the
// procedure's vocabulary (SkillsBench R@10 with semantic seeds: 0.846 with 600 runes, 0.868
// with 1,500).
const skillTextBodyRunes = engine.BodyHeadRunes

// skillText is the text of a skill that gets embedded: its name as words, its title, its
// description, its tags and the head of its body (or, for a tool, its parameters).
func skillText(s ingest.Skill) string {
	var b strings.Builder
	b.WriteString(strings.Join(engine.Words(s.Name), " "))
	if s.Title != "" && !strings.EqualFold(s.Title, s.Name) {
		b.WriteString(" — ")
		b.WriteString(s.Title)
	}
	b.WriteString(": ")
	b.WriteString(s.Description)
	if len(s.Tags) > 0 {
		b.WriteString("\nTags: ")
		b.WriteString(strings.Join(s.Tags, ", "))
	}
	extra := s.Body
	if extra == "" {
		extra = s.SchemaText
	}
	if extra = strings.TrimSpace(engine.HeadRunes(extra, skillTextBodyRunes)); extra != "" {
		b.WriteString("\n")
		b.WriteString(extra)
	}
	return b.String()
}

// embedSkills embeds skills (already sorted by name: vector i belongs to skill i) and makes the
// artifact's query encoder. For a model that is itself a term table (the builtin model) the
// encoder is the model; otherwise it is distilled from the model: every term of the library's
// vocabulary (engine.Tokenize, the query-side tokenizer) is embedded through its most frequent
// surface word and weighted by its IDF over the skill texts.
func embedSkills(ctx context.Context, emb embed.Embedder, skills []ingest.Skill) (*graphs.Vectors, *graphs.QueryEncoder, error) {
	if len(skills) == 0 {
		return nil, nil, fmt.Errorf("builder: no skills to embed")
	}
	texts := make([]string, len(skills))
	for i, s := range skills {
		texts[i] = skillText(s)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("builder: embedding %d skills with %s: %w", len(skills), emb.ID(), err)
	}
	if len(vecs) != len(skills) {
		return nil, nil, fmt.Errorf("builder: %s returned %d vectors for %d skills", emb.ID(), len(vecs), len(skills))
	}
	vectors, err := graphs.NewVectors(emb.ID(), vecs)
	if err != nil {
		return nil, nil, fmt.Errorf("builder: skill vectors of %s: %w", emb.ID(), err)
	}

	var terms []string
	var weights []float32
	var tvecs [][]float32
	inner := emb
	if w, ok := emb.(interface{ Unwrap() embed.Embedder }); ok {
		inner = w.Unwrap()
	}
	if te, ok := inner.(embed.TermEncoder); ok {
		terms, weights, tvecs = te.QueryEncoder()
	} else {
		var surface []string
		terms, weights, surface = vocabulary(texts)
		if tvecs, err = emb.Embed(ctx, surface); err != nil {
			return nil, nil, fmt.Errorf("builder: embedding %d vocabulary terms with %s: %w", len(surface), emb.ID(), err)
		}
		if len(tvecs) != len(terms) {
			return nil, nil, fmt.Errorf("builder: %s returned %d vectors for %d terms", emb.ID(), len(tvecs), len(terms))
		}
		if tvecs, err = distil(texts, terms, weights, tvecs, vecs); err != nil {
			return nil, nil, fmt.Errorf("builder: distilling the query encoder of %s: %w", emb.ID(), err)
		}
	}
	if len(terms) == 0 {
		return vectors, nil, nil
	}
	enc, err := graphs.NewQueryEncoder(terms, weights, tvecs)
	if err != nil {
		return nil, nil, fmt.Errorf("builder: query encoder of %s: %w", emb.ID(), err)
	}
	if enc.Dim != vectors.Dim {
		return nil, nil, fmt.Errorf("builder: %s gave %d-dimensional skill vectors but %d-dimensional term vectors",
			emb.ID(), vectors.Dim, enc.Dim)
	}
	return vectors, enc, nil
}

// Distillation fits the term vectors to the teacher's skill vectors by ridge regression when
// the library is small enough for an N×N solve.
var (
	distilMaxSkills = 4000
	distilRidge     = 0.1 // λ as a share of the mean squared norm of a skill's term row
)

// distil corrects the word-level term vectors v0 so that the encoder formula applied to each
// skill text points where the teacher's vector of that text points: with X the N×T matrix of
// the texts' encoder weights ((1 + ln tf)·IDF), it returns V = V0 + Xᵀ(XXᵀ + λI)⁻¹(E − XV0),
// the smallest change to V0 (ridge regression) that moves XV toward E. The targets E are the
// teacher's unit vectors scaled to the length of XV0's rows, since only directions matter. The
// teacher's knowledge of whole texts thereby spreads onto the terms, where embedding single
// words alone loses it (a word's embedding is unit length, whatever its weight in context).
func distil(texts, terms []string, idf []float32, v0, target [][]float32) ([][]float32, error) {
	n := len(texts)
	if n > distilMaxSkills || n == 0 || len(v0) == 0 {
		return v0, nil
	}
	dim := len(v0[0])
	type entry struct {
		term int
		x    float64
	}
	rows := make([][]entry, n)
	post := make([][]int, len(terms)) // docs of each term, ascending
	for d, text := range texts {
		ts, ws := engine.QueryTerms(text)
		for i, t := range ts {
			k := sort.SearchStrings(terms, t)
			if k < len(terms) && terms[k] == t {
				rows[d] = append(rows[d], entry{k, ws[i] * float64(idf[k])})
				post[k] = append(post[k], d)
			}
		}
	}
	// Residuals R = E' − X·V0 and the Gram matrix K = X·Xᵀ.
	r := mat.NewDense(n, dim, nil)
	var meanDiag float64
	for d, row := range rows {
		p := make([]float64, dim)
		for _, e := range row {
			for j, x := range v0[e.term] {
				p[j] += e.x * float64(x)
			}
		}
		var pn float64
		for _, x := range p {
			pn += x * x
		}
		pn = math.Sqrt(pn)
		for j := range dim {
			r.Set(d, j, float64(target[d][j])*pn-p[j])
		}
	}
	k := mat.NewSymDense(n, nil)
	weight := make([]map[int]float64, n)
	for d, row := range rows {
		weight[d] = make(map[int]float64, len(row))
		for _, e := range row {
			weight[d][e.term] = e.x
		}
	}
	for a, row := range rows {
		acc := map[int]float64{}
		for _, e := range row {
			for _, b := range post[e.term] {
				if b >= a {
					acc[b] += e.x * weight[b][e.term]
				}
			}
		}
		for b, v := range acc {
			k.SetSym(a, b, v)
		}
		meanDiag += acc[a]
	}
	meanDiag /= float64(n)
	lambda := distilRidge * max(meanDiag, 1e-12)
	for d := range n {
		k.SetSym(d, d, k.At(d, d)+lambda)
	}
	var chol mat.Cholesky
	if !chol.Factorize(k) {
		return v0, fmt.Errorf("the regularized Gram matrix is not positive definite")
	}
	var a mat.Dense
	if err := chol.SolveTo(&a, r); err != nil {
		return v0, err
	}
	out := make([][]float32, len(v0))
	for t := range v0 {
		out[t] = append([]float32(nil), v0[t]...)
	}
	for d, row := range rows {
		for _, e := range row {
			for j := range dim {
				out[e.term][j] += float32(e.x * a.At(d, j))
			}
		}
	}
	return out, nil
}

// vocabulary returns the distinct engine terms of texts, sorted, with their IDF
// (ln((1+N)/(1+df)) + 1) and, for each, the surface word that most often produced it (ties to
// the lexically smallest), which is what a teacher model embeds for the term.
func vocabulary(texts []string) (terms []string, idf []float32, surface []string) {
	df := map[string]int{}
	words := map[string]map[string]int{}
	for _, text := range texts {
		seen := map[string]bool{}
		for _, w := range engine.Words(text) {
			// A word gives no term (a stop word, a fragment too short), one, or, when it is a
			// CJK run, its bigrams: each bigram is then its own surface word.
			ts := engine.Tokenize(w)
			for _, t := range ts {
				surf := w
				if len(ts) > 1 {
					surf = t
				}
				if words[t] == nil {
					words[t] = map[string]int{}
				}
				words[t][surf]++
				if !seen[t] {
					seen[t] = true
					df[t]++
				}
			}
		}
	}
	for t := range df {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	n := float64(len(texts))
	idf = make([]float32, len(terms))
	surface = make([]string, len(terms))
	for i, t := range terms {
		idf[i] = float32(math.Log((1+n)/float64(1+df[t])) + 1)
		best, bestN := "", 0
		for w, c := range words[t] {
			if c > bestN || c == bestN && w < best {
				best, bestN = w, c
			}
		}
		surface[i] = best
	}
	return terms, idf, surface
}

// BuiltinEmbedder learns the builtin LSA model from skills taken in name order: the semantic
// model `caskg build` uses by default, so a caller that builds outside the CLI gets the CLI's
// artifact. It is what Input.Embedder defaults to.
func BuiltinEmbedder(skills []ingest.Skill) (embed.Embedder, error) {
	sorted := slices.Clone(skills)
	slices.SortFunc(sorted, func(a, b ingest.Skill) int { return strings.Compare(a.Name, b.Name) })
	texts := make([]string, len(sorted))
	for i, s := range sorted {
		texts[i] = skillText(s)
	}
	m, err := embed.NewBuiltin(texts, embed.BuiltinOptions{})
	if err != nil {
		return nil, err // not a nil *embed.Builtin inside a non-nil interface
	}
	return m, nil
}
