package graphs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testMemory is a memory of past tasks over testArtifact's three skills: two tool sets, one of
// them failed.
func testMemory() *Memory {
	return &Memory{K1: 1.2, B: 0.75, AvgDL: 2.5, Weight: 0.35, Depth: 20, Runs: 7,
		Terms: []string{"egg", "heat", "warm"},
		Postings: [][]Posting{
			{{Doc: 0, TF: 1}},
			{{Doc: 0, TF: 2}, {Doc: 1, TF: 1}},
			{{Doc: 1, TF: 1}},
		},
		Docs: []MemoryDoc{
			{Len: 3, Runs: 5, Skills: []uint32{0, 1, 2}},
			{Len: 2, Runs: 2, Failed: true, Skills: []uint32{2}},
		}}
}

// testMemoryArtifact is testVectorArtifact with a memory of past tasks (format 2.1).
func testMemoryArtifact() *Artifact {
	a := testVectorArtifact()
	a.Memory = testMemory()
	return a
}

func TestMemoryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func() *Artifact
	}{
		{"with vectors", testMemoryArtifact},
		{"lexical only", func() *Artifact { a := testArtifact(); a.Memory = testMemory(); return a }},
		{"no documents", func() *Artifact {
			a := testArtifact()
			a.Memory = &Memory{K1: 1.2, B: 0.75, Depth: 1}
			return a
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encode(t, tc.make())
			g := decode(t, b)
			if maj, min := g.Version(); maj != Major || min != MemoryMinor {
				t.Errorf("version %d.%d, want %d.%d", maj, min, Major, MemoryMinor)
			}
			if !g.HasMemory() {
				t.Fatal("no memory after the round trip")
			}
			back, err := g.Artifact()
			if err != nil {
				t.Fatal(err)
			}
			want := tc.make().Memory
			if diff := cmp.Diff(want, back.Memory, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("memory round trip (-want +got):\n%s", diff)
			}
			if again := encode(t, back); !bytes.Equal(again, b) {
				t.Error("Graph.Artifact re-encodes to different bytes")
			}
		})
	}
	// Without a memory the artifact is 2.0, its bytes those of before the memory.
	g := decode(t, encode(t, testVectorArtifact()))
	if maj, min := g.Version(); g.HasMemory() || maj != Major || min != Minor {
		t.Errorf("no memory: version %d.%d, memory %v", maj, min, g.HasMemory())
	}
}

func TestMemoryEncodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Memory)
		want   string
	}{
		{"NaN weight", func(m *Memory) { m.Weight = float32(math.NaN()) }, "finite non-negative"},
		{"negative k1", func(m *Memory) { m.K1 = -1 }, "finite non-negative"},
		{"depth 0", func(m *Memory) { m.Depth = 0 }, "depth 0"},
		{"depth too large", func(m *Memory) { m.Depth = MaxMemoryDepth + 1 }, "outside"},
		{"postings per term", func(m *Memory) { m.Postings = m.Postings[:2] }, "posting lists"},
		{"document without runs", func(m *Memory) { m.Docs[0].Runs, m.Runs = 0, 2 }, "runs or length"},
		{"skill out of range", func(m *Memory) { m.Docs[1].Skills[0] = 3 }, "out of range"},
		{"skills not ascending", func(m *Memory) { m.Docs[0].Skills[2] = 1 }, "not ascending"},
		{"runs disagree", func(m *Memory) { m.Runs = 8 }, "says 8 runs"},
		{"terms not ascending", func(m *Memory) { m.Terms[0] = "zzz" }, "not strictly ascending"},
		{"posting past the documents", func(m *Memory) { m.Postings[2][0].Doc = 2 }, "postings"},
		{"postings not ascending", func(m *Memory) { m.Postings[1][1].Doc = 0 }, "postings"},
		{"negative frequency", func(m *Memory) { m.Postings[0][0].TF = -1 }, "postings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := testMemoryArtifact()
			tc.modify(a.Memory)
			_, err := Encode(a)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestMemoryDecodeErrors corrupts each memory section in turn: Decode must refuse the artifact
// with ErrCorrupt, not read past a section or panic.
func TestMemoryDecodeErrors(t *testing.T) {
	good := encode(t, testMemoryArtifact())
	decode(t, good)
	// sec returns the offset and length of section tag in b.
	sec := func(b []byte, tag string) (int, int) {
		for i := range int(binary.LittleEndian.Uint32(b[8:])) {
			rec := b[headerSize+sectionSize*i:]
			if string(rec[:4]) == tag {
				return int(binary.LittleEndian.Uint32(rec[4:])), int(binary.LittleEndian.Uint32(rec[8:]))
			}
		}
		t.Fatalf("no section %q", tag)
		return 0, 0
	}
	// put32 is good with the word at byte at of section tag set to v, resealed.
	put32 := func(tag string, at int, v uint32) []byte {
		b := bytes.Clone(good)
		off, _ := sec(b, tag)
		binary.LittleEndian.PutUint32(b[off+at:], v)
		return reseal(b)
	}
	// rename is good with section tag's record renamed to to: the section is missing, or
	// another one doubled.
	rename := func(tag, to string) []byte {
		b := bytes.Clone(good)
		for i := range int(binary.LittleEndian.Uint32(b[8:])) {
			rec := b[headerSize+sectionSize*i:]
			if string(rec[:4]) == tag {
				copy(rec, to)
			}
		}
		return reseal(b)
	}
	// shorten is good with section tag's recorded length less by n bytes.
	shorten := func(tag string, n uint32) []byte {
		b := bytes.Clone(good)
		for i := range int(binary.LittleEndian.Uint32(b[8:])) {
			rec := b[headerSize+sectionSize*i:]
			if string(rec[:4]) == tag {
				binary.LittleEndian.PutUint32(rec[8:], binary.LittleEndian.Uint32(rec[8:])-n)
			}
		}
		return reseal(b)
	}
	f32bits := math.Float32bits
	tests := []struct {
		name string
		in   []byte
	}{
		{"header missing", rename(tagMemHdr, "XXXX")},
		{"terms missing", rename(tagMemTerms, "XXXX")},
		{"skills missing", rename(tagMemSkill, "XXXX")},
		{"header short", shorten(tagMemHdr, 4)},
		{"postings cut", shorten(tagMemPost, 4)},
		{"documents cut", shorten(tagMemDocs, 4)},
		{"k1 NaN", put32(tagMemHdr, 0, 0x7fc00000)},
		{"weight negative", put32(tagMemHdr, 12, f32bits(-1))},
		{"weight infinite", put32(tagMemHdr, 12, 0x7f800000)},
		{"depth 0", put32(tagMemHdr, 16, 0)},
		{"depth too large", put32(tagMemHdr, 16, MaxMemoryDepth+1)},
		{"runs disagree", put32(tagMemHdr, 20, 8)},
		{"reserved set", put32(tagMemHdr, 24, 1)},
		{"term past the heap", put32(tagMemTerms, 4, 1<<30)},
		{"terms out of order", func() []byte {
			b := bytes.Clone(good)
			off, _ := sec(b, tagMemTerms)
			first := bytes.Clone(b[off : off+8])
			copy(b[off:], b[off+8:off+16])
			copy(b[off+8:], first)
			return reseal(b)
		}()},
		{"posting offsets not from 0", put32(tagMemPOff, 0, 1)},
		{"posting offsets past the postings", put32(tagMemPOff, 12, 99)},
		{"posting offsets decrease", put32(tagMemPOff, 8, 0)},
		{"posting document past the documents", put32(tagMemPost, 0, 2)},
		{"posting documents not ascending", put32(tagMemPost, 16, 0)},
		{"posting frequency NaN", put32(tagMemPost, 4, 0x7fc00000)},
		{"posting frequency negative", put32(tagMemPost, 4, f32bits(-2))},
		{"document length NaN", put32(tagMemDocs, 0, 0x7fc00000)},
		{"document without runs", put32(tagMemDocs, 4, 0)},
		{"document unknown flag", put32(tagMemDocs, 8, 2)},
		{"skill offsets past the skills", put32(tagMemSOff, 8, 99)},
		{"skill out of range", put32(tagMemSkill, 0, 3)},
		{"skills not ascending", put32(tagMemSkill, 8, 0)},
		{"skill huge", put32(tagMemSkill, 12, 1<<31)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Decode(tc.in)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode = %v, %v; want %v", g, err, ErrCorrupt)
			}
		})
	}
}

