package graphs

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/caskg/caskg/graphs/errtext"
	"github.com/caskg/caskg/graphs/jsontext"
)

// Graph is a decoded artifact. It reads the bytes given to Decode in place: the caller must not
// modify them while the Graph is in use. Every accessor takes ids that Decode proved in range
// for in-range arguments; out-of-range arguments panic like a slice index would.
type Graph struct {
	data     []byte
	major    int
	minor    int
	sections []SectionInfo

	strs       []byte
	skil       []byte
	eoff, etgt []byte
	ewgt, easc []byte
	eatr       []byte
	k1, b, avg float32
	ltrm, lpof []byte
	lpst, ldoc []byte
	params     []byte
	n, e, t, p int

	// Format 1.1 (optional): skill vectors and the query encoder. dim is 0 without vectors.
	dim        int
	model      string
	vscl, vdat []byte
	hasEnc     bool
	qtrm, qwgt []byte
	qscl, qvec []byte
	qidx       []byte // format 2.0: term t's row of qvec is u32(qidx, t); nil in 1.1 (row t)
	v          int    // encoder terms

	mem memory // format 2.1 (optional): the memory of past tasks

	vcen, vasg []byte // format 2.2 (optional): the vector clusters (vectors.go)
}

// Decode validates b as an artifact and returns a Graph over it. It checks every offset,
// length, id and value once, so that later accessors need no checks; it allocates only the
// section table, never in proportion to a count it has not checked against the input length.
func Decode(b []byte) (*Graph, error) {
	if len(b) < 4 || string(b[:4]) != Magic {
		return nil, ErrNotArtifact
	}
	if len(b) < headerSize {
		return nil, errtext.Wrap(ErrTruncated, ": "+errtext.Itoa(len(b))+" bytes, header needs "+errtext.Itoa(headerSize))
	}
	g := &Graph{
		data:  b,
		major: int(binary.LittleEndian.Uint16(b[4:])),
		minor: int(binary.LittleEndian.Uint16(b[6:])),
	}
	if g.major != Major && g.major != legacyMajor {
		return nil, errtext.Wrap(ErrVersion, ": "+errtext.Itoa(g.major)+"."+errtext.Itoa(g.minor)+" (this build reads "+errtext.Itoa(legacyMajor)+".x and "+errtext.Itoa(Major)+".x)")
	}
	ns := binary.LittleEndian.Uint32(b[8:])
	if ns > MaxSections {
		return nil, errtext.Wrap(ErrCorrupt, ": "+errtext.Itoa(ns)+" sections (at most "+errtext.Itoa(MaxSections)+")")
	}
	tableEnd := headerSize + sectionSize*int(ns)
	if len(b) < tableEnd {
		return nil, errtext.Wrap(ErrTruncated, ": "+errtext.Itoa(len(b))+" bytes, section table needs "+errtext.Itoa(tableEnd))
	}
	g.sections = make([]SectionInfo, ns)
	prevEnd := tableEnd
	for i := range g.sections {
		rec := b[headerSize+sectionSize*i:]
		s := SectionInfo{
			Tag:    string(rec[:4]),
			Offset: int(binary.LittleEndian.Uint32(rec[4:])),
			Length: int(binary.LittleEndian.Uint32(rec[8:])),
		}
		if s.Offset < prevEnd || s.Offset%8 != 0 || binary.LittleEndian.Uint32(rec[12:]) != 0 {
			return nil, errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(s.Tag)+" at offset "+errtext.Itoa(s.Offset)+" overlaps, is unaligned or has reserved bits set")
		}
		if s.Offset+s.Length > len(b) {
			return nil, errtext.Wrap(ErrTruncated, ": section "+errtext.Quote(s.Tag)+" ends at "+errtext.Itoa(s.Offset+s.Length)+", file has "+errtext.Itoa(len(b))+" bytes")
		}
		prevEnd = s.Offset + s.Length
		g.sections[i] = s
	}
	if want, got := binary.LittleEndian.Uint32(b[12:]), checksum(b[headerSize:]); want != got {
		return nil, errtext.Wrap(ErrChecksum, ": header says "+errtext.Hex8(want)+", contents give "+errtext.Hex8(got))
	}
	if err := g.bind(); err != nil {
		return nil, err
	}
	if err := g.validate(); err != nil {
		return nil, err
	}
	if err := g.bindVectors(); err != nil {
		return nil, err
	}
	if err := g.bindMemory(); err != nil {
		return nil, err
	}
	if err := g.bindClusters(); err != nil {
		return nil, err
	}
	return g, nil
}

