package graphs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
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
	return a
}

func TestRoundTrip(t *testing.T) {
	a := testArtifact()
	b, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got := view(g)
	want := testArtifact()
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
	if maj, min := g.Version(); maj != Major || min != Minor {
		t.Errorf("version %d.%d", maj, min)
	}
}

func TestEncodeDeterministic(t *testing.T) {
	b1, err := Encode(testArtifact())
	if err != nil {
		t.Fatal(err)
	}
	a := testArtifact()
	a.Edges[0], a.Edges[2] = a.Edges[2], a.Edges[0] // edge order must not matter
	b2, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := testArtifact()
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
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[headerSize:], castagnoli))
	return b
}

func TestDecodeErrors(t *testing.T) {
	good, err := Encode(testArtifact())
	if err != nil {
		t.Fatal(err)
	}
	clone := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
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
		{"target out of range", clone(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tagEdgeTgt):], 99)
			return reseal(b)
		}), ErrCorrupt},
		{"weight NaN", clone(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tagEdgeWgt):], 0x7fc00000)
			return reseal(b)
		}), ErrCorrupt},
		{"string past heap", clone(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[secOff(b, tagSkills)+4:], 1<<30)
			return reseal(b)
		}), ErrCorrupt},
		{"missing section", clone(func(b []byte) []byte {
			copy(b[headerSize:], "XXXX")
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
	a := testArtifact()
	good, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{"ZNEW": []byte("future")}
	tags := []string{}
	for _, s := range g.Sections() {
		bodies[s.Tag] = good[s.Offset : s.Offset+s.Length]
		tags = append(tags, s.Tag)
	}
	tags = append(tags[:3], append([]string{"ZNEW"}, tags[3:]...)...)
	newer, err := assemble(tags, bodies, Minor+1)
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
	good, err := Encode(testArtifact())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic))
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
		}
		// Decode may allocate the Graph and the section table, nothing proportional to a count.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Decode(b)
		runtime.ReadMemStats(&after)
		if used := after.TotalAlloc - before.TotalAlloc; used > 4096+uint64(MaxSections)*64 {
			t.Errorf("Decode of %d bytes allocated %d bytes", len(b), used)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data, err := Encode(testArtifact())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
