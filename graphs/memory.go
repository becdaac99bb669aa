package graphs

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/caskg/caskg/graphs/errtext"
)

// The memory of past tasks (format 2.1, optional): what the runs a graph learned from were
// asked, as an index from the words of their tasks to the tool sets that served them. Its
// documents are tool sets, each with the kept terms of the tasks of the runs that used exactly
// that set (failed runs in documents of their own); a query's nearest documents vote for their
// skills (engine, memory.go). No task text is stored, only terms that enough runs shared
// (engine.BuildMemory). The sections come as a group or not at all (D documents, M terms,
// P postings, S set members):
//
//	MHDR  32               BM25 k1 f32, b f32, average document length f32, fusion weight f32
//	                       (finite, ≥ 0, b ≤ 1; weight 0: the memory is kept but does not speak), depth u32 (how
//	                       many nearest documents vote, ≥ 1), runs u32 (runs remembered), two
//	                       reserved u32 (0)
//	MTRM  M × 8            memory terms (string refs), strictly ascending byte order
//	MPOF  (M+1) × u32      CSR offsets of each term's postings
//	MPST  P × 8            postings: document u32 (strictly ascending per term), term frequency f32 (> 0)
//	MDOC  D × 12           per document: length f32, runs u32 (≥ 1), flags u32 (bit 0: failed runs)
//	MSOF  (D+1) × u32      CSR offsets of each document's tool set into MSKL
//	MSKL  S × u32          skill ids, strictly ascending within a document, each below N
const (
	tagMemHdr   = "MHDR"
	tagMemTerms = "MTRM"
	tagMemPOff  = "MPOF"
	tagMemPost  = "MPST"
	tagMemDocs  = "MDOC"
	tagMemSOff  = "MSOF"
	tagMemSkill = "MSKL"

	memHeader    = 32
	memDocRecord = 12
	memFailed    = 1 << 0
	// MaxMemoryDepth bounds how many nearest documents vote.
	MaxMemoryDepth = 1000
)

var memorySections = []string{tagMemHdr, tagMemTerms, tagMemPOff, tagMemPost, tagMemDocs, tagMemSOff, tagMemSkill}

// IsMemorySection reports whether tag names a section of the memory of past tasks, so that a
// reader of Sections can tell the memory's size without knowing the tags.
func IsMemorySection(tag string) bool { return slices.Contains(memorySections, tag) }

// Memory is the memory of past tasks of an Artifact (format 2.1).
type Memory struct {
	K1, B, AvgDL float32
	Weight       float32     // the fusion weight the build calibrated; 0 keeps the memory silent
	Depth        int         // nearest documents that vote, in [1, MaxMemoryDepth]
	Runs         int         // runs remembered (the sum of Docs' Runs)
	Terms        []string    // strictly ascending byte order
	Postings     [][]Posting // Postings[t] belongs to Terms[t]; documents strictly ascending
	Docs         []MemoryDoc
}

// MemoryDoc is one document of a Memory: a tool set and the runs that used it.
type MemoryDoc struct {
	Len    float32  // BM25 document length: the sum of its terms' frequencies
	Runs   int      // runs merged into it, at least 1
	Failed bool     // the runs failed: the document votes against its skills
	Skills []uint32 // strictly ascending skill ids
}

// checkMemory rejects a Memory that would decode as corrupt.
func (a *Artifact) checkMemory() error {
	m := a.Memory
	if m == nil {
		return nil
	}
	n := len(a.Skills)
	for _, f := range []float32{m.K1, m.B, m.AvgDL, m.Weight} {
		if !finite(f) || f < 0 {
			return errors.New("graphs: memory parameter " + errtext.Ftoa(f) + " is not a finite non-negative number")
		}
	}
	if m.B > 1 {
		return errors.New("graphs: memory parameter b " + errtext.Ftoa(m.B) + " is above 1")
	}
	if m.Depth < 1 || m.Depth > MaxMemoryDepth {
		return errors.New("graphs: memory depth " + errtext.Itoa(m.Depth) + " outside [1, " + errtext.Itoa(MaxMemoryDepth) + "]")
	}
	if len(m.Postings) != len(m.Terms) {
		return errors.New("graphs: memory has " + errtext.Itoa(len(m.Terms)) + " terms but " + errtext.Itoa(len(m.Postings)) + " posting lists")
	}
	runs := 0
	for d, doc := range m.Docs {
		if doc.Runs < 1 || doc.Runs > math.MaxUint32 || !finite(doc.Len) || doc.Len < 0 {
			return errors.New("graphs: memory document " + errtext.Itoa(d) + ": " + errtext.Itoa(doc.Runs) + " runs or length " + errtext.Ftoa(doc.Len) + " invalid")
		}
		runs += doc.Runs
		for i, s := range doc.Skills {
			if int(s) >= n || (i > 0 && s <= doc.Skills[i-1]) {
				return errors.New("graphs: memory document " + errtext.Itoa(d) + ": skill " + errtext.Itoa(s) + " out of range or not ascending")
			}
		}
	}
	if runs != m.Runs || runs > math.MaxUint32 {
		return errors.New("graphs: memory says " + errtext.Itoa(m.Runs) + " runs, its documents " + errtext.Itoa(runs))
	}
	for t, term := range m.Terms {
		if t > 0 && strings.Compare(m.Terms[t-1], term) >= 0 {
			return errors.New("graphs: memory terms not strictly ascending at " + strconv.Quote(term))
		}
		for i, p := range m.Postings[t] {
			if int(p.Doc) >= len(m.Docs) || (i > 0 && p.Doc <= m.Postings[t][i-1].Doc) || !finite(p.TF) || p.TF <= 0 {
				return errors.New("graphs: memory postings of " + strconv.Quote(term) + " out of range, not ascending or with a bad frequency")
			}
		}
	}
	return nil
}

