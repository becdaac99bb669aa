package graphs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/errtext"
)

// Skill is one node of an Artifact.
type Skill struct {
	Name        string
	Description string
	Source      string
	Body        string // the head of the skill's body, already cut to the builder's budget
}

// Edge is one published edge of an Artifact, from Skills[Source] to Skills[Target].
type Edge struct {
	Source, Target int
	Weight         float32 // published weight in [0, 1]
	Assoc          float32 // association score A in [0, 1]
	State          State
	Type           Relation
}

// Posting is one document of a term's posting list.
type Posting struct {
	Doc uint32
	TF  float32 // field-weighted term frequency
}

// Lexicon is the BM25 index stored in the artifact.
type Lexicon struct {
	K1, B, AvgDL float32
	Terms        []string    // strictly ascending byte order
	Postings     [][]Posting // Postings[t] belongs to Terms[t]; documents strictly ascending
	DocLen       []float32   // one per skill
}

// Artifact is everything a .skg file holds, in memory. Encode turns it into bytes.
type Artifact struct {
	Skills   []Skill
	Edges    []Edge // any order; Encode sorts by (Source, Target)
	Lexicon  Lexicon
	Params   map[string]any // build parameters; encoded as JSON with sorted keys
	Vectors  *Vectors       // skill embeddings (format 1.1); nil: none
	Encoder  *QueryEncoder  // query encoder (format 1.1); nil: none. Needs Vectors.
	Memory   *Memory        // memory of past tasks (format 2.1); nil: none
	Clusters *Clusters      // vector clusters (format 2.2); nil: none. Needs Vectors.
}

// Encode returns the artifact's bytes: format 2.2 with vector clusters, else 2.1 with a memory
// of past tasks, else 2.0 (which is 2.1 without the memory sections). The same Artifact always
// gives the same bytes.
func Encode(a *Artifact) ([]byte, error) { return encodeAs(a, false) }

// encodeAs is Encode; with legacy set it writes the artifact as a 1.x encoder did (1.0 without
// vectors, 1.1 with them), for the tests that 1.x artifacts stay readable.
func encodeAs(a *Artifact, legacy bool) ([]byte, error) {
	s, err := stage(a, legacy)
	if err != nil {
		return nil, err
	}
	return s.Encode(a.Memory, a.Params)
}

// Staged is an artifact encoded but for its parameters and its memory of past tasks, which
// Encode adds: a builder that calibrates a memory on the artifact without it, then adds the
// memory, encodes the rest once rather than twice.
type Staged struct {
	a            Artifact // the artifact staged, its Memory and Params left out
	heap         stringHeap
	bodies       map[string][]byte
	tags         []string // the sections before the memory's
	clusters     []string // the clusters' sections, after the memory's
	major, minor uint16
	legacy       bool
	memory       *Memory // the memory whose strings the heap holds, nil before one
	strs         int     // the heap's length without the memory's strings
}

// Stage encodes a but for its Memory and Params (a.Memory is checked, not encoded).
func Stage(a *Artifact) (*Staged, error) { return stage(a, false) }

// Encode returns the bytes graphs.Encode gives for the staged artifact with the memory m (nil:
// none) and the parameters params. After a memory, only the same memory or none can follow: the
// string heap keeps the first memory's strings.
func (s *Staged) Encode(m *Memory, params map[string]any) ([]byte, error) {
	if m != nil && s.legacy {
		return nil, errors.New("graphs: a 1.x artifact has no memory")
	}
	if m != nil && s.memory != nil && m != s.memory {
		return nil, errors.New("graphs: a staged artifact takes one memory")
	}
	a := s.a
	a.Memory = m
	if err := a.checkMemory(); err != nil {
		return nil, err
	}
	paramsBody := []byte("{}")
	if params != nil {
		var err error
		// Map keys are sorted, as encoding/json sorts them, which keeps the bytes deterministic.
		if paramsBody, err = marshalParams(params); err != nil {
			return nil, errtext.Prefix("graphs: encoding params: ", err)
		}
	}
	s.bodies[tagParams] = paramsBody
	tags, minor := slices.Clone(s.tags), s.minor
	strs := s.strs
	if m != nil {
		tags, minor = append(tags, a.memoryBodies(&s.heap, s.bodies)...), MemoryMinor
		s.memory = m
		strs = s.heap.buf.Len()
	}
	if len(s.clusters) > 0 {
		tags, minor = append(tags, s.clusters...), ClusterMinor
	}
	s.bodies[tagStrings] = s.heap.buf.Bytes()[:strs]
	return assemble(tags, s.bodies, s.major, minor)
}

