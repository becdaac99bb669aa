// Package graphs defines the .skg artifact: the published skill graph, its lexical index and
// its build parameters in one little-endian binary file that is validated once and then read in
// place, without copying (but for the postings of format 2.0, expanded once).
//
// Byte layout (all integers little-endian, every section 8-byte aligned):
//
//	offset  size        field
//	0       4           magic "\x00skg"
//	4       2           major version (readers refuse a major they do not know)
//	6       2           minor version (readers read the sections they know of a newer minor)
//	8       4           section count S
//	12      4           CRC-32C (Castagnoli) of bytes [16, end)
//	16      16·S        section table: tag [4]byte, offset u32, length u32, reserved u32 (0)
//	...                 section bodies, in table order, offsets ascending, no overlap
//
// Sections of version 1.0 (N skills, E edges, T terms, P postings):
//
//	STRS  bytes            string heap; strings are (offset u32, length u32) pairs into it
//	SKIL  N × 32           skill records: name, description, source, body head (4 string refs)
//	EOFF  (N+1) × u32      CSR row offsets: EOFF[0] = 0, non-decreasing, EOFF[N] = E
//	ETGT  E × u32          edge targets; within a row strictly ascending, never the row itself
//	EWGT  E × f32          published weight in [0, 1]
//	EASC  E × f32          association score A in [0, 1]
//	EATR  E × 2 bytes      edge state (State), relation type (Relation)
//	LHDR  16               BM25 k1 f32, b f32, average document length f32, reserved u32
//	LTRM  T × 8            lexicon terms (string refs), strictly ascending byte order
//	LPOF  (T+1) × u32      CSR offsets of each term's postings
//	LPST  P × 8            postings: document u32 (strictly ascending per term), weighted tf f32
//	LDOC  N × f32          weighted document length
//	PARM  bytes            build parameters, a JSON object with sorted keys
//
// Sections added in 1.1, optional (D dimensions, V encoder terms). The vector sections come as
// a group of three or not at all; the encoder sections likewise, and only with the vectors:
//
//	VHDR  16               skill vectors: dimension D u32 (1..MaxDim), reserved u32 (0),
//	                       embedder id (string ref) naming the model the vectors came from
//	VSCL  N × f32          per-skill scale, finite and ≥ 0: skill i's vector is VSCL[i]·VDAT[i]
//	VDAT  N × D × i8       quantized skill vectors, row-major, each in [-127, 127]
//	QHDR  8                query encoder: dimension u32 (equal to D), reserved u32 (0)
//	QTRM  V × 8            encoder terms (string refs), strictly ascending byte order
//	QWGT  V × f32          term weight, finite and ≥ 0
//	QSCL  V × f32          per-term scale, finite and ≥ 0: term t's vector is QSCL[t]·QVEC[t]
//	QVEC  V × D × i8       quantized term vectors, row-major, each in [-127, 127]
//
// Format 2.0 stores the postings and the encoder smaller; the other sections are as in 1.1.
// Postings: a term's documents ascend, so each is stored as its gap to the one before, and the
// weighted term frequencies take few distinct values, so each is an index into a table:
//
//	LPOF  (T+1) × u32      as in 1.0: CSR offsets, in postings, of each term's postings
//	LPDG  P varints        for each posting in order, document − previous document − 1 (the
//	                       previous is −1 at a term's first posting), unsigned LEB128
//	LPTF  P varints        for each posting in order, its frequency's index into LTFV
//	LTFV  F × f32          the distinct weighted term frequencies, finite and ≥ 0, in order of
//	                       first use
//
// The encoder group: many terms have the same quantized vector (a term of one skill points where
// that skill does), and the encoder's vocabulary is usually the lexicon's:
//
//	QHDR  8                dimension u32 (equal to D), flags u32: bit 0 set means the encoder's
//	                       terms are the lexicon's (LTRM) and QTRM is absent; other bits 0
//	QTRM  V × 8            encoder terms, as in 1.1 (only without flag bit 0)
//	QWGT  V × f32          as in 1.1
//	QSCL  V × f32          as in 1.1
//	QIDX  V × u32          the row of QVEC that holds term t's quantized vector
//	QVEC  R × D × i8       the distinct quantized term vectors (R ≤ V), in order of first use
//
// Format 2.1 adds the optional memory of past tasks (memory.go: MHDR, MTRM, MPOF, MPST, MDOC,
// MSOF, MSKL); a 2.0 reader skips its sections. Format 2.2 adds the optional vector clusters
// (vectors.go: VCEN, VASG), with or without a memory; a 2.0 or 2.1 reader skips them.
//
// Readers of 1.x refuse 2.0 as a version they do not know. This package writes 2.0 and reads
// 1.0, 1.1 and 2.0. Decode reads every section in place except 2.0's postings, which it expands
// once into the 1.0 layout (8 bytes a posting, at most 4 bytes per byte of LPDG and LPTF), so
// that the accessors, PostingBytes among them, are the same for every version.
//
// The query encoder lets a host embed a query without a model runtime: the query's terms come
// from the engine's tokenizer (engine.Tokenize, the same one as the lexicon), and its vector is
// the L2-normalized sum, over its distinct terms t found in QTRM, of (1 + ln count(t))·QWGT[t]
// times term t's vector. A 1.x encoder wrote minor version 0 when an artifact had none of the
// 1.1 sections.
//
// Unknown tags are skipped, so a newer minor version can add sections. The encoder writes the
// same bytes for the same Artifact: no timestamps, no map iteration, no padding garbage.
//
// For a Go program: Decode reads an artifact `caskg build` wrote (the engine and every host
// start from its Graph); Encode writes one from an Artifact.
package graphs