// section returns the body of the first section tagged tag.
func (g *Graph) section(tag string) ([]byte, error) {
	if s, ok := g.lookup(tag); ok {
		return s, nil
	}
	return nil, errtext.Wrap(ErrCorrupt, ": missing section "+errtext.Quote(tag))
}

// lookup returns the body of the first section tagged tag, if there is one. Not inlined: a
// copy of its loop at each of its many calls cost the WebAssembly module 2 KB.
//
//go:noinline
func (g *Graph) lookup(tag string) ([]byte, bool) {
	for _, s := range g.sections {
		if s.Tag == tag {
			return g.data[s.Offset : s.Offset+s.Length : s.Offset+s.Length], true
		}
	}
	return nil, false
}

// bind locates every section and derives the counts from their lengths.
func (g *Graph) bind() error {
	var err error
	get := func(tag string, unit int) []byte {
		if err != nil {
			return nil
		}
		var s []byte
		if s, err = g.section(tag); err == nil && len(s)%unit != 0 {
			err = errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tag)+" length "+errtext.Itoa(len(s))+" is not a multiple of "+errtext.Itoa(unit))
		}
		return s
	}
	g.strs = get(tagStrings, 1)
	g.skil = get(tagSkills, skillRecord)
	g.eoff = get(tagEdgeOff, 4)
	g.etgt = get(tagEdgeTgt, 4)
	g.ewgt = get(tagEdgeWgt, 4)
	g.easc = get(tagEdgeAsc, 4)
	g.eatr = get(tagEdgeAttr, 2)
	lhdr := get(tagLexHdr, 16)
	g.ltrm = get(tagLexTerms, 8)
	g.lpof = get(tagLexPOff, 4)
	var gaps, tfIdx, tfVal []byte
	if g.major == legacyMajor {
		g.lpst = get(tagLexPost, 8)
	} else {
		gaps, tfIdx, tfVal = get(tagLexGaps, 1), get(tagLexTFIdx, 1), get(tagLexTFVal, 4)
	}
	g.ldoc = get(tagLexDoc, 4)
	g.params = get(tagParams, 1)
	if err != nil {
		return err
	}
	g.n, g.e = len(g.skil)/skillRecord, len(g.etgt)/4
	g.t = len(g.ltrm) / 8
	if len(g.lpof) != 4*(g.t+1) {
		return errtext.Wrap(ErrCorrupt, ": "+errtext.Quote(tagLexPOff)+" has "+errtext.Itoa(len(g.lpof)/4)+" entries for "+errtext.Itoa(g.t)+" terms")
	}
	if g.major != legacyMajor {
		if g.lpst, err = expandPostings(g.lpof, g.t, g.n, gaps, tfIdx, tfVal); err != nil {
			return err
		}
	}
	g.p = len(g.lpst) / 8
	switch {
	case len(lhdr) != 16:
		return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagLexHdr)+" has "+errtext.Itoa(len(lhdr))+" bytes, want 16")
	case len(g.eoff) != 4*(g.n+1):
		return errtext.Wrap(ErrCorrupt, ": "+errtext.Quote(tagEdgeOff)+" has "+errtext.Itoa(len(g.eoff)/4)+" entries for "+errtext.Itoa(g.n)+" skills")
	case len(g.ewgt) != 4*g.e || len(g.easc) != 4*g.e || len(g.eatr) != 2*g.e:
		return errtext.Wrap(ErrCorrupt, ": edge sections disagree on the edge count "+errtext.Itoa(g.e))
	case len(g.ldoc) != 4*g.n:
		return errtext.Wrap(ErrCorrupt, ": "+errtext.Quote(tagLexDoc)+" has "+errtext.Itoa(len(g.ldoc)/4)+" entries for "+errtext.Itoa(g.n)+" skills")
	}
	g.k1, g.b, g.avg = f32(lhdr, 0), f32(lhdr, 1), f32(lhdr, 2)
	return nil
}

