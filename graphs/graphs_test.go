package graphs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testArtifact() *Artifact {
	return &Artifact{
		Skills: []Skill{
			{Name: "find-object", Description: "Locate an object in the room.", Source: "lib/find/SKILL.md", Body: "## Steps\n1. Look."},
			{Name: "pick-up-object", Description: "Take a located object.", Source: "lib/pick/SKILL.md", Body: "Grab it. ✓"},
			{Name: "heat-object", Description: "Heat a held object.", Source: "lib/heat/SKILL.md"},
		},
		Edges: []Edge{
			{Source: 1, Target: 2, Weight: 0.5, Assoc: 0.5, State: Confirmed, Type: Dependency},
			{Source: 0, Target: 1, Weight: 0.9, Assoc: 0.8, State: Unvalidated, Type: Workflow},
			{Source: 0, Target: 2, Weight: 0.1, Assoc: 0.2, State: Scaffold, Type: Semantic},
		},
		Lexicon: Lexicon{
			K1: 1.2, B: 0.75, AvgDL: 4,
			Terms:    []string{"heat", "object", "pick"},
			Postings: [][]Posting{{{Doc: 2, TF: 2}}, {{Doc: 0, TF: 1}, {Doc: 1, TF: 1}, {Doc: 2, TF: 1}}, {{Doc: 1, TF: 1.5}}},
			DocLen:   []float32{3, 4, 5},
		},
		Params: map[string]any{"variant": "publish-all", "cap": 12},
	}
}

// testVectorArtifact is testArtifact with skill vectors and a query encoder over the lexicon's
// terms, two of which have the same quantized vector (format 2.0: shared terms, QIDX).
func testVectorArtifact() *Artifact {
	a := testVectorsOnly()
	a.Encoder = &QueryEncoder{Dim: 4,
		Terms:  []string{"heat", "object", "pick"},
		Weight: []float32{1.5, 0.2, 2},
		Scale:  []float32{0.008, 0.004, 0.1},
		Data:   []int8{127, -127, 0, 1, 5, 5, 5, 5, 127, -127, 0, 1}}
	return a
}

// testVectorsOnly is testArtifact with skill vectors and no query encoder (format 1.1).
func testVectorsOnly() *Artifact {
	a := testArtifact()
	a.Vectors = &Vectors{Model: "builtin-lsa:test", Dim: 4,
		Scale: []float32{0.01, 0.5, 0},
		Data:  []int8{127, 0, -127, 3, 1, 2, 3, 4, 0, 0, 0, 0}}
	return a
}

// testClusterArtifact is testVectorArtifact with two vector clusters, the third skill (a zero
// vector) in none (format 2.2).
func testClusterArtifact() *Artifact {
	a := testVectorArtifact()
	a.Clusters = &Clusters{Centroids: []int8{127, 0, -127, 3, 1, 2, 3, 4}, Assign: []uint16{0, 1, NoCluster}}
	return a
}

// testOwnTerms is testVectorArtifact with an encoder vocabulary of its own (format 2.0 with
// QTRM), all rows distinct.
func testOwnTerms() *Artifact {
	a := testVectorArtifact()
	a.Encoder.Terms = []string{"heat", "pick", "stove"}
	a.Encoder.Data[8] = 0
	return a
}