import (
	"errors"

	"github.com/caskg/caskg/graphs/errtext"
)

// Version of the format this package writes: 2.0, or 2.1 (MemoryMinor) when the artifact holds
// a memory of past tasks (memory.go), or 2.2 (ClusterMinor) when it holds vector clusters
// (vectors.go), so that an artifact without either keeps its 2.0 bytes.
const (
	Major        = 2
	Minor        = 0
	MemoryMinor  = 1
	ClusterMinor = 2
)

// The older version this package reads: 1.0 and 1.1 (the vector and encoder sections).
const (
	legacyMajor = 1
	legacyMinor = 1
)

// QHDR flags (format 2.0).
const (
	encSharedTerms = 1 << 0 // the encoder's terms are the lexicon's; no QTRM section
	encFlags       = encSharedTerms
)

// Magic starts every artifact. The leading NUL keeps text tools from mistaking it for text.
const Magic = "\x00skg"

const (
	headerSize  = 16
	sectionSize = 16
	skillRecord = 32
	// MaxSections bounds the section table so a corrupt count cannot make the reader walk far.
	MaxSections = 64
	// MaxDim bounds the dimension of skill and term vectors.
	MaxDim = 8192
)

// Named errors. Decode wraps them with detail; test with errors.Is.
var (
	// ErrNotArtifact means the bytes do not start with the magic: not a .skg file at all.
	ErrNotArtifact = errors.New("graphs: not a caskg artifact")
	// ErrVersion means the major version is one this build cannot read.
	ErrVersion = errors.New("graphs: unsupported artifact version")
	// ErrTruncated means the file ends before its header, section table or a section does.
	ErrTruncated = errors.New("graphs: artifact truncated")
	// ErrChecksum means the bytes changed after the artifact was written.
	ErrChecksum = errors.New("graphs: artifact checksum mismatch")
	// ErrCorrupt means the checksum matched but the contents break an invariant.
	ErrCorrupt = errors.New("graphs: artifact corrupt")
)

// State is an edge's calibration state: what the Beta calibration of its probes concluded.
type State uint8

// Edge states. Unvalidated edges were never probed; Scaffold edges are unvalidated edges kept to
// connect the graph.
const (
	Unvalidated State = iota
	Confirmed
	Uncertain
	Rejected
	Scaffold
	numStates
)