// memoryBodies puts the memory's section bodies in bodies and returns their tags, none without
// a memory.
func (a *Artifact) memoryBodies(heap *stringHeap, bodies map[string][]byte) []string {
	m := a.Memory
	if m == nil {
		return nil
	}
	le := binary.LittleEndian
	hdr := make([]byte, 0, memHeader)
	for _, f := range []float32{m.K1, m.B, m.AvgDL, m.Weight} {
		hdr = le.AppendUint32(hdr, math.Float32bits(f))
	}
	hdr = le.AppendUint32(hdr, uint32(m.Depth))
	hdr = le.AppendUint32(hdr, uint32(m.Runs))
	hdr = le.AppendUint64(hdr, 0)
	var trm, pof, pst []byte
	p := 0
	for t, term := range m.Terms {
		trm = heap.ref(trm, term)
		pof = le.AppendUint32(pof, uint32(p))
		for _, ps := range m.Postings[t] {
			pst = le.AppendUint32(pst, ps.Doc)
			pst = le.AppendUint32(pst, math.Float32bits(ps.TF))
			p++
		}
	}
	pof = le.AppendUint32(pof, uint32(p))
	var docs, sof, skl []byte
	s := 0
	for _, d := range m.Docs {
		docs = le.AppendUint32(docs, math.Float32bits(d.Len))
		docs = le.AppendUint32(docs, uint32(d.Runs))
		var flags uint32
		if d.Failed {
			flags |= memFailed
		}
		docs = le.AppendUint32(docs, flags)
		sof = le.AppendUint32(sof, uint32(s))
		for _, id := range d.Skills {
			skl = le.AppendUint32(skl, id)
			s++
		}
	}
	sof = le.AppendUint32(sof, uint32(s))
	bodies[tagMemHdr], bodies[tagMemTerms], bodies[tagMemPOff], bodies[tagMemPost] = hdr, trm, pof, pst
	bodies[tagMemDocs], bodies[tagMemSOff], bodies[tagMemSkill] = docs, sof, skl
	return memorySections
}

// memory is a decoded memory of past tasks; the zero value is none.
type memory struct {
	hdr           []byte
	trm, pof, pst []byte
	docs          []byte
	sof, skl      []byte
	m, d          int // terms, documents
}

// bindMemory locates and validates the optional memory sections of format 2.1. Its errors name
// the section and the item, without the detail of the core sections' messages: each message
// written out costs the WebAssembly module its code.
func (g *Graph) bindMemory() error {
	hdr, ok := g.lookup(tagMemHdr)
	if !ok {
		for _, tag := range memorySections[1:] {
			if _, ok := g.lookup(tag); ok {
				return memCorrupt(tag, -1)
			}
		}
		return nil
	}
	mem := memory{hdr: hdr}
	var body [7][]byte
	units := [7]int{memHeader, 8, 4, 8, memDocRecord, 4, 4}
	for i, tag := range memorySections {
		b, ok := g.lookup(tag)
		if !ok || len(b)%units[i] != 0 || (i == 0 && len(b) != memHeader) {
			return memCorrupt(tag, -1)
		}
		body[i] = b
	}
	mem.trm, mem.pof, mem.pst, mem.docs, mem.sof, mem.skl = body[1], body[2], body[3], body[4], body[5], body[6]
	for i := range 4 {
		if f := f32(hdr, i); !finite(f) || f < 0 || (i == 1 && f > 1) {
			return memCorrupt(tagMemHdr, i)
		}
	}
	if dp := u32(hdr, 4); dp < 1 || dp > MaxMemoryDepth || u32(hdr, 6) != 0 || u32(hdr, 7) != 0 {
		return memCorrupt(tagMemHdr, 4)
	}
	mem.m, mem.d = len(mem.trm)/8, len(mem.docs)/memDocRecord
	if len(mem.pof) != 4*(mem.m+1) || csr(mem.pof, mem.m, len(mem.pst)/8, tagMemPOff) != nil {
		return memCorrupt(tagMemPOff, -1)
	}
	if len(mem.sof) != 4*(mem.d+1) || csr(mem.sof, mem.d, len(mem.skl)/4, tagMemSOff) != nil {
		return memCorrupt(tagMemSOff, -1)
	}
	for t := range mem.m {
		if g.checkString(mem.trm, t, "memory term") != nil || (t > 0 && g.str(mem.trm, t-1) >= g.str(mem.trm, t)) {
			return memCorrupt(tagMemTerms, t)
		}
		if !ascending(mem.pst, 2, int(u32(mem.pof, t)), int(u32(mem.pof, t+1)), mem.d) {
			return memCorrupt(tagMemPost, t)
		}
	}
	var runs uint64
	for d := range mem.d {
		l, r, flags := f32(mem.docs, 3*d), u32(mem.docs, 3*d+1), u32(mem.docs, 3*d+2)
		if !finite(l) || l < 0 || r < 1 || flags&^memFailed != 0 {
			return memCorrupt(tagMemDocs, d)
		}
		runs += uint64(r)
		if !ascending(mem.skl, 1, int(u32(mem.sof, d)), int(u32(mem.sof, d+1)), g.n) {
			return memCorrupt(tagMemSkill, d)
		}
	}
	if runs != uint64(u32(hdr, 5)) {
		return memCorrupt(tagMemHdr, 5)
	}
	g.mem = mem
	return nil
}