// expandPostings decodes format 2.0's postings (LPDG, LPTF, LTFV) of t terms over n documents
// into the 1.0 layout, 8 bytes a posting, with the offsets lpof. It checks that the offsets run
// from 0 up, that every varint is whole and every document and frequency index in range, and
// that the postings use up both streams; it allocates only once the offsets' total is known to
// fit the streams (a posting takes at least a byte of each).
func expandPostings(lpof []byte, t, n int, gaps, tfIdx, tfVal []byte) ([]byte, error) {
	p := int(u32(lpof, t))
	if p > len(gaps) || p > len(tfIdx) {
		return nil, errtext.Wrap(ErrCorrupt, ": "+errtext.Itoa(p)+" postings in "+errtext.Itoa(len(gaps))+" bytes of "+errtext.Quote(tagLexGaps)+" and "+errtext.Itoa(len(tfIdx))+" of "+errtext.Quote(tagLexTFIdx))
	}
	if err := csr(lpof, t, p, tagLexPOff); err != nil {
		return nil, err
	}
	nf := uint64(len(tfVal) / 4)
	for i := range int(nf) {
		if f := f32(tfVal, i); !finite(f) || f < 0 {
			return nil, errtext.Wrap(ErrCorrupt, ": term frequency "+errtext.Itoa(i)+" of "+errtext.Quote(tagLexTFVal)+" is "+errtext.Ftoa(f))
		}
	}
	out := make([]byte, 8*p)
	gi, fi := 0, 0
	for term := 0; term < t; term++ {
		doc := -1
		lo, hi := int(u32(lpof, term)), int(u32(lpof, term+1))
		for q := lo; q < hi; q++ {
			gap, k := binary.Uvarint(gaps[gi:])
			if k <= 0 || gap >= uint64(n-doc-1) {
				return nil, errtext.Wrap(ErrCorrupt, ": posting "+errtext.Itoa(q)+" of term "+errtext.Itoa(term)+": document gap unreadable or past the "+errtext.Itoa(n)+" skills")
			}
			gi += k
			doc += 1 + int(gap)
			idx, k := binary.Uvarint(tfIdx[fi:])
			if k <= 0 || idx >= nf {
				return nil, errtext.Wrap(ErrCorrupt, ": posting "+errtext.Itoa(q)+" of term "+errtext.Itoa(term)+": frequency index unreadable or past the "+errtext.Itoa(nf)+" values")
			}
			fi += k
			rec := out[8*q : 8*q+8]
			binary.LittleEndian.PutUint32(rec, uint32(doc))
			copy(rec[4:], tfVal[4*idx:4*idx+4])
		}
	}
	if gi != len(gaps) || fi != len(tfIdx) {
		return nil, errtext.Wrap(ErrCorrupt, ": "+errtext.Itoa(len(gaps)-gi)+" bytes of "+errtext.Quote(tagLexGaps)+" and "+errtext.Itoa(len(tfIdx)-fi)+" of "+errtext.Quote(tagLexTFIdx)+" after the last posting")
	}
	return out, nil
}