var stateNames = [...]string{"unvalidated", "confirmed", "uncertain", "rejected", "scaffold"}

func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return "state(" + errtext.Itoa(uint8(s)) + ")"
}

// States lists every valid state in order.
func States() []State { return []State{Unvalidated, Confirmed, Uncertain, Rejected, Scaffold} }

// Relation is the kind of link an edge stands for; retrieval weighs reverse traversal by it.
type Relation uint8

// Relation types. Dependency: the source produces what the target needs or is declared as its
// prerequisite. Workflow: the source comes earlier in a typical procedure. Semantic: the two are
// about the same thing. Alternative: either can do the job.
const (
	Dependency Relation = iota
	Workflow
	Semantic
	Alternative
	numRelations
)

var relationNames = [...]string{"dependency", "workflow", "semantic", "alternative"}

func (r Relation) String() string {
	if r < numRelations {
		return relationNames[r]
	}
	return "relation(" + errtext.Itoa(uint8(r)) + ")"
}

// Relations lists every valid relation type in order.
func Relations() []Relation { return []Relation{Dependency, Workflow, Semantic, Alternative} }

// Section tags of format 1.0.
const (
	tagStrings  = "STRS"
	tagSkills   = "SKIL"
	tagEdgeOff  = "EOFF"
	tagEdgeTgt  = "ETGT"
	tagEdgeWgt  = "EWGT"
	tagEdgeAsc  = "EASC"
	tagEdgeAttr = "EATR"
	tagLexHdr   = "LHDR"
	tagLexTerms = "LTRM"
	tagLexPOff  = "LPOF"
	tagLexPost  = "LPST"
	tagLexDoc   = "LDOC"
	tagParams   = "PARM"
)

// Section tags of format 1.1, all optional.
const (
	tagVecHdr   = "VHDR"
	tagVecScale = "VSCL"
	tagVecData  = "VDAT"
	tagEncHdr   = "QHDR"
	tagEncTerms = "QTRM"
	tagEncWgt   = "QWGT"
	tagEncScale = "QSCL"
	tagEncData  = "QVEC"
	tagEncIndex = "QIDX" // format 2.0
)

// Section tags of format 2.0's postings, in place of LPST.
const (
	tagLexGaps  = "LPDG"
	tagLexTFIdx = "LPTF"
	tagLexTFVal = "LTFV"
)

// sectionOrder2 is the order the encoder writes the sections every 2.0 artifact has.
var sectionOrder2 = []string{
	tagStrings, tagSkills, tagEdgeOff, tagEdgeTgt, tagEdgeWgt, tagEdgeAsc, tagEdgeAttr,
	tagLexHdr, tagLexTerms, tagLexPOff, tagLexGaps, tagLexTFIdx, tagLexTFVal, tagLexDoc, tagParams,
}

// sectionOrder is the order a 1.x encoder wrote sections in; every one is required in 1.x.
var sectionOrder = []string{
	tagStrings, tagSkills, tagEdgeOff, tagEdgeTgt, tagEdgeWgt, tagEdgeAsc, tagEdgeAttr,
	tagLexHdr, tagLexTerms, tagLexPOff, tagLexPost, tagLexDoc, tagParams,
}

// vectorSections and encoderSections are written after sectionOrder when present.
var (
	vectorSections  = []string{tagVecHdr, tagVecScale, tagVecData}
	encoderSections = []string{tagEncHdr, tagEncTerms, tagEncWgt, tagEncScale, tagEncData}
)

// encoderSections2 are the encoder sections of format 2.0 in the order the encoder writes them;
// tagEncTerms is left out when the encoder shares the lexicon's terms.
var encoderSections2 = []string{tagEncHdr, tagEncTerms, tagEncWgt, tagEncScale, tagEncIndex, tagEncData}

// SectionInfo describes one section of a decoded artifact.
type SectionInfo struct {
	Tag    string    `json:"tag"`
	Offset int       `json:"offset"`
	Length int       `json:"length"`
	_      [0]func() // not comparable: no equality function for the type in the WebAssembly module
}
