package builder

import (
	"math"

	"github.com/caskg/caskg/graphs"
)

// signal is one channel of evidence that s_i should precede or support s_j, normalized to [0, 1]
// per ordered pair. Channels plug into candidate induction and the association
// score by appearing in builder.signals; only channels with data for this build are active.
type signal struct {
	Name    string
	Lambda  float64
	Min     float64 // least value that makes a pair a candidate of this channel
	Score   func(i, j int) float64
	Propose bool // whether the channel proposes candidates (the judge only scores them)
	// lexical is set when Score is b.lexical, which a scorer computes faster with the same
	// values.
	lexical bool
}

// Channel names, as they appear in reports, flags and parameters.
const (
	chanSemantic   = "semantic"
	chanLexical    = "lexical"
	chanIO         = "io"
	chanStructural = "structural"
	chanJudge      = "judge"
	chanTraces     = "traces"
	chanRepair     = "repair"
)

// channels lists every channel name.
var channels = []string{chanSemantic, chanLexical, chanIO, chanStructural, chanJudge, chanTraces, chanRepair}

// phis holds a candidate's value on each channel that scored it: a fixed array rather than a
// map, since a large library has millions of candidates.
type phis struct {
	v   [7]float64 // by the channel's place in channels
	has uint8      // bit k: channel k has a value
}

// channelIndex is name's place in channels, -1 for an unknown name.
func channelIndex(name string) int {
	switch name {
	case chanSemantic:
		return 0
	case chanLexical:
		return 1
	case chanIO:
		return 2
	case chanStructural:
		return 3
	case chanJudge:
		return 4
	case chanTraces:
		return 5
	case chanRepair:
		return 6
	}
	return -1
}

// Set records v as the value on channel name (one of channels; others are ignored).
func (p *phis) Set(name string, v float64) {
	if k := channelIndex(name); k >= 0 {
		p.v[k], p.has = v, p.has|1<<k
	}
}

// Lookup returns the value on channel name and whether the channel scored the pair.
func (p *phis) Lookup(name string) (float64, bool) {
	k := channelIndex(name)
	if k < 0 || p.has&(1<<k) == 0 {
		return 0, false
	}
	return p.v[k], true
}

// Get returns the value on channel name, 0 when the channel did not score the pair.
func (p *phis) Get(name string) float64 {
	v, _ := p.Lookup(name)
	return v
}

// activeSignals returns the channels with data for this build and variant. The judge's values
// come later (judge), for gated candidates only.
func (b *builder) activeSignals() []signal {
	l := b.opt.Lambda
	var sem []signal
	if b.vectors != nil {
		sem = []signal{{Name: chanSemantic, Lambda: l[chanSemantic], Min: 0.3, Score: b.semantic, Propose: true}}
	}
	if b.opt.Variant == variantSemanticOnly {
		return sem
	}
	all := []signal{
		{Name: chanLexical, Lambda: l[chanLexical], Min: 0.05, Score: b.lexical, Propose: true, lexical: true},
		{Name: chanIO, Lambda: l[chanIO], Min: 0.3, Score: b.io, Propose: true},
		{Name: chanStructural, Lambda: l[chanStructural], Min: 0.2, Score: b.structural, Propose: true},
	}
	all = append(sem, all...)
	if b.traces != nil {
		all = append(all, signal{Name: chanTraces, Lambda: l[chanTraces], Min: 0.05, Score: b.trace, Propose: true})
	}
	if b.hasRepairSkills() {
		all = append(all, signal{Name: chanRepair, Lambda: l[chanRepair], Min: 0.2, Score: b.repair, Propose: true})
	}
	if b.opt.Judge != nil && b.opt.Variant != VariantNoJudge && b.opt.Variant != VariantPublishAll {
		all = append(all, signal{Name: chanJudge, Lambda: l[chanJudge]})
	}
	var out []signal
	for _, s := range all {
		if s.Lambda > 0 {
			out = append(out, s)
		}
	}
	return out
}

// semantic is the cosine of the two skills' embeddings, clipped to [0, 1].
func (b *builder) semantic(i, j int) float64 {
	nx, ny := b.vnorms[i], b.vnorms[j]
	if nx == 0 || ny == 0 {
		return 0
	}
	v := b.vectors
	x, y := v.Data[i*v.Dim:(i+1)*v.Dim], v.Data[j*v.Dim:(j+1)*v.Dim]
	y = y[:len(x)]
	// Four sums in int32, exact: 128²·graphs.MaxDim is below 2³¹.
	var d0, d1, d2, d3 int32
	k := 0
	for ; k+4 <= len(x); k += 4 {
		d0 += int32(x[k]) * int32(y[k])
		d1 += int32(x[k+1]) * int32(y[k+1])
		d2 += int32(x[k+2]) * int32(y[k+2])
		d3 += int32(x[k+3]) * int32(y[k+3])
	}
	for ; k < len(x); k++ {
		d0 += int32(x[k]) * int32(y[k])
	}
	dot := int64(d0) + int64(d1) + int64(d2) + int64(d3)
	return clip(float64(dot)/math.Sqrt(float64(nx)*float64(ny)), 0, 1)
}

// lexical is the cosine of the two skills' TF-IDF vectors over name, description and tags.
func (b *builder) lexical(i, j int) float64 { return cosine(b.feat[i].text, b.feat[j].text) }

