// Package oracle is an evaluation-only prober: it answers the builder's counterfactual probes
// from a set of gold dependency edges, and gets a chosen share of its answers wrong on purpose.
// Building with it shows what the Beta calibration makes of a prober of known
// quality — which edges it confirms, publishes as uncertain or rejects, and what that does to
// retrieval — so a user can judge what a better prober (an LLM) would buy. It needs the answers
// it is asked for, so it is no way to build a graph for use.
//
// For a probe of the candidate edge s_i → s_j the truth is whether (s_i, s_j) is a gold edge
// (s_i a prerequisite of s_j). A gold edge gets e = 1 from every probe: s_j is impaired without
// s_i (removal), the substitute cannot stand in for s_i (substitution), and running s_j first
// is incoherent (reorder). Any other pair, the reverse of a gold edge included, gets e = 0.
// Each answer is then flipped (e → 1 − e) with probability ErrorRate, decided by a hash of the
// two skill names, the probe kind and Seed: no global random state, the same answers in every
// run and in any probe order, and the answers flipped at a rate r are among those flipped at
// any higher rate.
package oracle

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lines"
)

// name is the prober's name in build reports and artifact parameters.
const name = "oracle"

// Options choose the oracle's quality.
type Options struct {
	// ErrorRate is the probability in [0, 1] that an answer is flipped: 0 is a perfect prober,
	// 0.5 a coin, 1 one that is always wrong.
	ErrorRate float64
	// Seed picks which answers are flipped; a different seed flips a different (equally large)
	// share.
	Seed uint64
}

// Prober answers probes from gold edges. It implements builder.Prober.
type Prober struct {
	opt    Options
	gold   map[[2]string]bool
	source string // the edge file, for errors; "" when the edges were given in memory
}

var _ builder.Prober = (*Prober)(nil)

// New returns an oracle over gold edges. Edges with an empty endpoint are an error; an edge
// from a skill to itself can never be a candidate and is ignored.
func New(edges []eval.GoldEdge, opt Options) (*Prober, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	for i, e := range edges {
		if e.Source == "" || e.Target == "" {
			return nil, fmt.Errorf("oracle: edge %d: source and target are required", i+1)
		}
	}
	return newProber(edges, opt, "")
}

// newProber indexes edges whose endpoints are checked; source names them in errors.
func newProber(edges []eval.GoldEdge, opt Options, source string) (*Prober, error) {
	p := &Prober{opt: opt, gold: make(map[[2]string]bool, len(edges)), source: source}
	for _, e := range edges {
		if e.Source != e.Target {
			p.gold[[2]string{e.Source, e.Target}] = true
		}
	}
	if len(p.gold) == 0 {
		where := ""
		if source != "" {
			where = source + ": "
		}
		return nil, fmt.Errorf("oracle: %sno gold edges between two different skills", where)
	}
	return p, nil
}

// Load reads gold edges from a JSONL file of {"source", "target", "type"?} lines (the format of
// ../shared/data/README.md) and returns an oracle over them. Errors name the file and line.
func Load(path string, opt Options) (*Prober, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	defer f.Close()
	var edges []eval.GoldEdge
	line, err := lines.Each(f, func(_ int, data []byte) error {
		e, err := eval.DecodeGoldEdge(data)
		if err == nil {
			edges = append(edges, e)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("oracle: %s:%d: %w", path, line, err)
	}
	return newProber(edges, opt, path)
}

func (o Options) validate() error {
	if !(o.ErrorRate >= 0 && o.ErrorRate <= 1) {
		return fmt.Errorf("oracle: error rate %v is outside [0, 1]", o.ErrorRate)
	}
	return nil
}

// Name implements builder.Prober.
func (p *Prober) Name() string { return name }

// edges is the number of distinct gold edges the oracle knows.
func (p *Prober) edges() int { return len(p.gold) }

// Probe implements builder.Prober. It fails when no gold edge joins two skills of the library:
// every answer would be "no dependency", which is almost certainly an edge file meant for
// another library.
func (p *Prober) Probe(ctx context.Context, skills []ingest.Skill, probes []builder.Probe) ([]builder.ProbeResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(skills))
	for _, s := range skills {
		known[s.Name] = true
	}
	joined := 0
	for e := range p.gold {
		if known[e[0]] && known[e[1]] {
			joined++
		}
	}
	if joined == 0 {
		from := ""
		if p.source != "" {
			from = " of " + p.source
		}
		return nil, fmt.Errorf("oracle: none of the %d gold edges%s joins two skills of the library (an edge file for another library?)",
			len(p.gold), from)
	}
	out := make([]builder.ProbeResult, len(probes))
	for k, pr := range probes {
		if pr.Source < 0 || pr.Source >= len(skills) || pr.Target < 0 || pr.Target >= len(skills) {
			return nil, fmt.Errorf("oracle: probe %d: skill index out of range (%d skills)", k, len(skills))
		}
		out[k] = builder.ProbeResult{E: p.answer(skills[pr.Source].Name, skills[pr.Target].Name, pr.Kind), OK: true}
	}
	return out, nil
}

// answer is the oracle's e for a probe of kind on the edge source → target: 1 or 0, flipped
// when the pair and kind fall within the error rate.
func (p *Prober) answer(source, target string, kind builder.ProbeKind) float64 {
	e := 0.0
	if p.gold[[2]string{source, target}] {
		e = 1
	}
	if flipped(p.opt.Seed, source, target, kind, p.opt.ErrorRate) {
		e = 1 - e
	}
	return e
}

// flipped reports whether the answer to a probe of kind on source → target is wrong at the
// given error rate: a uniform draw in [0, 1) hashed from seed, the names and the kind falls
// below rate. The draw does not depend on rate, so raising the rate only adds flipped answers.
func flipped(seed uint64, source, target string, kind builder.ProbeKind, rate float64) bool {
	if rate <= 0 {
		return false
	}
	h := fnv.New64a()
	var b [9]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	b[8] = byte(kind)
	h.Write(b[:])
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write([]byte(target))
	u := float64(mix(h.Sum64())>>11) / (1 << 53)
	return u < rate
}

// mix is the splitmix64 finalizer: FNV alone leaves the high bits of similar names correlated.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