// view reads a Graph back into an Artifact through the public accessors.
func view(g *Graph) *Artifact {
	a := &Artifact{}
	for i := 0; i < g.NumSkills(); i++ {
		a.Skills = append(a.Skills, Skill{g.Name(i), g.Description(i), g.Source(i), g.Body(i)})
		lo, hi := g.Out(i)
		for e := lo; e < hi; e++ {
			a.Edges = append(a.Edges, Edge{i, g.Target(e), g.Weight(e), g.Assoc(e), g.State(e), g.Type(e)})
		}
		a.Lexicon.DocLen = append(a.Lexicon.DocLen, g.DocLen(i))
	}
	a.Lexicon.K1, a.Lexicon.B, a.Lexicon.AvgDL = g.BM25()
	for t := 0; t < g.NumTerms(); t++ {
		a.Lexicon.Terms = append(a.Lexicon.Terms, g.Term(t))
		var ps []Posting
		lo, hi := g.Postings(t)
		for p := lo; p < hi; p++ {
			d, tf := g.Posting(p)
			ps = append(ps, Posting{uint32(d), tf})
		}
		a.Lexicon.Postings = append(a.Lexicon.Postings, ps)
	}
	if dim := g.VectorDim(); dim > 0 {
		a.Vectors = &Vectors{Model: g.VectorModel(), Dim: dim}
		for i := 0; i < g.NumSkills(); i++ {
			row, scale := g.Vector(i)
			a.Vectors.Scale = append(a.Vectors.Scale, scale)
			a.Vectors.Data = append(a.Vectors.Data, row...)
		}
	}
	if g.HasEncoder() {
		a.Encoder = &QueryEncoder{Dim: g.VectorDim()}
		for t := 0; t < g.NumEncoderTerms(); t++ {
			row, scale, w := g.EncoderVector(t)
			a.Encoder.Terms = append(a.Encoder.Terms, g.EncoderTerm(t))
			a.Encoder.Weight = append(a.Encoder.Weight, w)
			a.Encoder.Scale = append(a.Encoder.Scale, scale)
			a.Encoder.Data = append(a.Encoder.Data, row...)
		}
	}
	if nc := g.NumClusters(); nc > 0 {
		a.Clusters = &Clusters{Centroids: slices.Clone(g.Centroids())}
		for i := 0; i < g.NumSkills(); i++ {
			a.Clusters.Assign = append(a.Clusters.Assign, uint16(g.ClusterOf(i)))
		}
	}
	return a
}

// encode is Encode for a test: an error fails it.
func encode(tb testing.TB, a *Artifact) []byte {
	tb.Helper()
	b, err := Encode(a)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// decode is Decode for a test: an error fails it.
func decode(tb testing.TB, b []byte) *Graph {
	tb.Helper()
	g, err := Decode(b)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name         string
		make         func() *Artifact
		legacy       bool // written as a 1.x encoder wrote it
		major, minor int
	}{
		{"1.0 without vectors", testArtifact, true, 1, 0},
		{"1.1 with vectors only", testVectorsOnly, true, 1, 1},
		{"1.1 with an encoder", testVectorArtifact, true, 1, 1},
		{"2.0 without vectors", testArtifact, false, 2, 0},
		{"2.0 with vectors only", testVectorsOnly, false, 2, 0},
		{"2.0 encoder sharing the lexicon's terms", testVectorArtifact, false, 2, 0},
		{"2.0 encoder with its own terms", testOwnTerms, false, 2, 0},
		{"2.2 with vector clusters", testClusterArtifact, false, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) { testRoundTrip(t, tc.make, tc.legacy, tc.major, tc.minor) })
	}
}

