package oracle

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
)

func TestAnswer(t *testing.T) {
	gold := []eval.GoldEdge{{Source: "a", Target: "b"}, {Source: "b", Target: "c"}, {Source: "c", Target: "c"}}
	kinds := []builder.ProbeKind{0, 1, 2} // removal, substitution, reorder
	tests := []struct {
		name           string
		source, target string
		rate           float64
		want           float64
	}{
		{"gold edge: the dependency holds", "a", "b", 0, 1},
		{"second gold edge", "b", "c", 0, 1},
		{"reverse of a gold edge: no dependency", "b", "a", 0, 0},
		{"transitive pair is not gold", "a", "c", 0, 0},
		{"self loop in the file is ignored", "c", "c", 0, 0},
		{"unknown skills: no dependency", "x", "y", 0, 0},
		{"error rate 1 flips a gold edge", "a", "b", 1, 0},
		{"error rate 1 flips a non-gold pair", "b", "a", 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(gold, Options{ErrorRate: tc.rate, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kinds {
				if got := p.answer(tc.source, tc.target, k); got != tc.want {
					t.Errorf("%s %s -> %s: e = %v, want %v", k, tc.source, tc.target, got, tc.want)
				}
			}
		})
	}
}

// TestFlipped checks the error model: the share of flipped answers is the rate, the flips at a
// rate are among the flips at any higher rate, a seed picks other answers, and the same call
// always gives the same answer.
func TestFlipped(t *testing.T) {
	const n = 20000
	type probe struct {
		s, t string
		k    builder.ProbeKind
	}
	var probes []probe
	for i := range n {
		probes = append(probes, probe{fmt.Sprintf("tool_%d", i/7), fmt.Sprintf("tool_%d", i), builder.ProbeKind(i % 3)})
	}
	flips := func(seed uint64, rate float64) []bool {
		out := make([]bool, n)
		for i, p := range probes {
			out[i] = flipped(seed, p.s, p.t, p.k, rate)
		}
		return out
	}
	share := func(f []bool) float64 {
		c := 0
		for _, x := range f {
			if x {
				c++
			}
		}
		return float64(c) / n
	}
	tests := []struct {
		rate, lower float64
	}{{0, 0}, {0.1, 0}, {0.3, 0.1}, {0.5, 0.3}, {1, 0.5}}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.rate), func(t *testing.T) {
			f := flips(1, tc.rate)
			if got := share(f); math.Abs(got-tc.rate) > 0.01 {
				t.Errorf("flipped share %.4f, want %.2f ± 0.01", got, tc.rate)
			}
			low := flips(1, tc.lower)
			for i := range f {
				if low[i] && !f[i] {
					t.Fatalf("probe %v flipped at rate %v but not at %v", probes[i], tc.lower, tc.rate)
				}
			}
			again, other := flips(1, tc.rate), flips(2, tc.rate)
			same := 0
			for i := range f {
				if again[i] != f[i] {
					t.Fatalf("probe %v: a second call answered differently", probes[i])
				}
				if other[i] == f[i] {
					same++
				}
			}
			if tc.rate > 0 && tc.rate < 1 && same == n {
				t.Error("seed 2 flipped exactly the answers seed 1 did")
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return fixture.WriteFile(t, dir, name, body) }
	good := `{"source":"a","target":"b","type":"output_to_input"}` + "\n"
	tests := []struct {
		name string
		path string
		opt  Options
		err  string
	}{
		{"missing file", filepath.Join(dir, "nope.jsonl"), Options{}, "nope.jsonl"},
		{"bad JSON, named by line", write("bad.jsonl", good+"\n{oops\n"), Options{}, "bad.jsonl:3: not a JSON edge"},
		{"missing target", write("half.jsonl", good+`{"source":"a"}`+"\n"), Options{}, `half.jsonl:2: fields "source" and "target" are required`},
		{"empty file", write("empty.jsonl", "\n\n"), Options{}, "empty.jsonl: no gold edges"},
		{"only self loops", write("loops.jsonl", `{"source":"a","target":"a"}`+"\n"), Options{}, "loops.jsonl: no gold edges between two different skills"},
		{"rate above 1", write("ok1.jsonl", good), Options{ErrorRate: 1.5}, "error rate 1.5 is outside [0, 1]"},
		{"negative rate", write("ok2.jsonl", good), Options{ErrorRate: -0.1}, "outside [0, 1]"},
		{"NaN rate", write("ok3.jsonl", good), Options{ErrorRate: math.NaN()}, "outside [0, 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "oracle: ") {
				t.Errorf("error %v, want one starting oracle: and containing %q", err, tc.err)
			}
		})
	}
	if p, err := Load(write("good.jsonl", good+good), Options{ErrorRate: 0.3}); err != nil || p.edges() != 1 {
		t.Errorf("good file: %v edges, error %v; want 1 and none", p, err)
	}
}

