package builder

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"

	"github.com/caskg/caskg/native/internal/ingest"
)

// ProbeKind is one of the three counterfactual probes of an edge s_i → s_j: is s_j impaired
// without s_i (removal), with a dissimilar skill in its place (substitution), or with the two
// swapped (reorder)?
type ProbeKind int

// Probe kinds. Every probe answers e ∈ [0, 1], where a high e supports the edge.
const (
	// probeRemoval: is s_j impaired without s_i?
	probeRemoval ProbeKind = iota
	// probeSubstitution: is s_j impaired when s_i is replaced by a low-overlap substitute?
	probeSubstitution
	// probeReorder: is running s_j before s_i incoherent?
	probeReorder
)

var probeNames = [...]string{"removal", "substitution", "reorder"}

func (k ProbeKind) String() string { return probeNames[k] }

// Probe is one question about the candidate edge Source → Target.
type Probe struct {
	Kind           ProbeKind
	Source, Target int
	Substitute     int // for probeSubstitution
}

// ProbeResult is a prober's answer. OK false means the probe failed (no usable answer); it is
// counted and left out of the calibration, never read as a neutral 0.5.
type ProbeResult struct {
	E      float64
	OK     bool
	Cached bool
	Raw    string // the raw answer of a failed probe, for the report
	// Abstain means the prober has nothing to go on for this pair: the answer is neither
	// evidence for nor against the edge. An edge whose every probe abstains stays unvalidated.
	Abstain bool
}

// Prober answers probes about skills (indexed as in skills, which are sorted by name).
type Prober interface {
	Name() string
	Probe(ctx context.Context, skills []ingest.Skill, probes []Probe) ([]ProbeResult, error)
}

// judger scores candidate edges directly: how strongly does s_i support or precede s_j.
type judger interface {
	Name() string
	Judge(ctx context.Context, skills []ingest.Skill, pairs [][2]int) ([]ProbeResult, error)
}

// probeChunk is how many frontier candidates are probed at a time: the probes and their
// answers of one chunk are held in memory, not those of a whole large library.
const probeChunk = 1 << 15

// probe runs the three probes on every frontier candidate and stores the evidence.
func (b *builder) probe(ctx context.Context, cands []edgeCandidate, frontier []int) error {
	subs := newSubstitutes(b)
	sources := make([]int, 0, len(frontier))
	for _, k := range frontier {
		sources = append(sources, cands[k].Source)
	}
	subs.prepare(sources)
	var prober Prober = contractProber{b}
	if b.opt.Prober != nil {
		prober = b.opt.Prober
	}
	b.rep.Prober = prober.Name()
	b.progress("probes", 0, len(frontier))
	probes := make([]Probe, 0, 3*min(len(frontier), probeChunk))
	for lo := 0; lo < len(frontier); lo += probeChunk {
		chunk := frontier[lo:min(len(frontier), lo+probeChunk)]
		probes = probes[:0]
		// The chunk's evidence in one array, three places a candidate, not three small
		// allocations each.
		evidence := make([]float64, 3*len(chunk))
		for x, k := range chunk {
			c := &cands[k]
			c.Probed = true
			if c.Evidence == nil {
				c.Evidence = evidence[3*x : 3*x : 3*x+3]
			}
			probes = append(probes,
				Probe{Kind: probeRemoval, Source: c.Source, Target: c.Target},
				Probe{Kind: probeSubstitution, Source: c.Source, Target: c.Target, Substitute: subs.pick(c.Source, c.Target)},
				Probe{Kind: probeReorder, Source: c.Source, Target: c.Target})
		}
		res, err := prober.Probe(ctx, b.skills, probes)
		if err != nil {
			return fmt.Errorf("builder: %s prober: %w", prober.Name(), err)
		}
		if len(res) != len(probes) {
			return fmt.Errorf("builder: %s prober answered %d of %d probes", prober.Name(), len(res), len(probes))
		}
		b.apply(cands, chunk, probes, res)
		b.recordAnswers(chunk, probes, res) // for a later Update (update.go)
		b.progress("probes", lo+len(chunk), len(frontier))
	}
	return nil
}