func testRoundTrip(t *testing.T, make func() *Artifact, legacy bool, major, minor int) {
	b, err := encodeAs(make(), legacy)
	if err != nil {
		t.Fatal(err)
	}
	g := decode(t, b)
	got := view(g)
	want := make()
	want.Params = nil
	// Encode sorts edges by (source, target).
	want.Edges = []Edge{want.Edges[1], want.Edges[2], want.Edges[0]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if string(g.Params()) != `{"cap":12,"variant":"publish-all"}` {
		t.Errorf("params = %s", g.Params())
	}
	for _, c := range []struct {
		term string
		idx  int
		ok   bool
	}{{"heat", 0, true}, {"object", 1, true}, {"pick", 2, true}, {"aaa", 0, false}, {"zzz", 3, false}, {"obj", 1, false}} {
		if idx, ok := g.FindTerm(c.term); idx != c.idx || ok != c.ok {
			t.Errorf("FindTerm(%q) = %d, %v; want %d, %v", c.term, idx, ok, c.idx, c.ok)
		}
	}
	if maj, min := g.Version(); maj != major || min != minor {
		t.Errorf("version %d.%d, want %d.%d", maj, min, major, minor)
	}
	// Artifact copies everything back: encoding it again gives the same bytes.
	back, err := g.Artifact()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := encodeAs(back, legacy); err != nil || !bytes.Equal(b, again) {
		t.Errorf("Graph.Artifact re-encodes to different bytes (%v)", err)
	}
	if want.Encoder != nil {
		for _, term := range []string{"heat", "pick", "stove", "object", "a", "zz"} {
			idx, ok := slices.BinarySearch(want.Encoder.Terms, term)
			if gi, gok := g.FindEncoderTerm(term); gi != idx || gok != ok {
				t.Errorf("FindEncoderTerm(%q) = %d, %v; want %d, %v", term, gi, gok, idx, ok)
			}
		}
	}
}

// Each format version has exactly its sections: 1.x what a 1.x encoder wrote, so that readers
// of 1.x take it as their own; 2.0 its postings as gaps and frequency indices, each distinct
// encoder row once and no copy of shared terms.
func TestLayout(t *testing.T) {
	v10 := slices.Clone(sectionOrder)
	v11 := append(slices.Clone(v10), vectorSections...)
	v20 := slices.Clone(sectionOrder2)
	v20v := append(slices.Clone(v20), vectorSections...)
	tests := []struct {
		name   string
		a      *Artifact
		legacy bool
		tags   []string
		rows   int // rows of QVEC
	}{
		{"1.0", testArtifact(), true, v10, 0},
		{"1.1 vectors", testVectorsOnly(), true, v11, 0},
		{"1.1 encoder", testVectorArtifact(), true, append(slices.Clone(v11), encoderSections...), 3},
		{"2.0", testArtifact(), false, v20, 0},
		{"2.0 vectors", testVectorsOnly(), false, v20v, 0},
		{"2.0 shared terms", testVectorArtifact(), false, append(slices.Clone(v20v), tagEncHdr, tagEncWgt, tagEncScale, tagEncIndex, tagEncData), 2},
		{"2.0 own terms", testOwnTerms(), false, append(slices.Clone(v20v), tagEncHdr, tagEncTerms, tagEncWgt, tagEncScale, tagEncIndex, tagEncData), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := encodeAs(tc.a, tc.legacy)
			if err != nil {
				t.Fatal(err)
			}
			g := decode(t, b)
			var tags []string
			for _, s := range g.Sections() {
				tags = append(tags, s.Tag)
				if s.Tag == tagEncData && s.Length != tc.rows*g.VectorDim() {
					t.Errorf("%s holds %d bytes, want %d rows of %d", tagEncData, s.Length, tc.rows, g.VectorDim())
				}
			}
			if diff := cmp.Diff(tc.tags, tags); diff != "" {
				t.Errorf("sections (-want +got):\n%s", diff)
			}
		})
	}
	g := decode(t, encode(t, testArtifact()))
	if g.VectorDim() != 0 || g.HasEncoder() || g.VectorModel() != "" {
		t.Errorf("vectors dim %d, encoder %v, model %q in an artifact without them", g.VectorDim(), g.HasEncoder(), g.VectorModel())
	}
}

// 2.0's postings: five postings, two distinct frequencies, each gap and index one byte.
func TestPostingsLayout(t *testing.T) {
	b := encode(t, testArtifact())
	g := decode(t, b)
	body := func(tag string) []byte {
		for _, s := range g.Sections() {
			if s.Tag == tag {
				return b[s.Offset : s.Offset+s.Length]
			}
		}
		t.Fatalf("no section %s", tag)
		return nil
	}
	// heat: doc 2; object: docs 0, 1, 2; pick: doc 1. Frequencies 2, 1, 1, 1, 1.5.
	if got, want := body(tagLexGaps), []byte{2, 0, 0, 0, 1}; !bytes.Equal(got, want) {
		t.Errorf("%s = %v, want %v", tagLexGaps, got, want)
	}
	if got, want := body(tagLexTFIdx), []byte{0, 1, 1, 1, 2}; !bytes.Equal(got, want) {
		t.Errorf("%s = %v, want %v", tagLexTFIdx, got, want)
	}
	if got, want := body(tagLexTFVal), f32Bytes([]float32{2, 1, 1.5}); !bytes.Equal(got, want) {
		t.Errorf("%s = %v, want %v", tagLexTFVal, got, want)
	}
	// Expanded, they are what a 1.0 artifact holds in place.
	old, err := encodeAs(testArtifact(), true)
	if err != nil {
		t.Fatal(err)
	}
	for term := range g.NumTerms() {
		if got, want := g.PostingBytes(term), decode(t, old).PostingBytes(term); !bytes.Equal(got, want) {
			t.Errorf("PostingBytes(%d) = %v, 1.0 gives %v", term, got, want)
		}
	}
}