// validate checks every invariant the accessors rely on.
func (g *Graph) validate() error {
	for _, f := range []float32{g.k1, g.b, g.avg} {
		if !finite(f) || f < 0 {
			return errtext.Wrap(ErrCorrupt, ": lexicon parameter "+errtext.Ftoa(f))
		}
	}
	for i := 0; i < 4*g.n; i++ {
		if err := g.checkString(g.skil, i, "skill"); err != nil {
			return err
		}
	}
	for i := 0; i < g.n; i++ {
		if len(g.Name(i)) == 0 {
			return errtext.Wrap(ErrCorrupt, ": skill "+errtext.Itoa(i)+" has an empty name")
		}
		if d := f32(g.ldoc, i); !finite(d) || d < 0 {
			return errtext.Wrap(ErrCorrupt, ": skill "+errtext.Itoa(i)+" has document length "+errtext.Ftoa(d))
		}
	}
	if err := csr(g.eoff, g.n, g.e, tagEdgeOff); err != nil {
		return err
	}
	for i := 0; i < g.n; i++ {
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			t := u32(g.etgt, e)
			if int(t) >= g.n || int(t) == i || (e > lo && t <= u32(g.etgt, e-1)) {
				return errtext.Wrap(ErrCorrupt, ": edge "+errtext.Itoa(e)+" of skill "+errtext.Itoa(i)+": target "+errtext.Itoa(t)+" out of range, a self loop or out of order")
			}
			if w, a := f32(g.ewgt, e), f32(g.easc, e); !unit(w) || !unit(a) {
				return errtext.Wrap(ErrCorrupt, ": edge "+errtext.Itoa(e)+": weight "+errtext.Ftoa(w)+" or association "+errtext.Ftoa(a)+" outside [0, 1]")
			}
			if g.eatr[2*e] >= byte(numStates) || g.eatr[2*e+1] >= byte(numRelations) {
				return errtext.Wrap(ErrCorrupt, ": edge "+errtext.Itoa(e)+": unknown state "+errtext.Itoa(g.eatr[2*e])+" or type "+errtext.Itoa(g.eatr[2*e+1]))
			}
		}
	}
	for t := 0; t < g.t; t++ {
		if err := g.checkString(g.ltrm, t, "term"); err != nil {
			return err
		}
		if t > 0 && g.Term(t-1) >= g.Term(t) {
			return errtext.Wrap(ErrCorrupt, ": lexicon term "+errtext.Itoa(t)+" not in ascending order")
		}
	}
	if err := csr(g.lpof, g.t, g.p, tagLexPOff); err != nil {
		return err
	}
	// 2.0's postings were proved in range and ascending as they were expanded.
	for t := 0; t < g.t && g.major == legacyMajor; t++ {
		lo, hi := g.Postings(t)
		for p := lo; p < hi; p++ {
			d, tf := u32(g.lpst, 2*p), f32(g.lpst, 2*p+1)
			if int(d) >= g.n || (p > lo && d <= u32(g.lpst, 2*p-2)) || !finite(tf) || tf < 0 {
				return errtext.Wrap(ErrCorrupt, ": posting "+errtext.Itoa(p)+" of term "+errtext.Itoa(t)+": document "+errtext.Itoa(d)+" or frequency "+errtext.Ftoa(tf)+" invalid")
			}
		}
	}
	if !jsontext.Valid(g.params) {
		return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagParams)+" is not valid JSON")
	}
	return nil
}

// checkString validates the i-th string reference of recs against the string heap.
func (g *Graph) checkString(recs []byte, i int, what string) error {
	off, n := u32(recs, 2*i), u32(recs, 2*i+1)
	if uint64(off)+uint64(n) > uint64(len(g.strs)) {
		return errtext.Wrap(ErrCorrupt, ": "+what+" string "+errtext.Itoa(i)+" (offset "+errtext.Itoa(off)+", length "+errtext.Itoa(n)+") outside the string heap of "+errtext.Itoa(len(g.strs))+" bytes")
	}
	if !utf8.Valid(g.strs[off : off+n]) {
		return errtext.Wrap(ErrCorrupt, ": "+what+" string "+errtext.Itoa(i)+" is not valid UTF-8")
	}
	return nil
}

