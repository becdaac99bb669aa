// Package build turns a skill library into a published skill graph artifact: it extracts
// features, scores candidate edges with pluggable signal channels, computes the association
// score with the structural floor (DESIGN §3.1–3.2) and publishes edges with a pluggable rule.
package build

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/wasm/engine"
)

// Options are the build parameters. The zero value is not valid; start from DefaultOptions.
type Options struct {
	Variant      string             // publication rule: "publish-all"
	Lambda       map[string]float64 // channel weights λ
	TauStr       float64            // structural floor threshold τ_str
	EtaStr       float64            // structural floor factor η_str
	Cap          int                // most candidate targets per source
	PerChannel   int                // most targets each channel proposes per source
	EpsWeight    float64            // least published weight ε_w
	BodyHead     int                // runes of each body kept in the artifact
	MaxPostingDF int                // tokens shared by more skills than this do not propose pairs (0: automatic)
}

// DefaultOptions returns the defaults of DESIGN §3.
func DefaultOptions() Options {
	return Options{
		Variant:    VariantPublishAll,
		Lambda:     map[string]float64{ChanLexical: 0.10, ChanIO: 0.25, ChanStructural: 0.20},
		TauStr:     0.65,
		EtaStr:     0.7,
		Cap:        12,
		PerChannel: 12,
		EpsWeight:  0.01,
		BodyHead:   2400,
	}
}

// Variants of the publication rule.
const (
	VariantPublishAll = "publish-all"
)

// Candidate is a scored candidate edge.
type Candidate struct {
	Source, Target int
	Phi            map[string]float64 // signal values by channel
	A              float64            // association score
	Type           graphs.Relation
}

// Publisher decides which candidates become published edges, with which state and weight.
type Publisher interface {
	Publish(cands []Candidate) []graphs.Edge
}

// publishAll publishes every candidate at weight A, unvalidated (the GoS-like baseline).
type publishAll struct{ eps float64 }

func (p publishAll) Publish(cands []Candidate) []graphs.Edge {
	out := make([]graphs.Edge, 0, len(cands))
	for _, c := range cands {
		out = append(out, graphs.Edge{
			Source: c.Source, Target: c.Target,
			Weight: float32(clip(c.A, p.eps, 1)), Assoc: float32(clip(c.A, 0, 1)),
			State: graphs.Unvalidated, Type: c.Type,
		})
	}
	return out
}

// Report summarizes a build for people and machines.
type Report struct {
	Skills      int                `json:"skills"`
	Candidates  int                `json:"candidates"`
	PerChannel  map[string]int     `json:"per_channel"` // candidates each channel proposed
	Published   int                `json:"published"`
	ByState     map[string]int     `json:"by_state"`
	ByType      map[string]int     `json:"by_type"`
	Bytes       int                `json:"bytes"`
	StageTimes  map[string]float64 `json:"stage_seconds"`
	TotalSecond float64            `json:"seconds"`
}

type builder struct {
	opt     Options
	skills  []ingest.Skill
	feat    []features
	idf     map[string]float64
	maxIDF  float64
	signals []Signal
}

// Build makes the artifact for skills (identity by name; the caller has removed duplicates).
// Skills are ordered by name, so the artifact does not depend on the order they were read in.
func Build(skills []ingest.Skill, opt Options) ([]byte, *Report, error) {
	start := time.Now()
	rep := &Report{PerChannel: map[string]int{}, ByState: map[string]int{}, ByType: map[string]int{},
		StageTimes: map[string]float64{}}
	stage := func(name string, t time.Time) { rep.StageTimes[name] = time.Since(t).Seconds() }
	if len(skills) == 0 {
		return nil, nil, fmt.Errorf("build: no skills to build from")
	}
	var pub Publisher
	switch opt.Variant {
	case VariantPublishAll:
		pub = publishAll{opt.EpsWeight}
	default:
		return nil, nil, fmt.Errorf("build: unknown variant %q (this build has %q)", opt.Variant, VariantPublishAll)
	}
	if opt.Cap < 1 || opt.PerChannel < 1 {
		return nil, nil, fmt.Errorf("build: cap %d and per-channel %d must be at least 1", opt.Cap, opt.PerChannel)
	}
	skills = append([]ingest.Skill(nil), skills...)
	sort.Slice(skills, func(a, b int) bool { return skills[a].Name < skills[b].Name })
	index := make(map[string]int, len(skills))
	for i, s := range skills {
		if _, dup := index[s.Name]; dup {
			return nil, nil, fmt.Errorf("build: duplicate skill name %q (%s)", s.Name, s.Source)
		}
		index[s.Name] = i
	}

	t := time.Now()
	b := &builder{opt: opt, skills: skills}
	b.feat, b.idf = extractFeatures(skills, index)
	for _, w := range b.idf {
		b.maxIDF = max(b.maxIDF, w)
	}
	b.signals = []Signal{
		{Name: ChanLexical, Lambda: opt.Lambda[ChanLexical], Min: 0.05, Score: b.lexical},
		{Name: ChanIO, Lambda: opt.Lambda[ChanIO], Min: 0.3, Score: b.io},
		{Name: ChanStructural, Lambda: opt.Lambda[ChanStructural], Min: 0.2, Score: b.structural},
	}
	stage("features", t)

	t = time.Now()
	cands := b.candidates(rep)
	rep.Candidates = len(cands)
	stage("candidates", t)

	t = time.Now()
	edges := pub.Publish(cands)
	stage("publish", t)

	t = time.Now()
	art := &graphs.Artifact{Params: b.params()}
	docs := make([]engine.Doc, len(skills))
	for i, s := range skills {
		art.Skills = append(art.Skills, graphs.Skill{Name: s.Name, Description: s.Description,
			Source: s.Source, Body: headRunes(s.Body, opt.BodyHead)})
		docs[i] = engine.Doc{Name: s.Name, Description: s.Description, Tags: s.Tags, Schema: s.SchemaText, Body: s.Body}
	}
	art.Edges = edges
	art.Lexicon = engine.BuildLexicon(docs)
	data, err := graphs.Encode(art)
	if err != nil {
		return nil, nil, fmt.Errorf("build: %w", err)
	}
	stage("encode", t)

	rep.Skills = len(skills)
	rep.Published = len(edges)
	for _, e := range edges {
		rep.ByState[e.State.String()]++
		rep.ByType[e.Type.String()]++
	}
	rep.Bytes = len(data)
	rep.TotalSecond = time.Since(start).Seconds()
	return data, rep, nil
}