func TestQuantize(t *testing.T) {
	tests := []struct {
		name  string
		in    []float32
		want  []int8
		scale float32
	}{
		{"unit", []float32{1, -0.5, 0}, []int8{127, -64, 0}, 1.0 / 127},
		{"zero", []float32{0, 0}, []int8{0, 0}, 0},
		{"nan and inf are zero", []float32{float32(math.NaN()), float32(math.Inf(1)), 2}, []int8{0, 0, 127}, 2.0 / 127},
		{"negative max", []float32{-4, 1}, []int8{-127, 32}, 4.0 / 127},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]int8, len(tc.in))
			scale := Quantize(tc.in, got)
			if diff := cmp.Diff(tc.want, got); diff != "" || math.Abs(float64(scale-tc.scale)) > 1e-7 {
				t.Errorf("Quantize(%v) = %v, %v; want %v, %v", tc.in, got, scale, tc.want, tc.scale)
			}
		})
	}
	// Dequantized unit vectors stay within half a step of the original.
	v := []float32{0.6, -0.8, 0.001}
	q := make([]int8, 3)
	s := Quantize(v, q)
	for j := range v {
		if d := math.Abs(float64(s)*float64(q[j]) - float64(v[j])); d > float64(s)/2+1e-7 {
			t.Errorf("component %d off by %v", j, d)
		}
	}
}