// csr checks that offs holds rows+1 non-decreasing offsets from 0 to total.
func csr(offs []byte, rows, total int, tag string) error {
	if u32(offs, 0) != 0 || int(u32(offs, rows)) != total {
		return errtext.Wrap(ErrCorrupt, ": "+errtext.Quote(tag)+" must run from 0 to "+errtext.Itoa(total))
	}
	for i := 1; i <= rows; i++ {
		if u32(offs, i) < u32(offs, i-1) {
			return errtext.Wrap(ErrCorrupt, ": "+errtext.Quote(tag)+" decreases at row "+errtext.Itoa(i))
		}
	}
	return nil
}

func u32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
func f32(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}

// str returns the i-th string reference of recs without copying.
func (g *Graph) str(recs []byte, i int) string {
	off, n := u32(recs, 2*i), u32(recs, 2*i+1)
	if n == 0 {
		return ""
	}
	return unsafe.String(&g.strs[off], int(n))
}

// Version returns the artifact's major and minor version.
func (g *Graph) Version() (major, minor int) { return g.major, g.minor }

// Size is the artifact's length in bytes.
func (g *Graph) Size() int { return len(g.data) }

// Sections lists the artifact's sections in file order.
func (g *Graph) Sections() []SectionInfo { return append([]SectionInfo(nil), g.sections...) }

// NumSkills is the number of skills (nodes).
func (g *Graph) NumSkills() int { return g.n }

// NumEdges is the number of published edges.
func (g *Graph) NumEdges() int { return g.e }

// Name of skill i.
func (g *Graph) Name(i int) string { return g.str(g.skil, 4*i) }

// Description of skill i.
func (g *Graph) Description(i int) string { return g.str(g.skil, 4*i+1) }

// Source is the file skill i came from.
func (g *Graph) Source(i int) string { return g.str(g.skil, 4*i+2) }

// Body is the head of skill i's body text.
func (g *Graph) Body(i int) string { return g.str(g.skil, 4*i+3) }

// Out returns the edge index range [lo, hi) of skill i's outgoing edges.
func (g *Graph) Out(i int) (lo, hi int) { return int(u32(g.eoff, i)), int(u32(g.eoff, i+1)) }

// Target of edge e.
func (g *Graph) Target(e int) int { return int(u32(g.etgt, e)) }

// Weight is edge e's published weight.
func (g *Graph) Weight(e int) float32 { return f32(g.ewgt, e) }

// Assoc is edge e's association score A.
func (g *Graph) Assoc(e int) float32 { return f32(g.easc, e) }

// State is edge e's calibration state.
func (g *Graph) State(e int) State { return State(g.eatr[2*e]) }

// Type is edge e's relation type.
func (g *Graph) Type(e int) Relation { return Relation(g.eatr[2*e+1]) }

// BM25 returns the lexicon's k1, b and average document length.
func (g *Graph) BM25() (k1, b, avgDL float32) { return g.k1, g.b, g.avg }

// NumTerms is the size of the lexicon.
func (g *Graph) NumTerms() int { return g.t }

// Term t of the lexicon.
func (g *Graph) Term(t int) string { return g.str(g.ltrm, t) }

// FindTerm returns the index of term s in the lexicon.
func (g *Graph) FindTerm(s string) (int, bool) { return g.find(g.ltrm, g.t, s) }