// apply stores the answers res to the probes of the frontier candidates chunk, three a
// candidate, and counts them in the report.
func (b *builder) apply(cands []edgeCandidate, chunk []int, probes []Probe, res []ProbeResult) {
	abstained := make([]int, len(chunk))
	for p, r := range res {
		c := &cands[chunk[p/3]]
		switch {
		case r.Abstain:
			b.rep.ProbesAbstained++
			if abstained[p/3]++; abstained[p/3] == 3 {
				c.Probed = false
			}
			continue
		case !r.OK:
			b.rep.ProbesFailed++
			if len(b.rep.FailedSamples) < 5 {
				b.rep.FailedSamples = append(b.rep.FailedSamples, fmt.Sprintf("%s %s -> %s: %q",
					probes[p].Kind, b.skills[c.Source].Name, b.skills[c.Target].Name, r.Raw))
			}
			continue
		case r.Cached:
			b.rep.ProbesCached++
		default:
			b.rep.ProbesRun++
		}
		c.Evidence = append(c.Evidence, clip(r.E, 0, 1))
	}
}

// substitutes picks, for an edge s_i → s_j, a substitute for s_i deterministically from the
// quarter of the library least similar to s_i, so that the substitute cannot stand in by being
// a look-alike.
type substitutes struct {
	b     *builder
	cache map[int][]int
}

// newSubstitutes starts from the quarters an earlier build found (b.quarters, update.go).
func newSubstitutes(b *builder) *substitutes { return &substitutes{b: b, cache: b.quarters()} }

// prepare finds the least similar quarter of every source not cached yet, in parallel: each
// quarter depends on its source alone.
func (s *substitutes) prepare(sources []int) {
	var todo []int
	seen := map[int]bool{}
	for _, i := range sources {
		if _, ok := s.cache[i]; !ok && !seen[i] {
			seen[i] = true
			todo = append(todo, i)
		}
	}
	quarters := make([][]int, len(todo))
	parallel(len(todo), func() func(k int) {
		d := s.b.newDenseText()
		return func(k int) { quarters[k] = s.leastSimilarQuarter(todo[k], d) }
	}, nil)
	for k, i := range todo {
		s.cache[i] = quarters[k]
	}
}

func (s *substitutes) pick(i, j int) int {
	quarter, ok := s.cache[i]
	if !ok {
		quarter = s.leastSimilarQuarter(i, s.b.newDenseText())
		s.cache[i] = quarter
	}
	h := fnv.New64a()
	h.Write([]byte(s.b.skills[i].Name + "\x00" + s.b.skills[j].Name))
	for off := range len(quarter) {
		if k := quarter[(int(h.Sum64()%uint64(len(quarter)))+off)%len(quarter)]; k != j {
			return k
		}
	}
	return quarter[0]
}

// substituteSample is the library size above which the least similar quarter is taken from a
// deterministic sample of that many skills rather than from the whole library.
const substituteSample = 256

// leastSimilarQuarter returns the quarter of the library (or of a deterministic sample of it,
// for large libraries) least lexically similar to skill i, least similar first.
func (s *substitutes) leastSimilarQuarter(i int, d *denseText) []int {
	n := len(s.b.skills)
	ids := make([]int, 0, min(n, substituteSample))
	if n <= substituteSample {
		for k := range n {
			if k != i {
				ids = append(ids, k)
			}
		}
	} else {
		h := fnv.New64a()
		h.Write([]byte(s.b.skills[i].Name))
		x := h.Sum64()
		for len(ids) < substituteSample {
			x = x*6364136223846793005 + 1442695040888963407 // a fixed LCG: the same sample every time
			if k := int(x>>33) % n; k != i {
				ids = append(ids, k)
			}
		}
	}
	sims := make([]float64, len(ids))
	d.load(s.b.feat[i].text)
	for x, k := range ids {
		sims[x] = d.cosineOf(k)
	}
	d.unload(s.b.feat[i].text)
	order := make([]int, len(ids))
	for x := range order {
		order[x] = x
	}
	sort.SliceStable(order, func(x, y int) bool {
		if sims[order[x]] != sims[order[y]] {
			return sims[order[x]] < sims[order[y]]
		}
		return ids[order[x]] < ids[order[y]]
	})
	quarter := make([]int, 0, (len(ids)+3)/4)
	for _, x := range order[:max(1, (len(ids)+3)/4)] {
		quarter = append(quarter, ids[x])
	}
	return quarter
}

