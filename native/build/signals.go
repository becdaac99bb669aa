package build

import "github.com/caskg/caskg/graphs"

// Signal is one channel of evidence that s_i should precede or support s_j, normalized to [0, 1]
// per ordered pair (DESIGN §3.1). Channels plug into candidate induction and the association
// score by appearing in Builder.signals; a channel whose Lambda is 0 is inactive.
type Signal struct {
	Name   string
	Lambda float64
	Min    float64 // least value that makes a pair a candidate of this channel
	Score  func(i, j int) float64
}

// Channel names, as they appear in reports and parameters.
const (
	ChanLexical    = "lexical"
	ChanIO         = "io"
	ChanStructural = "structural"
)

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
			return 1
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

// relation names the kind of link a candidate stands for, from the channel that supports it.
func (b *builder) relation(c *Candidate) graphs.Relation {
	switch {
	case c.Phi[ChanIO] >= 0.5:
		return graphs.Dependency
	case c.Phi[ChanStructural] >= 0.3 && b.feat[c.Source].role < b.feat[c.Target].role:
		return graphs.Workflow
	case b.feat[c.Source].role == b.feat[c.Target].role && c.Phi[ChanLexical] >= 0.5:
		return graphs.Alternative
	}
	return graphs.Semantic
}