// stage is Stage, and with legacy what a 1.x encoder wrote (encodeAs).
func stage(a *Artifact, legacy bool) (*Staged, error) {
	n := len(a.Skills)
	if err := a.check(); err != nil {
		return nil, err
	}
	edges := slices.Clone(a.Edges)
	slices.SortFunc(edges, func(x, y Edge) int {
		if x.Source != y.Source {
			return x.Source - y.Source
		}
		return x.Target - y.Target
	})
	for i := 1; i < len(edges); i++ {
		if edges[i].Source == edges[i-1].Source && edges[i].Target == edges[i-1].Target {
			return nil, errors.New("graphs: duplicate edge " + strconv.Quote(a.Skills[edges[i].Source].Name) + " -> " + strconv.Quote(a.Skills[edges[i].Target].Name))
		}
	}

	var heap stringHeap
	skil := make([]byte, 0, n*skillRecord)
	for _, s := range a.Skills {
		for _, str := range []string{s.Name, s.Description, s.Source, s.Body} {
			skil = heap.ref(skil, str)
		}
	}

	eoff := make([]byte, 0, 4*(n+1))
	etgt := make([]byte, 0, 4*len(edges))
	ewgt := make([]byte, 0, 4*len(edges))
	easc := make([]byte, 0, 4*len(edges))
	eatr := make([]byte, 0, 2*len(edges))
	e := 0
	for i := 0; i <= n; i++ {
		eoff = binary.LittleEndian.AppendUint32(eoff, uint32(e))
		for e < len(edges) && edges[e].Source == i {
			ed := edges[e]
			etgt = binary.LittleEndian.AppendUint32(etgt, uint32(ed.Target))
			ewgt = binary.LittleEndian.AppendUint32(ewgt, math.Float32bits(ed.Weight))
			easc = binary.LittleEndian.AppendUint32(easc, math.Float32bits(ed.Assoc))
			eatr = append(eatr, byte(ed.State), byte(ed.Type))
			e++
		}
	}

	lx := &a.Lexicon
	lhdr := binary.LittleEndian.AppendUint32(nil, math.Float32bits(lx.K1))
	lhdr = binary.LittleEndian.AppendUint32(lhdr, math.Float32bits(lx.B))
	lhdr = binary.LittleEndian.AppendUint32(lhdr, math.Float32bits(lx.AvgDL))
	lhdr = binary.LittleEndian.AppendUint32(lhdr, 0)
	var ltrm, lpof, lpst, ldoc []byte
	var gaps, tfIdx, tfVal []byte
	tfs := map[uint32]uint64{} // frequency bits → index into tfVal
	p := 0
	for t, term := range lx.Terms {
		ltrm = heap.ref(ltrm, term)
		lpof = binary.LittleEndian.AppendUint32(lpof, uint32(p))
		prev := -1
		for _, ps := range lx.Postings[t] {
			bits := math.Float32bits(ps.TF)
			if legacy {
				lpst = binary.LittleEndian.AppendUint32(lpst, ps.Doc)
				lpst = binary.LittleEndian.AppendUint32(lpst, bits)
			} else {
				gaps = binary.AppendUvarint(gaps, uint64(int(ps.Doc)-prev-1))
				i, ok := tfs[bits]
				if !ok {
					i = uint64(len(tfs))
					tfs[bits] = i
					tfVal = binary.LittleEndian.AppendUint32(tfVal, bits)
				}
				tfIdx = binary.AppendUvarint(tfIdx, i)
			}
			prev = int(ps.Doc)
			p++
		}
	}
	lpof = binary.LittleEndian.AppendUint32(lpof, uint32(p))
	for _, d := range lx.DocLen {
		ldoc = binary.LittleEndian.AppendUint32(ldoc, math.Float32bits(d))
	}

	s := &Staged{a: *a, legacy: legacy}
	s.a.Memory, s.a.Params = nil, nil
	bodies := map[string][]byte{
		tagSkills: skil, tagEdgeOff: eoff, tagEdgeTgt: etgt,
		tagEdgeWgt: ewgt, tagEdgeAsc: easc, tagEdgeAttr: eatr, tagLexHdr: lhdr,
		tagLexTerms: ltrm, tagLexPOff: lpof, tagLexDoc: ldoc,
	}
	tags := slices.Clone(sectionOrder2)
	major, minor := uint16(Major), uint16(Minor)
	if legacy {
		// What a 1.x encoder wrote: 1.0 without vectors, 1.1 with them.
		bodies[tagLexPost] = lpst
		tags, major, minor = slices.Clone(sectionOrder), legacyMajor, 0
	} else {
		bodies[tagLexGaps], bodies[tagLexTFIdx], bodies[tagLexTFVal] = gaps, tfIdx, tfVal
	}
	if extra := a.vectorBodies(&heap, bodies, legacy); len(extra) > 0 {
		tags = append(tags, extra...)
		if legacy {
			minor = legacyMinor
		}
	}
	if !legacy {
		s.clusters = a.clusterBodies(bodies)
	}
	s.heap, s.bodies, s.tags, s.major, s.minor = heap, bodies, tags, major, minor
	s.strs = heap.buf.Len()
	return s, nil
}