// find returns the index of s among the n sorted strings of recs, or where it would be.
func (g *Graph) find(recs []byte, n int, s string) (int, bool) {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.str(recs, m) < s {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n && g.str(recs, lo) == s
}

// Postings returns the posting index range [lo, hi) of term t.
func (g *Graph) Postings(t int) (lo, hi int) { return int(u32(g.lpof, t)), int(u32(g.lpof, t+1)) }

// Posting returns posting p's document and weighted term frequency.
func (g *Graph) Posting(p int) (doc int, tf float32) {
	return int(u32(g.lpst, 2*p)), f32(g.lpst, 2*p+1)
}

// PostingBytes returns term t's postings as stored: 8 bytes each, the document (uint32) and the
// weighted term frequency (float32), little-endian. A loop over them decodes in place what
// Posting would return one call at a time (in WebAssembly Posting is not inlined).
func (g *Graph) PostingBytes(t int) []byte {
	lo, hi := g.Postings(t)
	return g.lpst[8*lo : 8*hi]
}

// DocLen is skill i's weighted document length.
func (g *Graph) DocLen(i int) float32 { return f32(g.ldoc, i) }

// Params returns the build parameters as the JSON object they were written as.
func (g *Graph) Params() []byte { return g.params }

// bindVectors locates and validates the optional sections of format 1.1. A group is present
// when its header is; then all of its sections must be.
func (g *Graph) bindVectors() error {
	_, hasV := g.lookup(tagVecHdr)
	_, hasQ := g.lookup(tagEncHdr)
	if !hasV {
		for _, tag := range append(vectorSections[1:], encoderSections...) {
			if _, ok := g.lookup(tag); ok {
				return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tag)+" without "+errtext.Quote(tagVecHdr))
			}
		}
		return nil
	}
	vhdr, _ := g.lookup(tagVecHdr)
	if len(vhdr) != 16 {
		return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagVecHdr)+" has "+errtext.Itoa(len(vhdr))+" bytes, want 16")
	}
	dim := int(u32(vhdr, 0))
	if dim < 1 || dim > MaxDim || u32(vhdr, 1) != 0 {
		return errtext.Wrap(ErrCorrupt, ": vector dimension "+errtext.Itoa(dim)+" outside [1, "+errtext.Itoa(MaxDim)+"] or reserved bits set")
	}
	if err := g.checkString(vhdr[8:], 0, "vector model"); err != nil {
		return err
	}
	var err error
	if g.vscl, err = g.section(tagVecScale); err != nil {
		return err
	}
	if g.vdat, err = g.section(tagVecData); err != nil {
		return err
	}
	if len(g.vscl) != 4*g.n || len(g.vdat) != g.n*dim {
		return errtext.Wrap(ErrCorrupt, ": vector sections hold "+errtext.Itoa(len(g.vscl))+" bytes of scales and "+errtext.Itoa(len(g.vdat))+" of values for "+errtext.Itoa(g.n)+" skills of dimension "+errtext.Itoa(dim))
	}
	if err := checkQuantized(g.vscl, nil, g.vdat, "skill vector"); err != nil {
		return err
	}
	g.dim, g.model = dim, g.str(vhdr[8:], 0)
	if !hasQ {
		for _, tag := range encoderSections[1:] {
			if _, ok := g.lookup(tag); ok {
				return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tag)+" without "+errtext.Quote(tagEncHdr))
			}
		}
		return nil
	}
	qhdr, _ := g.lookup(tagEncHdr)
	if len(qhdr) != 8 || int(u32(qhdr, 0)) != dim {
		return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagEncHdr)+" must be 8 bytes giving the vector dimension "+errtext.Itoa(dim))
	}
	flags, v2 := u32(qhdr, 1), g.major == Major
	if (!v2 && flags != 0) || flags&^encFlags != 0 {
		return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagEncHdr)+" has unknown flags "+errtext.Hex8(flags))
	}
	if g.qwgt, err = g.section(tagEncWgt); err != nil {
		return err
	}
	if g.qscl, err = g.section(tagEncScale); err != nil {
		return err
	}
	if g.qvec, err = g.section(tagEncData); err != nil {
		return err
	}
	if v2 {
		if g.qidx, err = g.section(tagEncIndex); err != nil {
			return err
		}
	}
	v := g.t
	if flags&encSharedTerms != 0 {
		if _, ok := g.lookup(tagEncTerms); ok {
			return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagEncTerms)+" beside the flag that the encoder shares the lexicon's terms")
		}
		g.qtrm = g.ltrm
	} else {
		if g.qtrm, err = g.section(tagEncTerms); err != nil {
			return err
		}
		if len(g.qtrm)%8 != 0 {
			return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagEncTerms)+" length "+errtext.Itoa(len(g.qtrm))+" is not a multiple of 8")
		}
		v = len(g.qtrm) / 8
	}
	rows := v
	if v2 {
		if len(g.qvec)%dim != 0 {
			return errtext.Wrap(ErrCorrupt, ": section "+errtext.Quote(tagEncData)+" length "+errtext.Itoa(len(g.qvec))+" is not a multiple of the dimension "+errtext.Itoa(dim))
		}
		rows = len(g.qvec) / dim
	}
	if len(g.qwgt) != 4*v || len(g.qscl) != 4*v || len(g.qvec) != rows*dim || (v2 && len(g.qidx) != 4*v) {
		return errtext.Wrap(ErrCorrupt, ": query encoder sections disagree on "+errtext.Itoa(v)+" terms of dimension "+errtext.Itoa(dim))
	}
	for t := 0; t < v && v2; t++ {
		if r := u32(g.qidx, t); int(r) >= rows {
			return errtext.Wrap(ErrCorrupt, ": encoder term "+errtext.Itoa(t)+" has row "+errtext.Itoa(r)+" of "+errtext.Itoa(rows))
		}
	}
	// Shared terms were checked with the lexicon.
	for t := 0; t < v && flags&encSharedTerms == 0; t++ {
		if err := g.checkString(g.qtrm, t, "encoder term"); err != nil {
			return err
		}
		if t > 0 && g.str(g.qtrm, t-1) >= g.str(g.qtrm, t) {
			return errtext.Wrap(ErrCorrupt, ": encoder term "+errtext.Itoa(t)+" not in ascending order")
		}
	}
	if err := checkQuantized(g.qscl, g.qwgt, g.qvec, "encoder term"); err != nil {
		return err
	}
	g.hasEnc, g.v = true, v
	return nil
}