func TestProbeErrors(t *testing.T) {
	skills := []ingest.Skill{{Name: "a"}, {Name: "b"}}
	elsewhere, err := New([]eval.GoldEdge{{Source: "x", Target: "y"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere.source = "other.jsonl"
	tests := []struct {
		name   string
		p      *Prober
		probes []builder.Probe
		err    string
	}{
		{"no gold edge in the library", elsewhere, []builder.Probe{{Source: 0, Target: 1}},
			"none of the 1 gold edges of other.jsonl joins two skills of the library"},
		{"index out of range", mustNew(t, "a", "b"), []builder.Probe{{Source: 0, Target: 2}}, "probe 0: skill index out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Probe(context.Background(), skills, tc.probes)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
	if _, err := New([]eval.GoldEdge{{Source: "a"}}, Options{}); err == nil || !strings.Contains(err.Error(), "edge 1") {
		t.Errorf("an edge without a target: error %v", err)
	}
}

func mustNew(t *testing.T, pairs ...string) *Prober {
	t.Helper()
	var edges []eval.GoldEdge
	for i := 0; i+1 < len(pairs); i += 2 {
		edges = append(edges, eval.GoldEdge{Source: pairs[i], Target: pairs[i+1]})
	}
	p, err := New(edges, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder remembers the candidate edges a build probed.
type recorder struct {
	builder.Prober
	probed map[[2]string]bool
}

func (r *recorder) Probe(ctx context.Context, skills []ingest.Skill, probes []builder.Probe) ([]builder.ProbeResult, error) {
	for _, p := range probes {
		r.probed[[2]string{skills[p.Source].Name, skills[p.Target].Name}] = true
	}
	return r.Prober.Probe(ctx, skills, probes)
}

// sampleGold loads the sample library and makes a gold edge set for it: every third candidate
// edge of a publish-all build (so the frontier holds gold and non-gold pairs) and two pairs that
// are no candidate at all. isGold holds the same edges as (source, target) pairs.
func sampleGold(t *testing.T) (skills []ingest.Skill, gold []eval.GoldEdge, isGold map[[2]string]bool) {
	t.Helper()
	lib, err := ingest.Load(fixture.LabSampleLib)
	if err != nil {
		t.Fatal(err)
	}
	skills = lib.Skills
	opt := builder.DefaultOptions()
	opt.Variant = builder.VariantPublishAll
	g := testlib.Graph(t, builder.Input{Skills: skills, Options: &opt, Embedder: builder.BuiltinEmbedder})
	n := 0
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			if n++; n%3 == 0 {
				gold = append(gold, eval.GoldEdge{Source: g.Name(u), Target: g.Name(g.Target(e))})
			}
		}
	}
	if len(gold) < 20 {
		t.Fatalf("only %d gold edges from %d candidates", len(gold), n)
	}
	gold = append(gold, eval.GoldEdge{Source: skills[0].Name, Target: skills[1].Name},
		eval.GoldEdge{Source: skills[2].Name, Target: skills[0].Name})
	isGold = map[[2]string]bool{}
	for _, e := range gold {
		isGold[[2]string{e.Source, e.Target}] = true
	}
	return skills, gold, isGold
}

// oracleBuild builds the sample with an oracle at rate and seed, probing every candidate as the
// CLI does, and returns the artifact, its edges by state and the probed pairs.
func oracleBuild(t *testing.T, skills []ingest.Skill, gold []eval.GoldEdge, rate float64, seed uint64) ([]byte, map[[2]string]graphs.State, map[[2]string]bool) {
	t.Helper()
	p, err := New(gold, Options{ErrorRate: rate, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Prober: p, probed: map[[2]string]bool{}}
	opt := builder.DefaultOptions()
	opt.Prober, opt.Budget = rec, 0
	res, err := builder.Build(context.Background(), builder.Input{Skills: skills, Options: &opt, Embedder: builder.BuiltinEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	data, rep := res.Artifact, res.Report
	if rep.Prober != name || rep.Frontier != len(rec.probed) {
		t.Fatalf("report: prober %q, frontier %d; %d pairs probed", rep.Prober, rep.Frontier, len(rec.probed))
	}
	g := testlib.Decode(t, data)
	states := map[[2]string]graphs.State{}
	for u := range g.NumSkills() {
		lo, hi := g.Out(u)
		for e := lo; e < hi; e++ {
			states[[2]string{g.Name(u), g.Name(g.Target(e))}] = g.State(e)
		}
	}
	return data, states, rec.probed
}

// TestPerfectOracle: with no errors, calibration confirms exactly the gold edges among the
// probed candidates and rejects every other probed candidate; only unprobed candidates can be
// published otherwise (as scaffold).
func TestPerfectOracle(t *testing.T) {
	skills, gold, isGold := sampleGold(t)
	_, states, probed := oracleBuild(t, skills, gold, 0, 1)
	want := map[[2]string]bool{}
	for pair := range probed {
		if isGold[pair] {
			want[pair] = true
		}
	}
	if len(want) == 0 || len(want) == len(probed) {
		t.Fatalf("%d of %d probed candidates are gold: the test needs both kinds", len(want), len(probed))
	}
	for pair := range want {
		if st, ok := states[pair]; !ok || st != graphs.Confirmed {
			t.Errorf("gold probed edge %s -> %s: published %v as %v, want confirmed", pair[0], pair[1], ok, st)
		}
	}
	for pair, st := range states {
		switch {
		case st == graphs.Confirmed && !want[pair]:
			t.Errorf("%s -> %s confirmed but not a gold probed edge", pair[0], pair[1])
		case st == graphs.Uncertain:
			t.Errorf("%s -> %s uncertain: a perfect oracle leaves nothing uncertain", pair[0], pair[1])
		case st == graphs.Scaffold && probed[pair]:
			t.Errorf("%s -> %s probed but published as scaffold", pair[0], pair[1])
		}
	}
}

// TestErrorRateChangesOutcomes: the same rate and seed give the same artifact; a higher rate
// gets strictly more probed candidates into the wrong state, and another seed another artifact.
func TestErrorRateChangesOutcomes(t *testing.T) {
	skills, gold, isGold := sampleGold(t)
	wrong := func(states map[[2]string]graphs.State, probed map[[2]string]bool) int {
		n := 0
		for pair := range probed {
			st, published := states[pair]
			right := (isGold[pair] && st == graphs.Confirmed) || (!isGold[pair] && !published)
			if !right {
				n++
			}
		}
		return n
	}
	prev := -1
	var prevData []byte
	for _, rate := range []float64{0, 0.1, 0.3} {
		data, states, probed := oracleBuild(t, skills, gold, rate, 1)
		again, _, _ := oracleBuild(t, skills, gold, rate, 1)
		if !bytes.Equal(data, again) {
			t.Errorf("rate %v: two builds differ", rate)
		}
		w := wrong(states, probed)
		t.Logf("rate %v: %d of %d probed candidates in the wrong state", rate, w, len(probed))
		if rate == 0 && w != 0 || w <= prev {
			t.Errorf("rate %v: %d probed candidates in the wrong state (%d at the rate below)", rate, w, prev)
		}
		if bytes.Equal(data, prevData) {
			t.Errorf("rate %v: the same artifact as the rate below", rate)
		}
		prev, prevData = w, data
	}
	other, _, _ := oracleBuild(t, skills, gold, 0.3, 2)
	if bytes.Equal(other, prevData) {
		t.Error("rate 0.3: seeds 1 and 2 built the same artifact")
	}
}