func TestNewVectorsAndEncoder(t *testing.T) {
	v, err := NewVectors("m", [][]float32{{1, 0}, {0, -2}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim != 2 || !slices.Equal(v.Data, []int8{127, 0, 0, -127}) || v.Scale[1] != 2.0/127 {
		t.Errorf("NewVectors = %+v", v)
	}
	if _, err := NewVectors("m", [][]float32{{1, 0}, {0}}); err == nil {
		t.Error("NewVectors accepted mixed dimensions")
	}
	if _, err := NewVectors("m", nil); err == nil {
		t.Error("NewVectors accepted no vectors")
	}
	q, err := NewQueryEncoder([]string{"b", "a"}, []float32{2, 1}, [][]float32{{0, 1}, {1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Terms, []string{"a", "b"}) || !slices.Equal(q.Weight, []float32{1, 2}) ||
		!slices.Equal(q.Data, []int8{127, 0, 0, 127}) {
		t.Errorf("NewQueryEncoder did not sort its rows together: %+v", q)
	}
	if _, err := NewQueryEncoder([]string{"a", "a"}, []float32{1, 1}, [][]float32{{1}, {1}}); err == nil {
		t.Error("NewQueryEncoder accepted a duplicate term")
	}
}

func TestEncodeDeterministic(t *testing.T) {
	b1 := encode(t, testArtifact())
	a := testArtifact()
	a.Edges[0], a.Edges[2] = a.Edges[2], a.Edges[0] // edge order must not matter
	if b2 := encode(t, a); !bytes.Equal(b1, b2) {
		t.Error("same artifact encoded to different bytes")
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Artifact)
		want   string
	}{
		{"empty name", func(a *Artifact) { a.Skills[0].Name = "" }, "empty name"},
		{"edge out of range", func(a *Artifact) { a.Edges[0].Target = 7 }, "out of range"},
		{"self edge", func(a *Artifact) { a.Edges[0].Target = 1 }, "self edge"},
		{"duplicate edge", func(a *Artifact) { a.Edges = append(a.Edges, a.Edges[0]) }, "duplicate edge"},
		{"weight above 1", func(a *Artifact) { a.Edges[0].Weight = 1.5 }, "outside [0, 1]"},
		{"unknown state", func(a *Artifact) { a.Edges[0].State = 9 }, "unknown state"},
		{"unsorted terms", func(a *Artifact) { a.Lexicon.Terms[0] = "zzz" }, "not strictly ascending"},
		{"doc lengths", func(a *Artifact) { a.Lexicon.DocLen = a.Lexicon.DocLen[:1] }, "document lengths"},
		{"posting out of range", func(a *Artifact) { a.Lexicon.Postings[0][0].Doc = 3 }, "postings"},
		{"encoder without vectors", func(a *Artifact) { a.Vectors = nil }, "needs skill vectors"},
		{"vector dimension 0", func(a *Artifact) { a.Vectors.Dim = 0 }, "dimension 0"},
		{"too few vectors", func(a *Artifact) { a.Vectors.Scale = a.Vectors.Scale[:2] }, "for 3 skills"},
		{"vector value -128", func(a *Artifact) { a.Vectors.Data[5] = -128 }, "-128"},
		{"NaN scale", func(a *Artifact) { a.Vectors.Scale[0] = float32(math.NaN()) }, "scale NaN"},
		{"encoder dimension", func(a *Artifact) { a.Encoder.Dim = 2 }, "dimension 2"},
		{"encoder unsorted", func(a *Artifact) { a.Encoder.Terms[0] = "zzz" }, "not strictly ascending"},
		{"encoder negative weight", func(a *Artifact) { a.Encoder.Weight[1] = -1 }, "weight -1"},
		{"encoder values", func(a *Artifact) { a.Encoder.Data = a.Encoder.Data[1:] }, "values"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := testVectorArtifact()
			tc.modify(a)
			_, err := Encode(a)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// reseal recomputes the checksum so that a test can reach the checks behind it.
func reseal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[headerSize:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func TestDecodeErrors(t *testing.T) {
	good := encode(t, testVectorArtifact())
	own := encode(t, testOwnTerms())
	legacy, err := encodeAs(testVectorArtifact(), true)
	if err != nil {
		t.Fatal(err)
	}
	clone := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	// cloneOf is clone on another artifact.
	cloneOf := func(b []byte, f func(b []byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	secOff := func(b []byte, tag string) int {
		for i := 0; i < int(binary.LittleEndian.Uint32(b[8:])); i++ {
			rec := b[headerSize+sectionSize*i:]
			if string(rec[:4]) == tag {
				return int(binary.LittleEndian.Uint32(rec[4:]))
			}
		}
		t.Fatalf("no section %q", tag)
		return 0
	}
	// put32 is good with the word at byte at of section tag set to v, resealed so that the
	// checks behind the checksum see it.
	put32 := func(tag string, at int, v uint32) []byte {
		return clone(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tag)+at:], v)
			return reseal(b)
		})
	}
	// put8 is base with byte at of section tag set to v, resealed.
	put8 := func(base []byte, tag string, at int, v byte) []byte {
		return cloneOf(base, func(b []byte) []byte {
			b[secOff(b, tag)+at] = v
			return reseal(b)
		})
	}
	// unlist is good with the tag of section record i overwritten: that section is missing.
	unlist := func(i int) []byte {
		return clone(func(b []byte) []byte {
			copy(b[headerSize+sectionSize*i:], "XXXX")
			return reseal(b)
		})
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrNotArtifact},
		{"text file", []byte("---\nname: x\n---\n"), ErrNotArtifact},
		{"magic only", []byte(Magic), ErrTruncated},
		{"header only", good[:headerSize], ErrTruncated},
		{"truncated half", good[:len(good)/2], ErrTruncated},
		{"truncated by one", good[:len(good)-1], ErrTruncated},
		{"newer major", clone(func(b []byte) []byte { b[4] = Major + 1; return b }), ErrVersion},
		{"bit flip in strings", clone(func(b []byte) []byte { b[secOff(b, tagStrings)] ^= 0x10; return b }), ErrChecksum},
		{"bit flip at end", clone(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrChecksum},
		{"too many sections", clone(func(b []byte) []byte { b[8] = 200; return b }), ErrCorrupt},
		{"target out of range", put32(tagEdgeTgt, 0, 99), ErrCorrupt},
		{"weight NaN", put32(tagEdgeWgt, 0, 0x7fc00000), ErrCorrupt},
		{"string past heap", put32(tagSkills, 4, 1<<30), ErrCorrupt},
		{"missing section", unlist(0), ErrCorrupt},
		{"vector dimension 0", put32(tagVecHdr, 0, 0), ErrCorrupt},
		{"vector dimension disagrees with data", put32(tagVecHdr, 0, 3), ErrCorrupt},
		{"vector dimension huge", put32(tagVecHdr, 0, 1<<31), ErrCorrupt},
		{"vector model past heap", put32(tagVecHdr, 8, 1<<30), ErrCorrupt},
		{"vector scale infinite", put32(tagVecScale, 4, 0x7f800000), ErrCorrupt},
		{"vector scale negative", put32(tagVecScale, 0, math.Float32bits(-1)), ErrCorrupt},
		{"vector value -128", put8(good, tagVecData, 1, 0x80), ErrCorrupt},
		{"vector header without data", unlist(len(sectionOrder2) + 2), ErrCorrupt},
		{"encoder without vectors", unlist(len(sectionOrder2)), ErrCorrupt},
		{"encoder dimension differs", put32(tagEncHdr, 0, 2), ErrCorrupt},
		{"encoder terms out of order", cloneOf(own, func(b []byte) []byte {
			o := secOff(b, tagEncTerms)
			first := append([]byte(nil), b[o:o+8]...)
			copy(b[o:], b[o+8:o+16])
			copy(b[o+8:], first)
			return reseal(b)
		}), ErrCorrupt},
		{"encoder term past heap", cloneOf(own, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tagEncTerms)+4:], 1<<20)
			return reseal(b)
		}), ErrCorrupt},
		{"1.1 encoder terms out of order", cloneOf(legacy, func(b []byte) []byte {
			o := secOff(b, tagEncTerms)
			copy(b[o:], b[o+8:o+16])
			return reseal(b)
		}), ErrCorrupt},
		{"1.1 encoder with 2.0 flags", put8(legacy, tagEncHdr, 4, encSharedTerms), ErrCorrupt},
		{"encoder row out of range", put32(tagEncIndex, 4, 2), ErrCorrupt},
		{"encoder row huge", put32(tagEncIndex, 0, 1<<31), ErrCorrupt},
		{"encoder index missing", clone(func(b []byte) []byte {
			copy(b[headerSize+sectionSize*(len(sectionOrder2)+len(vectorSections)+3):], "XXXX")
			return reseal(b)
		}), ErrCorrupt},
		{"encoder terms beside the shared flag", put8(own, tagEncHdr, 4, encSharedTerms), ErrCorrupt},
		{"own terms without them", cloneOf(own, func(b []byte) []byte {
			copy(b[headerSize+sectionSize*(len(sectionOrder2)+len(vectorSections)+1):], "XXXX")
			return reseal(b)
		}), ErrCorrupt},
		{"encoder rows not a multiple of the dimension", clone(func(b []byte) []byte {
			// QVEC is the last section: one byte less, as if a row were cut.
			rec := b[headerSize+sectionSize*(len(sectionOrder2)+len(vectorSections)+4):]
			binary.LittleEndian.PutUint32(rec[8:], binary.LittleEndian.Uint32(rec[8:])-1)
			return reseal(b)
		}), ErrCorrupt},
		{"encoder weight NaN", put32(tagEncWgt, 0, 0x7fc00000), ErrCorrupt},
		{"encoder scale negative", put32(tagEncScale, 8, math.Float32bits(-0.5)), ErrCorrupt},
		{"encoder value -128", put8(good, tagEncData, 7, 0x80), ErrCorrupt},
		{"postings offsets past the gaps", put32(tagLexPOff, 12, 99), ErrCorrupt},
		{"postings offsets decrease", put32(tagLexPOff, 4, 5), ErrCorrupt},
		{"postings offsets not from 0", put32(tagLexPOff, 0, 1), ErrCorrupt},
		{"document gap past the skills", put8(good, tagLexGaps, 0, 3), ErrCorrupt},
		{"documents past the skills", put8(good, tagLexGaps, 2, 1), ErrCorrupt},
		{"document gap cut", put8(good, tagLexGaps, 4, 0x81), ErrCorrupt},
		{"frequency index past the values", put8(good, tagLexTFIdx, 1, 3), ErrCorrupt},
		{"frequency index overlong", put8(good, tagLexTFIdx, 4, 0x80), ErrCorrupt},
		{"frequency NaN", put32(tagLexTFVal, 4, 0x7fc00000), ErrCorrupt},
		{"frequency negative", put32(tagLexTFVal, 0, math.Float32bits(-1)), ErrCorrupt},
		{"bytes after the last posting", clone(func(b []byte) []byte {
			// One posting fewer: the last term's offset one down, its gap and index left over.
			rec := b[secOff(b, tagLexPOff)+12:]
			binary.LittleEndian.PutUint32(rec, binary.LittleEndian.Uint32(rec)-1)
			return reseal(b)
		}), ErrCorrupt},
		{"1.0 postings out of order", cloneOf(legacy, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tagLexPost)+16:], 2)
			return reseal(b)
		}), ErrCorrupt},
		{"encoder header unknown flag", clone(func(b []byte) []byte {
			b[secOff(b, tagEncHdr)+4] = 2
			return reseal(b)
		}), ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Decode(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, %v; want %v", g, err, tc.want)
			}
		})
	}
}