// candidates proposes, for every source, the top targets of each active channel among the
// skills it shares a token with (or declares a dependency on), scores them, and keeps the Cap
// best by association.
func (b *builder) candidates(rep *Report) []Candidate {
	n := len(b.skills)
	// Blocking: only pairs that share a not-too-common token are scored, which keeps induction
	// near-linear for large libraries instead of quadratic.
	post := map[string][]int{}
	for j, f := range b.feat {
		seen := map[string]bool{}
		add := func(t string) {
			if !seen[t] {
				seen[t] = true
				post[t] = append(post[t], j)
			}
		}
		for t := range f.text {
			add(t)
		}
		for _, in := range f.inputs {
			for _, t := range in.tokens {
				add(t)
			}
		}
	}
	maxDF := b.opt.MaxPostingDF
	if maxDF <= 0 {
		maxDF = max(50, min(n/10, 1000))
	}
	followers := make([][]int, n) // followers[i]: skills that declare i as a prerequisite
	for j, f := range b.feat {
		for _, d := range f.deps {
			followers[d] = append(followers[d], j)
		}
	}

	var out []Candidate
	mark := make([]int, n)
	for i := range mark {
		mark[i] = -1
	}
	var sumL float64
	for _, s := range b.signals {
		sumL += s.Lambda
	}
	for i := range n {
		var pool []int
		visit := func(j int) {
			if j != i && mark[j] != i {
				mark[j] = i
				pool = append(pool, j)
			}
		}
		f := &b.feat[i]
		probe := func(t string) {
			if ps := post[t]; len(ps) <= maxDF {
				for _, j := range ps {
					visit(j)
				}
			}
		}
		for t := range f.text {
			probe(t)
		}
		for _, o := range f.outputs {
			for _, t := range o.tokens {
				probe(t)
			}
		}
		for _, j := range followers[i] {
			visit(j)
		}
		sort.Ints(pool)

		phis := make([][]float64, len(pool))
		for k, j := range pool {
			phis[k] = make([]float64, len(b.signals))
			for c, s := range b.signals {
				if s.Lambda > 0 {
					phis[k][c] = s.Score(i, j)
				}
			}
		}
		chosen := map[int]bool{}
		for c, s := range b.signals {
			if s.Lambda <= 0 {
				continue
			}
			var ks []int
			for k := range pool {
				if phis[k][c] >= s.Min {
					ks = append(ks, k)
				}
			}
			sort.SliceStable(ks, func(x, y int) bool { return phis[ks[x]][c] > phis[ks[y]][c] })
			for _, k := range ks[:min(len(ks), b.opt.PerChannel)] {
				if !chosen[k] {
					chosen[k] = true
				}
				rep.PerChannel[s.Name]++
			}
		}
		var mine []Candidate
		for k := range pool {
			if !chosen[k] {
				continue
			}
			c := Candidate{Source: i, Target: pool[k], Phi: map[string]float64{}}
			var sum float64
			for ch, s := range b.signals {
				c.Phi[s.Name] = phis[k][ch]
				sum += s.Lambda * phis[k][ch]
			}
			if sumL > 0 {
				c.A = clip(sum/sumL, 0, 1)
			}
			if st := c.Phi[ChanStructural]; st > b.opt.TauStr {
				c.A = max(c.A, b.opt.EtaStr*st)
			}
			c.Type = b.relation(&c)
			mine = append(mine, c)
		}
		sort.SliceStable(mine, func(x, y int) bool { return mine[x].A > mine[y].A })
		out = append(out, mine[:min(len(mine), b.opt.Cap)]...)
	}
	return out
}

// params records the build options in the artifact.
func (b *builder) params() map[string]any {
	lam := map[string]any{}
	for _, s := range b.signals {
		lam[s.Name] = s.Lambda
	}
	return map[string]any{
		"variant": b.opt.Variant, "lambda": lam, "tau_str": b.opt.TauStr, "eta_str": b.opt.EtaStr,
		"cap": b.opt.Cap, "per_channel": b.opt.PerChannel, "eps_weight": b.opt.EpsWeight,
		"body_head": b.opt.BodyHead,
	}
}

func clip(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return lo
	}
	return math.Max(lo, math.Min(hi, x))
}

// headRunes returns at most n runes of s.
func headRunes(s string, n int) string {
	k := 0
	for i := range s {
		if k == n {
			return s[:i]
		}
		k++
	}
	return s
}