// checkQuantized checks scales and weights (finite, ≥ 0) and values (not -128).
func checkQuantized(scale, weight, data []byte, what string) error {
	for i := 0; i < len(scale)/4; i++ {
		if s := f32(scale, i); !finite(s) || s < 0 {
			return errtext.Wrap(ErrCorrupt, ": "+what+" "+errtext.Itoa(i)+" has scale "+errtext.Ftoa(s))
		}
	}
	for i := 0; i < len(weight)/4; i++ {
		if w := f32(weight, i); !finite(w) || w < 0 {
			return errtext.Wrap(ErrCorrupt, ": "+what+" "+errtext.Itoa(i)+" has weight "+errtext.Ftoa(w))
		}
	}
	if i := bytes.IndexByte(data, 0x80); i >= 0 {
		return errtext.Wrap(ErrCorrupt, ": "+what+" value "+errtext.Itoa(i)+" is -128, outside [-127, 127]")
	}
	return nil
}

// VectorDim is the dimension of the skill vectors, 0 when the artifact has none.
func (g *Graph) VectorDim() int { return g.dim }

// VectorModel is the id of the embedder the skill vectors came from ("" without vectors).
func (g *Graph) VectorModel() string { return g.model }

// Vectors returns every skill's quantized vector, read in place: skill i's is
// [i·VectorDim, (i+1)·VectorDim). Vector(i) is the same row with its scale.
func (g *Graph) Vectors() []int8 { return i8s(g.vdat) }