func TestDecodeSkipsUnknownSections(t *testing.T) {
	// A newer minor version adds a section this build does not know; it must still load.
	good := encode(t, testArtifact())
	g := decode(t, good)
	bodies := map[string][]byte{"ZNEW": []byte("future")}
	tags := []string{}
	for _, s := range g.Sections() {
		bodies[s.Tag] = good[s.Offset : s.Offset+s.Length]
		tags = append(tags, s.Tag)
	}
	tags = append(tags[:3], append([]string{"ZNEW"}, tags[3:]...)...)
	newer, err := assemble(tags, bodies, Major, Minor+1)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := Decode(newer)
	if err != nil {
		t.Fatalf("newer minor: %v", err)
	}
	if diff := cmp.Diff(view(g), view(g2)); diff != "" {
		t.Errorf("newer minor reads differently:\n%s", diff)
	}
}

func FuzzDecode(f *testing.F) {
	good := encode(f, testArtifact())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic))
	f.Add(encode(f, testVectorArtifact()))
	f.Add(encode(f, testOwnTerms()))
	f.Add(encode(f, testVectorsOnly()))
	f.Add(encode(f, testMemoryArtifact()))  // format 2.1: the memory of past tasks
	f.Add(encode(f, testClusterArtifact())) // format 2.2: vector clusters
	if legacy, err := encodeAs(testVectorArtifact(), true); err == nil {
		f.Add(legacy)
	}
	if legacy, err := encodeAs(testArtifact(), true); err == nil {
		f.Add(legacy)
	}
	empty, _ := Encode(&Artifact{})
	f.Add(empty)
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Decode(b)
		if err != nil {
			return
		}
		// A graph that decodes must be fully readable without panics.
		view(g)
		for i := 0; i < g.NumSkills(); i++ {
			g.FindTerm(g.Name(i))
			g.FindEncoderTerm(g.Name(i))
		}
		// What decodes must encode again to an artifact that decodes.
		if a, err := g.Artifact(); err == nil {
			if b2, err := Encode(a); err != nil {
				t.Errorf("a decoded artifact does not encode: %v", err)
			} else if _, err := Decode(b2); err != nil {
				t.Errorf("a re-encoded artifact does not decode: %v", err)
			}
		}
		// Decode may allocate the Graph, the section table and 2.0's expanded postings (8 bytes
		// a posting, each taking at least 2 bytes of input), nothing proportional to a count.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Decode(b)
		runtime.ReadMemStats(&after)
		if used := after.TotalAlloc - before.TotalAlloc; used > 4096+uint64(MaxSections)*64+4*uint64(len(b)) {
			t.Errorf("Decode of %d bytes allocated %d bytes", len(b), used)
		}
	})
}