// ascending reports whether records lo to hi of b, each stride u32 long, start with ids strictly
// ascending and below n, and (stride 2) then a finite frequency ≥ 0.
func ascending(b []byte, stride, lo, hi, n int) bool {
	for k := lo; k < hi; k++ {
		id := u32(b, stride*k)
		if int(id) >= n || (k > lo && id <= u32(b, stride*(k-1))) {
			return false
		}
		if f := f32(b, stride*k+stride-1); stride == 2 && (!finite(f) || f <= 0) {
			return false
		}
	}
	return true
}

// memCorrupt names a memory section that breaks an invariant, and the item, when i ≥ 0.
func memCorrupt(tag string, i int) error {
	at := ""
	if i >= 0 {
		at = " at item " + errtext.Itoa(i)
	}
	return errtext.Wrap(ErrCorrupt, ": memory section "+errtext.Quote(tag)+" invalid"+at)
}

// HasMemory reports whether the artifact holds a memory of past tasks.
func (g *Graph) HasMemory() bool { return g.mem.hdr != nil }

// MemoryParams returns the memory's BM25 k1, b and average document length, its fusion weight,
// depth and runs; zeros without a memory.
func (g *Graph) MemoryParams() (k1, b, avgDL, weight float32, depth, runs int) {
	h := g.mem.hdr
	if h == nil {
		return
	}
	return f32(h, 0), f32(h, 1), f32(h, 2), f32(h, 3), int(u32(h, 4)), int(u32(h, 5))
}

// NumMemoryTerms is the number of memory terms.
func (g *Graph) NumMemoryTerms() int { return g.mem.m }

// MemoryTerm t of the memory.
func (g *Graph) MemoryTerm(t int) string { return g.str(g.mem.trm, t) }

// MemoryPostingBytes returns memory term t's postings as stored: 8 bytes each, the document
// (uint32) and the term frequency (float32), little-endian.
func (g *Graph) MemoryPostingBytes(t int) []byte {
	lo, hi := u32(g.mem.pof, t), u32(g.mem.pof, t+1)
	return g.mem.pst[8*lo : 8*hi]
}

// NumMemoryDocs is the number of memory documents.
func (g *Graph) NumMemoryDocs() int { return g.mem.d }

// MemoryDoc returns document d's length, runs and whether they failed.
func (g *Graph) MemoryDoc(d int) (length float32, runs int, failed bool) {
	return f32(g.mem.docs, 3*d), int(u32(g.mem.docs, 3*d+1)), u32(g.mem.docs, 3*d+2)&memFailed != 0
}

// MemorySkills returns document d's tool set as stored: skill ids (uint32, little-endian),
// ascending.
func (g *Graph) MemorySkills(d int) []byte {
	lo, hi := u32(g.mem.sof, d), u32(g.mem.sof, d+1)
	return g.mem.skl[4*lo : 4*hi]
}

// memoryArtifact copies the decoded memory back into a Memory; nil without one.
func (g *Graph) memoryArtifact() *Memory {
	if !g.HasMemory() {
		return nil
	}
	m := &Memory{Terms: make([]string, g.mem.m), Postings: make([][]Posting, g.mem.m), Docs: make([]MemoryDoc, g.mem.d)}
	m.K1, m.B, m.AvgDL, m.Weight, m.Depth, m.Runs = g.MemoryParams()
	for t := range g.mem.m {
		m.Terms[t] = g.MemoryTerm(t)
		b := g.MemoryPostingBytes(t)
		ps := make([]Posting, len(b)/8)
		for i := range ps {
			ps[i] = Posting{Doc: u32(b, 2*i), TF: f32(b, 2*i+1)}
		}
		m.Postings[t] = ps
	}
	for d := range g.mem.d {
		doc := &m.Docs[d]
		doc.Len, doc.Runs, doc.Failed = g.MemoryDoc(d)
		b := g.MemorySkills(d)
		doc.Skills = make([]uint32, len(b)/4)
		for i := range doc.Skills {
			doc.Skills[i] = u32(b, i)
		}
	}
	return m
}