// Vector returns skill i's quantized vector, read in place, and the scale that restores it.
func (g *Graph) Vector(i int) (row []int8, scale float32) {
	return i8s(g.vdat[i*g.dim : (i+1)*g.dim]), f32(g.vscl, i)
}

// HasEncoder reports whether the artifact holds a query encoder.
func (g *Graph) HasEncoder() bool { return g.hasEnc }

// NumEncoderTerms is the size of the query encoder's vocabulary.
func (g *Graph) NumEncoderTerms() int { return g.v }

// EncoderTerm t of the query encoder.
func (g *Graph) EncoderTerm(t int) string { return g.str(g.qtrm, t) }

// FindEncoderTerm returns the index of term s in the query encoder.
func (g *Graph) FindEncoderTerm(s string) (int, bool) { return g.find(g.qtrm, g.v, s) }

// EncoderVector returns term t's quantized vector, read in place, its scale and its weight.
func (g *Graph) EncoderVector(t int) (row []int8, scale, weight float32) {
	r := t
	if g.qidx != nil {
		r = int(u32(g.qidx, t))
	}
	return i8s(g.qvec[r*g.dim : (r+1)*g.dim]), f32(g.qscl, t), f32(g.qwgt, t)
}

func i8s(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

// Artifact copies the graph back into an Artifact, so that a decoded artifact can be changed
// (vectors attached, say) and encoded again.
func (g *Graph) Artifact() (*Artifact, error) {
	a := &Artifact{}
	for i := 0; i < g.n; i++ {
		a.Skills = append(a.Skills, Skill{Name: g.Name(i), Description: g.Description(i), Source: g.Source(i), Body: g.Body(i)})
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			a.Edges = append(a.Edges, Edge{Source: i, Target: g.Target(e), Weight: g.Weight(e), Assoc: g.Assoc(e),
				State: g.State(e), Type: g.Type(e)})
		}
	}
	a.Lexicon.K1, a.Lexicon.B, a.Lexicon.AvgDL = g.BM25()
	a.Lexicon.Terms = make([]string, g.t)
	a.Lexicon.Postings = make([][]Posting, g.t)
	for t := 0; t < g.t; t++ {
		a.Lexicon.Terms[t] = g.Term(t)
		lo, hi := g.Postings(t)
		ps := make([]Posting, 0, hi-lo)
		for p := lo; p < hi; p++ {
			d, tf := g.Posting(p)
			ps = append(ps, Posting{Doc: uint32(d), TF: tf})
		}
		a.Lexicon.Postings[t] = ps
	}
	a.Lexicon.DocLen = make([]float32, g.n)
	for i := range a.Lexicon.DocLen {
		a.Lexicon.DocLen[i] = g.DocLen(i)
	}
	var err error
	if a.Params, err = unmarshalParams(g.params); err != nil {
		return nil, errtext.Prefix("graphs: build parameters: ", err)
	}
	if g.dim > 0 {
		v := &Vectors{Model: g.model, Dim: g.dim, Scale: make([]float32, g.n), Data: make([]int8, g.n*g.dim)}
		for i := 0; i < g.n; i++ {
			v.Scale[i] = f32(g.vscl, i)
		}
		copy(v.Data, i8s(g.vdat))
		a.Vectors = v
	}
	if g.hasEnc {
		q := &QueryEncoder{Dim: g.dim, Terms: make([]string, g.v), Weight: make([]float32, g.v),
			Scale: make([]float32, g.v), Data: make([]int8, g.v*g.dim)}
		for t := 0; t < g.v; t++ {
			q.Terms[t], q.Weight[t], q.Scale[t] = g.EncoderTerm(t), f32(g.qwgt, t), f32(g.qscl, t)
		}
		for t := 0; t < g.v; t++ {
			row, _, _ := g.EncoderVector(t)
			copy(q.Data[t*g.dim:], row)
		}
		a.Encoder = q
	}
	a.Memory, a.Clusters = g.memoryArtifact(), g.clustersArtifact()
	return a, nil
}