// Gaps of 128 and more and over 128 distinct frequencies take varints of two bytes; 2.0 reads
// them back as 1.0 holds them.
func TestPostingsWide(t *testing.T) {
	a := &Artifact{Lexicon: Lexicon{K1: 1.2, B: 0.75, AvgDL: 1}}
	for i := range 300 {
		a.Skills = append(a.Skills, Skill{Name: "s" + strconv.Itoa(i)})
		a.Lexicon.DocLen = append(a.Lexicon.DocLen, 1)
	}
	for term := range 150 {
		a.Lexicon.Terms = append(a.Lexicon.Terms, "t"+strconv.Itoa(1000+term))
		a.Lexicon.Postings = append(a.Lexicon.Postings, []Posting{
			{Doc: uint32(term), TF: float32(term)}, {Doc: 200, TF: float32(term) + 0.5}, {Doc: 299, TF: 1000},
		})
	}
	b := encode(t, a)
	old, err := encodeAs(a, true)
	if err != nil {
		t.Fatal(err)
	}
	g, g1 := decode(t, b), decode(t, old)
	if len(b) >= len(old) {
		t.Errorf("2.0 takes %d bytes, 1.0 %d", len(b), len(old))
	}
	for term := range g.NumTerms() {
		if got, want := g.PostingBytes(term), g1.PostingBytes(term); !bytes.Equal(got, want) {
			t.Fatalf("PostingBytes(%d) = %v, 1.0 gives %v", term, got, want)
		}
	}
	if diff := cmp.Diff(view(g1), view(g)); diff != "" {
		t.Errorf("2.0 reads differently from 1.0 (-1.0 +2.0):\n%s", diff)
	}
}