// assemble lays out the header, the section table and the bodies of tags in order.
func assemble(tags []string, bodies map[string][]byte, major, minor uint16) ([]byte, error) {
	off := headerSize + sectionSize*len(tags)
	total := off
	for _, tag := range tags {
		total = align8(total) + len(bodies[tag])
	}
	if total > math.MaxUint32 {
		return nil, errors.New("graphs: artifact would be " + errtext.Itoa(total) + " bytes, over the 4 GiB limit")
	}
	out := make([]byte, total)
	copy(out, Magic)
	binary.LittleEndian.PutUint16(out[4:], major)
	binary.LittleEndian.PutUint16(out[6:], minor)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(tags)))
	for i, tag := range tags {
		off = align8(off)
		body := bodies[tag]
		rec := out[headerSize+sectionSize*i:]
		copy(rec, tag)
		binary.LittleEndian.PutUint32(rec[4:], uint32(off))
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(body)))
		copy(out[off:], body)
		off += len(body)
	}
	binary.LittleEndian.PutUint32(out[12:], checksum(out[headerSize:]))
	return out, nil
}

// check rejects an Artifact that would decode as corrupt, naming the offending item.
func (a *Artifact) check() error {
	n := len(a.Skills)
	for i, s := range a.Skills {
		if s.Name == "" {
			return errors.New("graphs: skill " + errtext.Itoa(i) + " has an empty name")
		}
	}
	for _, e := range a.Edges {
		if e.Source < 0 || e.Source >= n || e.Target < 0 || e.Target >= n {
			return errors.New("graphs: edge " + errtext.Itoa(e.Source) + " -> " + errtext.Itoa(e.Target) + " out of range (" + errtext.Itoa(n) + " skills)")
		}
		if e.Source == e.Target {
			return errors.New("graphs: self edge on " + strconv.Quote(a.Skills[e.Source].Name))
		}
		if !unit(e.Weight) || !unit(e.Assoc) {
			return errors.New("graphs: edge " + strconv.Quote(a.Skills[e.Source].Name) + " -> " + strconv.Quote(a.Skills[e.Target].Name) + ": weight " + errtext.Ftoa(e.Weight) + " / association " + errtext.Ftoa(e.Assoc) + " outside [0, 1]")
		}
		if e.State >= numStates || e.Type >= numRelations {
			return errors.New("graphs: edge " + strconv.Quote(a.Skills[e.Source].Name) + " -> " + strconv.Quote(a.Skills[e.Target].Name) + ": unknown state " + errtext.Itoa(e.State) + " or type " + errtext.Itoa(e.Type))
		}
	}
	lx := &a.Lexicon
	if len(lx.Postings) != len(lx.Terms) {
		return errors.New("graphs: lexicon has " + errtext.Itoa(len(lx.Terms)) + " terms but " + errtext.Itoa(len(lx.Postings)) + " posting lists")
	}
	if len(lx.DocLen) != n {
		return errors.New("graphs: lexicon has " + errtext.Itoa(len(lx.DocLen)) + " document lengths for " + errtext.Itoa(n) + " skills")
	}
	for t, term := range lx.Terms {
		if t > 0 && strings.Compare(lx.Terms[t-1], term) >= 0 {
			return errors.New("graphs: lexicon terms not strictly ascending at " + strconv.Quote(term))
		}
		for i, p := range lx.Postings[t] {
			if int(p.Doc) >= n || (i > 0 && p.Doc <= lx.Postings[t][i-1].Doc) {
				return errors.New("graphs: postings of " + strconv.Quote(term) + " out of range or not ascending")
			}
			if !finite(p.TF) || p.TF < 0 {
				return errors.New("graphs: postings of " + strconv.Quote(term) + ": bad term frequency " + errtext.Ftoa(p.TF))
			}
		}
	}
	for _, f := range []float32{lx.K1, lx.B, lx.AvgDL} {
		if !finite(f) || f < 0 {
			return errors.New("graphs: lexicon parameter " + errtext.Ftoa(f) + " is not a finite non-negative number")
		}
	}
	for _, d := range lx.DocLen {
		if !finite(d) || d < 0 {
			return errors.New("graphs: document length " + errtext.Ftoa(d) + " is not a finite non-negative number")
		}
	}
	if err := a.checkVectors(); err != nil {
		return err
	}
	if err := a.checkClusters(); err != nil {
		return err
	}
	return a.checkMemory()
}

func unit(f float32) bool   { return f >= 0 && f <= 1 }
func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }
func align8(n int) int      { return (n + 7) &^ 7 }

// stringHeap appends strings to one buffer, storing each distinct string once.
type stringHeap struct {
	buf  bytes.Buffer
	seen map[string]uint32
}

// ref appends the (offset, length) reference of s to dst.
func (h *stringHeap) ref(dst []byte, s string) []byte {
	if h.seen == nil {
		h.seen = map[string]uint32{}
	}
	off, ok := h.seen[s]
	if !ok {
		off = uint32(h.buf.Len())
		h.buf.WriteString(s)
		h.seen[s] = off
	}
	dst = binary.LittleEndian.AppendUint32(dst, off)
	return binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
}