// io is how well s_i's outputs feed s_j's inputs: 1 for a declared dependency, else the best
// match of one of s_i's outputs to one of s_j's inputs. Declared fields on both sides must match
// by name; otherwise the share of the input's IDF-weighted tokens the output covers.
func (b *builder) io(i, j int) float64 {
	for _, d := range b.feat[j].deps {
		if d == i {
			return 1
		}
	}
	best := 0.0
	for _, o := range b.feat[i].outputs {
		for _, x := range b.feat[j].inputs {
			best = max(best, b.slotMatch(o, x))
		}
	}
	return best
}

func (b *builder) slotMatch(o, x slot) float64 {
	if o.declared && x.declared {
		if o.key == x.key {
			return keySpecificity(b.keyMakers[o.key], b.keyTakers[o.key]) * senseAgreement(o, x)
		}
		return 0
	}
	var covered, total float64
	for _, t := range x.tokens {
		w := b.idf[t]
		if w == 0 {
			w = b.maxIDF
		}
		total += w
		for _, u := range o.tokens {
			if u == t {
				covered += w
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return covered / total
}

// structural is the role-order compatibility of s_i before s_j times the similarity of what
// they act on: "get_location_service_status" before "set_location_service_status" scores 1.
func (b *builder) structural(i, j int) float64 {
	ri, rj := b.feat[i].role, b.feat[j].role
	if !ri.ordered() || !rj.ordered() {
		return 0
	}
	order := 0.0
	switch {
	case ri < rj:
		order = 1
	case ri == rj:
		order = 0.3
	}
	if order == 0 {
		return 0
	}
	return order * cosine(b.feat[i].object, b.feat[j].object)
}

// repair is how much s_i, a recovery skill, helps recover or complete s_j: 1 when s_j's text
// names s_i, else the similarity of what they act on.
func (b *builder) repair(i, j int) float64 {
	if b.feat[i].role != roleRepair || i == j {
		return 0
	}
	for _, m := range b.feat[j].mentions {
		if m == i {
			return 1
		}
	}
	return max(cosine(b.feat[i].object, b.feat[j].object), cosine(b.feat[i].text, b.feat[j].text))
}

func (b *builder) hasRepairSkills() bool {
	for _, f := range b.feat {
		if f.role == roleRepair {
			return true
		}
	}
	return false
}

// trace is how reliably s_i and s_j run together in successful runs: the overlap coefficient
// co(i, j) / min(n_i, n_j), 1 when every run of the rarer of the two also used the other, times
// how much a co-use predicts another in these runs (traceStats.predictive): runs that combine
// skills at random say little about which belong together, however often a pair met. The order
// the runs used them in is left to the reorder probe.
func (b *builder) trace(i, j int) float64 {
	t := b.traces
	co := t.co.co(i, j)
	if co == 0 {
		return 0
	}
	return clip(float64(co)/float64(min(t.uses[i], t.uses[j])), 0, 1) * t.predictive()
}

// relation names the kind of link a candidate stands for, from the channel that supports it.
// Runs make a dependency only of a pair they used in one order (traceStats.given counts the
// runs that used the source first); a pair they used in both orders is a workflow, linked both
// ways with no direction (traceStats.twoWay).
func (b *builder) relation(c *edgeCandidate) graphs.Relation {
	runs := b.traces.given(c.Source, c.Target) >= 0.5
	switch {
	case c.Phi.Get(chanIO) >= 0.5, runs && !b.traces.twoWay(c.Source, c.Target):
		return graphs.Dependency
	case runs, c.Phi.Get(chanTraces) >= 0.3, c.Phi.Get(chanRepair) >= 0.5:
		return graphs.Workflow
	case c.Phi.Get(chanStructural) >= 0.3 && b.feat[c.Source].role < b.feat[c.Target].role:
		return graphs.Workflow
	case b.feat[c.Source].role == b.feat[c.Target].role && c.Phi.Get(chanLexical) >= 0.5:
		return graphs.Alternative
	}
	return graphs.Semantic
}

// senseAgreement is how much two fields of one name are about the same thing: 1 when both
// skills act on nothing but that name (createBrand's brand_id, deleteBrand's brand_id) or when
// what the fields say beyond their name overlaps by senseFull or more (cosine of slot.sense),
// falling linearly to 0 for fields whose descriptions and skills share nothing beyond the name.
func senseAgreement(o, x slot) float64 {
	if o.bare && x.bare {
		return 1
	}
	if o.sense == nil || x.sense == nil {
		return 1 // nothing to tell the senses apart by
	}
	return min(1, cosine(o.sense, x.sense)/senseFull)
}

// senseFull is the sense overlap at which a field-name match counts in full.
const senseFull = 0.2

// keySpecificity is how much a match on a declared field name says when makers skills declare
// it as an output and takers as an input. A field at most two skills return is specific: 1,
// falling as 1/√(makers − 1) beyond. A field many skills take but few return ("user_id" taken by
// 46 skills and returned by one) is mostly supplied by the caller, not by a skill: the match is
// scaled by √(2·makers/takers) when that is below 1.
func keySpecificity(makers, takers int) float64 {
	s := 1 / math.Sqrt(float64(max(1, makers-1)))
	if takers > 0 {
		s *= min(1, math.Sqrt(2*float64(max(1, makers))/float64(takers)))
	}
	return s
}

// countKeys counts, per declared field name, the skills that declare it as an output (makers)
// and as an input (takers).
func countKeys(feat []features) (makers, takers map[string]int) {
	count := func(slots []slot, into map[string]int) {
		seen := map[string]bool{}
		for _, x := range slots {
			if x.declared && !seen[x.key] {
				seen[x.key] = true
				into[x.key]++
			}
		}
	}
	makers, takers = map[string]int{}, map[string]int{}
	for _, f := range feat {
		count(f.outputs, makers)
		count(f.inputs, takers)
	}
	return makers, takers
}