// benchArtifact is an artifact of the real 859-skill library's shape (../shared/data/skills):
// skills with 2,400-byte bodies, 8,500 terms over 82,000 postings whose frequencies take 61
// values, 128-dimensional vectors and an encoder over the lexicon's terms whose rows repeat
// (5,300 distinct of 8,500). Its values come from a fixed seed.
func benchArtifact() *Artifact {
	const n, terms, dim, postings, distinctRows = 859, 8500, 128, 82000, 5300
	rng := rand.New(rand.NewPCG(1, 2))
	a := &Artifact{Lexicon: Lexicon{K1: 1.2, B: 0.75, AvgDL: 60}}
	body := strings.Repeat("step ", 480)
	for i := range n {
		name := "skill-" + strconv.Itoa(i)
		a.Skills = append(a.Skills, Skill{Name: name, Description: "what " + name + " does", Source: name + "/SKILL.md", Body: body + name})
		a.Lexicon.DocLen = append(a.Lexicon.DocLen, float32(20+rng.IntN(200)))
	}
	for i := range n - 1 {
		a.Edges = append(a.Edges, Edge{Source: i, Target: i + 1, Weight: 0.5, Assoc: 0.5, State: Confirmed, Type: Workflow})
	}
	for t := range terms {
		a.Lexicon.Terms = append(a.Lexicon.Terms, "t"+strconv.Itoa(100000+t))
		docs := map[uint32]bool{}
		for range 1 + rng.IntN(2*postings/terms) {
			docs[uint32(rng.IntN(n))] = true
		}
		var ps []Posting
		for _, d := range slices.Sorted(maps.Keys(docs)) {
			ps = append(ps, Posting{Doc: d, TF: 0.5 * float32(1+rng.IntN(61))})
		}
		a.Lexicon.Postings = append(a.Lexicon.Postings, ps)
	}
	quantized := func(rows int) []int8 {
		out := make([]int8, rows*dim)
		for i := range out {
			out[i] = int8(rng.IntN(255) - 127)
		}
		return out
	}
	a.Vectors = &Vectors{Model: "bench", Dim: dim, Scale: make([]float32, n), Data: quantized(n)}
	rows := quantized(distinctRows)
	q := &QueryEncoder{Dim: dim, Terms: a.Lexicon.Terms, Weight: make([]float32, terms), Scale: make([]float32, terms)}
	for t := range terms {
		r := t
		if t >= distinctRows {
			r = rng.IntN(distinctRows)
		}
		q.Data = append(q.Data, rows[r*dim:(r+1)*dim]...)
		q.Weight[t], q.Scale[t] = 1, 0.01
	}
	a.Encoder = q
	return a
}

// BenchmarkDecode is the load time of an artifact: checksum, validation and, in 2.0, the
// postings' expansion; "sample" is the small test artifact, the others benchArtifact as 1.1
// and 2.0 wrote it (bytes reported per load).
func BenchmarkDecode(b *testing.B) {
	big := benchArtifact()
	for _, c := range []struct {
		name   string
		a      *Artifact
		legacy bool
	}{{"sample", testArtifact(), false}, {"real-shape-1.1", big, true}, {"real-shape-2.0", big, false}} {
		data, err := encodeAs(c.a, c.legacy)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "artifact-bytes")
		})
	}
}