// TestClusterDecodeErrors corrupts the cluster sections of format 2.2 in turn: Decode must
// refuse the artifact with an error naming the section, and Encode an artifact that would.
func TestClusterDecodeErrors(t *testing.T) {
	good := encode(t, testClusterArtifact())
	if g := decode(t, good); g.NumClusters() != 2 || g.ClusterOf(2) != NoCluster {
		t.Fatalf("%d clusters, skill 2 in %d", g.NumClusters(), g.ClusterOf(2))
	}
	// edit returns good with the section table record of tag passed to f, and the body of the
	// section tagged tag (after f) passed to body, resealed.
	edit := func(tag string, rec func([]byte), body func([]byte)) []byte {
		b := bytes.Clone(good)
		for i := range int(binary.LittleEndian.Uint32(b[8:])) {
			r := b[headerSize+sectionSize*i:]
			if string(r[:4]) == tag {
				if rec != nil {
					rec(r)
				}
				off := binary.LittleEndian.Uint32(r[4:])
				if body != nil {
					body(b[off : off+binary.LittleEndian.Uint32(r[8:])])
				}
			}
		}
		return reseal(b)
	}
	rename := func(to string) func([]byte) { return func(r []byte) { copy(r, to) } }
	shorten := func(n uint32) func([]byte) {
		return func(r []byte) { binary.LittleEndian.PutUint32(r[8:], binary.LittleEndian.Uint32(r[8:])-n) }
	}
	tests := []struct {
		name, tag string
		in        []byte
	}{
		{"centroids missing", tagCentroids, edit(tagCentroids, rename("XXXX"), nil)},
		{"assignments missing", tagAssign, edit(tagAssign, rename("XXXX"), nil)},
		{"centroids not whole rows", tagCentroids, edit(tagCentroids, shorten(1), nil)},
		{"centroids empty", tagCentroids, edit(tagCentroids, shorten(8), nil)},
		{"centroid value -128", tagCentroids, edit(tagCentroids, nil, func(b []byte) { b[5] = 0x80 })},
		{"assignments short", tagAssign, edit(tagAssign, shorten(2), nil)},
		{"cluster out of range", tagAssign, edit(tagAssign, nil, func(b []byte) { b[2] = 2 })},
		{"cluster just below NoCluster", tagAssign, edit(tagAssign, nil, func(b []byte) { b[0], b[1] = 0xfe, 0xff })},
		{"clusters without vectors", tagCentroids, func() []byte {
			a := testClusterArtifact()
			a.Vectors, a.Encoder = nil, nil
			bodies := map[string][]byte{}
			b, err := Encode(a)
			if err == nil {
				t.Fatal("Encode took clusters without vectors")
			}
			tags := a.clusterBodies(bodies)
			g := decode(t, encode(t, testArtifact()))
			for _, s := range g.sections {
				tags = append(tags, s.Tag)
				bodies[s.Tag] = g.data[s.Offset : s.Offset+s.Length]
			}
			if b, err = assemble(tags, bodies, Major, ClusterMinor); err != nil {
				t.Fatal(err)
			}
			return b
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Decode(tc.in)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.tag) {
				t.Fatalf("Decode = %v, %v; want %v naming %s", g, err, ErrCorrupt, tc.tag)
			}
		})
	}
	bad := testClusterArtifact()
	bad.Clusters.Assign[0] = 2
	if _, err := Encode(bad); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Errorf("Encode of a skill in cluster 2 of 2: %v", err)
	}
}

// A staged artifact encodes, with a memory or without, to Encode's bytes, in either order, and
// refuses a second memory (its strings would stay in the heap).
func TestStagedEncode(t *testing.T) {
	mem := func() *Memory {
		m := testMemory()
		m.Terms = append(m.Terms, "zebra") // a string no other section holds
		m.Postings = append(m.Postings, []Posting{{Doc: 1, TF: 1}})
		return m
	}
	for _, tc := range []struct {
		name string
		make func() *Artifact
	}{
		{"lexical only", testArtifact},
		{"with vectors", testVectorArtifact},
		{"with clusters", testClusterArtifact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]any{"variant": "full"}
			after := map[string]any{"variant": "full", "memory": map[string]any{"weight": 0.5}}
			want := func(m *Memory, p map[string]any) []byte {
				a := tc.make()
				a.Memory, a.Params = m, p
				return encode(t, a)
			}
			a := tc.make()
			a.Memory = mem() // checked, not encoded
			s, err := Stage(a)
			if err != nil {
				t.Fatal(err)
			}
			m := mem()
			for i, step := range []struct {
				m *Memory
				p map[string]any
			}{{nil, before}, {m, after}, {nil, before}, {m, nil}} {
				got, err := s.Encode(step.m, step.p)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if !bytes.Equal(got, want(step.m, step.p)) {
					t.Errorf("step %d: the staged bytes differ from Encode's", i)
				}
			}
			if _, err := s.Encode(mem(), nil); err == nil {
				t.Error("a second memory was taken")
			}
		})
	}
}
