package build

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/embed"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// SkillTextBodyRunes is how much of a skill's body SkillText keeps. Sentence models read a few
// hundred tokens at most; the builtin model gains from a little body text (the procedure's
// vocabulary) but drowns in a whole manual.
const SkillTextBodyRunes = 600

// SkillText is the text of a skill that gets embedded: its name as words, its title, its
// description, its tags and the head of its body (or, for a tool, its parameters).
func SkillText(s ingest.Skill) string {
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
	if extra = strings.TrimSpace(headRunes(extra, SkillTextBodyRunes)); extra != "" {
		b.WriteString("\n")
		b.WriteString(extra)
	}
	return b.String()
}

// Semantic embeds skills (already sorted by name: vector i belongs to skill i) and makes the
// artifact's query encoder. For a model that is itself a term table (the builtin model) the
// encoder is the model; otherwise it is distilled from the model: every term of the library's
// vocabulary (engine.Tokenize, the query-side tokenizer) is embedded through its most frequent
// surface word and weighted by its IDF over the skill texts.
func Semantic(ctx context.Context, emb embed.Embedder, skills []ingest.Skill) (*graphs.Vectors, *graphs.QueryEncoder, error) {
	if len(skills) == 0 {
		return nil, nil, fmt.Errorf("build: no skills to embed")
	}
	texts := make([]string, len(skills))
	for i, s := range skills {
		texts[i] = SkillText(s)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("build: embedding %d skills with %s: %w", len(skills), emb.ID(), err)
	}
	if len(vecs) != len(skills) {
		return nil, nil, fmt.Errorf("build: %s returned %d vectors for %d skills", emb.ID(), len(vecs), len(skills))
	}
	vectors, err := graphs.NewVectors(emb.ID(), vecs)
	if err != nil {
		return nil, nil, fmt.Errorf("build: skill vectors of %s: %w", emb.ID(), err)
	}

	var terms []string
	var weights []float32
	var tvecs [][]float32
	if te, ok := emb.(embed.TermEncoder); ok {
		terms, weights, tvecs = te.QueryEncoder()
	} else {
		var surface []string
		terms, weights, surface = Vocabulary(texts)
		if tvecs, err = emb.Embed(ctx, surface); err != nil {
			return nil, nil, fmt.Errorf("build: embedding %d vocabulary terms with %s: %w", len(surface), emb.ID(), err)
		}
		if len(tvecs) != len(terms) {
			return nil, nil, fmt.Errorf("build: %s returned %d vectors for %d terms", emb.ID(), len(tvecs), len(terms))
		}
	}
	if len(terms) == 0 {
		return vectors, nil, nil
	}
	enc, err := graphs.NewQueryEncoder(terms, weights, tvecs)
	if err != nil {
		return nil, nil, fmt.Errorf("build: query encoder of %s: %w", emb.ID(), err)
	}
	if enc.Dim != vectors.Dim {
		return nil, nil, fmt.Errorf("build: %s gave %d-dimensional skill vectors but %d-dimensional term vectors",
			emb.ID(), vectors.Dim, enc.Dim)
	}
	return vectors, enc, nil
}

// Vocabulary returns the distinct engine terms of texts, sorted, with their IDF
// (ln((1+N)/(1+df)) + 1) and, for each, the surface word that most often produced it (ties to
// the lexically smallest), which is what a teacher model embeds for the term.
func Vocabulary(texts []string) (terms []string, idf []float32, surface []string) {
	df := map[string]int{}
	words := map[string]map[string]int{}
	for _, text := range texts {
		seen := map[string]bool{}
		for _, w := range engine.Words(text) {
			ts := engine.Tokenize(w)
			if len(ts) != 1 {
				continue // a stop word or a fragment too short to be a term
			}
			t := ts[0]
			if words[t] == nil {
				words[t] = map[string]int{}
			}
			words[t][w]++
			if !seen[t] {
				seen[t] = true
				df[t]++
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