// contractProber is the offline, deterministic prober: it simulates each probe from what the
// skills declare and do — their inputs and outputs, declared prerequisites, roles and, when
// given, the traces of successful runs. It approximates the LLM probes: where a skill declares
// nothing, its answers stay close to neutral and carry little weight.
type contractProber struct{ b *builder }

func (contractProber) Name() string { return "contract" }

func (p contractProber) Probe(ctx context.Context, _ []ingest.Skill, probes []Probe) ([]ProbeResult, error) {
	out := make([]ProbeResult, len(probes))
	p.b.producers() // built before the workers read it
	// Every answer depends on its probe alone: workers answer blocks of probes, each with its
	// own cache of what the targets need.
	parallel(len(probes), func() func(k int) {
		needs := map[int][]need{}
		return func(k int) {
			if k%256 == 0 && ctx.Err() != nil {
				return
			}
			pr := probes[k]
			if !p.informed(pr.Source, pr.Target) {
				out[k] = ProbeResult{Abstain: true, OK: true}
				return
			}
			ns, ok := needs[pr.Target]
			if !ok {
				ns = p.needs(pr.Target)
				needs[pr.Target] = ns
			}
			var e float64
			switch pr.Kind {
			case probeRemoval:
				e = p.removal(pr.Source, pr.Target, ns)
			case probeSubstitution:
				e = p.substitution(pr.Source, pr.Target, pr.Substitute, ns)
			case probeReorder:
				e = p.reorder(pr.Source, pr.Target)
			}
			out[k] = ProbeResult{E: clip(e, 0, 1), OK: true}
		}
	}, nil)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// informed reports whether anything the two skills declare or the runs record bears on the
// pair: a declared prerequisite or input of the target, I/O or role order either way, a
// mention of one in the other, a repair link, or runs that used both.
// Without any of these, the probes' answers would rest on lexical closeness alone, which the
// candidate's association already counts: the prober abstains and the edge stays unvalidated,
// where the scaffold may keep it at its association, rather than being rejected for a silence.
func (p contractProber) informed(i, j int) bool {
	b := p.b
	fi, fj := &b.feat[i], &b.feat[j]
	if len(fj.deps) > 0 || len(fj.inputs) > 0 {
		return true
	}
	if t := b.traces; t != nil && t.co.co(i, j) > 0 {
		return true
	}
	if b.io(i, j) > 0 || b.io(j, i) > 0 || b.structural(i, j) > 0 || b.structural(j, i) > 0 || b.repair(i, j) > 0 {
		return true
	}
	return slices.Contains(fj.mentions, i) || slices.Contains(fi.mentions, j)
}

// need is one thing a skill needs: a declared prerequisite or an input, with the number of
// skills in the library that can supply it.
type need struct {
	dep       int // a declared prerequisite's id, or -1
	input     slot
	suppliers int
}

// needs lists what skill j needs and counts each need's suppliers.
func (p contractProber) needs(j int) []need {
	b := p.b
	var out []need
	for _, d := range b.feat[j].deps {
		out = append(out, need{dep: d, suppliers: 1})
	}
	for _, x := range b.feat[j].inputs {
		if x.optional {
			continue // j runs without it
		}
		nd := need{dep: -1, input: x}
		// A supplier's output shares a token with the input (or, declared, its name, whose
		// tokens are the same): only those skills are checked.
		seen := map[int]bool{}
		for _, t := range x.tokens {
			for _, k := range b.producers()[t] {
				if k != j && !seen[k] {
					seen[k] = true
					if p.supply(k, nd) >= 0.5 {
						nd.suppliers++
					}
				}
			}
		}
		out = append(out, nd)
	}
	return out
}

// producers indexes skills by the tokens of their outputs (built once).
func (b *builder) producers() map[string][]int {
	if b.outPost == nil {
		b.outPost = map[string][]int{}
		for k, f := range b.feat {
			seen := map[string]bool{}
			for _, o := range f.outputs {
				for _, t := range o.tokens {
					if !seen[t] {
						seen[t] = true
						b.outPost[t] = append(b.outPost[t], k)
					}
				}
			}
		}
	}
	return b.outPost
}

// supply is how well skill k supplies need nd.
func (p contractProber) supply(k int, nd need) float64 {
	if nd.dep >= 0 {
		if k == nd.dep {
			return 1
		}
		return 0
	}
	best := 0.0
	for _, o := range p.b.feat[k].outputs {
		best = max(best, p.b.slotMatch(o, nd.input))
	}
	return best
}

// share is the part of j's needs that k supplies, each need divided among its suppliers when
// exclusive is set.
func (p contractProber) share(k int, ns []need, exclusive bool) float64 {
	var s float64
	for _, nd := range ns {
		v := p.supply(k, nd)
		if exclusive {
			v /= float64(max(1, nd.suppliers))
		}
		s += v
	}
	return s / float64(len(ns))
}

// affinity is the undeclared evidence that s_i belongs before s_j: role order, repair links,
// mentions and lexical closeness.
func (p contractProber) affinity(i, j int) float64 {
	b := p.b
	a := max(b.structural(i, j), 0.5*b.lexical(i, j))
	if b.feat[i].role == roleRepair {
		a = max(a, b.repair(i, j))
	}
	for _, m := range b.feat[j].mentions {
		if m == i {
			a = max(a, 0.8)
		}
	}
	return a
}

// removal: how exclusively s_i supplies the need of s_j it matters most for — 1 when it is the
// only supplier, 1/k when k skills could supply it; with traces, at least the share of the runs
// that used s_j that also used s_i (traceStats.given). A skill that declares nothing falls back to
// its affinity, scaled into [0.25, 0.75] so that it never decides an edge on its own.
func (p contractProber) removal(i, j int, ns []need) float64 {
	var e float64
	if len(ns) > 0 {
		// s_j is impaired as soon as one need loses its supplier: the need s_i is most
		// critical for decides, discounted by the other skills that could supply it.
		for _, nd := range ns {
			e = max(e, p.supply(i, nd)/float64(max(1, nd.suppliers)))
		}
	} else {
		e = 0.25 + 0.5*p.affinity(i, j)
	}
	if p.b.traces != nil {
		e = max(e, p.b.traces.given(i, j))
	}
	return e
}

// substitution: how much of what s_i supplies to s_j the substitute s fails to supply. When s_i
// supplies nothing s_j needs, replacing it costs s_j nothing: e = 0.
func (p contractProber) substitution(i, j, s int, ns []need) float64 {
	var e float64
	if len(ns) > 0 {
		e = p.share(i, ns, false) - p.share(s, ns, false)
		// A declared prerequisite is a need no substitute meets, however many others j has.
		for _, nd := range ns {
			if nd.dep >= 0 {
				e = max(e, p.supply(i, nd)-p.supply(s, nd))
			}
		}
	} else {
		e = p.affinity(i, j) - p.affinity(s, j)
	}
	if t := p.b.traces; t != nil {
		e = max(e, t.given(i, j)-t.given(s, j))
	}
	return clip(e, 0, 1)
}

// reorder: how much better the forward order is supported than the reverse, from I/O
// direction, role order and the order runs used the two skills in. Two skills with no order
// between them can run either way round: e = 0 — unless unordered runs used them together,
// which says nothing about their order: e = .5.
func (p contractProber) reorder(i, j int) float64 {
	b := p.b
	dir := func(a, c int) float64 {
		v := max(b.io(a, c), b.structural(a, c))
		if t := b.traces; t != nil && t.ordered {
			if e := t.co.get(a, c); e.co > 0 {
				v = max(v, float64(e.ahead)/float64(e.co))
			}
		}
		return v
	}
	f, r := dir(i, j), dir(j, i)
	if t := b.traces; f == 0 && r == 0 && t != nil && !t.ordered && t.co.co(i, j) > 0 {
		return 0.5 // used together, in runs that do not record their order: no evidence either way
	}
	return clip(max(f-r, b.structural(i, j)-b.structural(j, i)), 0, 1)
}
