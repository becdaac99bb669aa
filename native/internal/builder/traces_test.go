package builder

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
)

// TestFitPrior checks that the co-use prior is fitted to how well runs predict each other:
// runs that repeat the same procedures trust a single co-use, runs that combine skills at
// random do not, and runs that never reuse a skill keep the uniform prior; the trace channel
// follows the prior.
func TestFitPrior(t *testing.T) {
	index := map[string]int{}
	for i := range 60 {
		index[fmt.Sprintf("s%02d", i)] = i
	}
	name := func(i int) string { return fmt.Sprintf("s%02d", i) }
	var repeated, random, once []Trace
	// Ten procedures of three skills, each run four times.
	for p := range 10 {
		for r := range 4 {
			repeated = append(repeated, Trace{ID: fmt.Sprint(p, r), Skills: []string{name(3 * p), name(3*p + 1), name(3*p + 2)}})
		}
	}
	// Forty runs of three skills drawn by a fixed generator: every skill recurs, with different
	// companions each time.
	x := uint64(7)
	for r := range 40 {
		var run []string
		seen := map[int]bool{}
		for len(run) < 3 {
			x = x*6364136223846793005 + 1442695040888963407
			if k := int(x>>33) % 60; !seen[k] {
				seen[k] = true
				run = append(run, name(k))
			}
		}
		random = append(random, Trace{ID: fmt.Sprint(r), Skills: run})
	}
	// Twenty runs that never share a skill.
	for r := range 20 {
		once = append(once, Trace{ID: fmt.Sprint(r), Skills: []string{name(3 * r), name(3*r + 1)}})
	}
	tests := []struct {
		name     string
		runs     []Trace
		min, max float64 // bounds of the posterior of a pair seen together once, in one run
	}{
		{"repeated procedures", repeated, 0.8, 1},
		{"random combinations", random, 0, 0.2},
		{"nothing held out", once, 2.0/3 - 1e-9, 2.0/3 + 1e-9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := newTraceStats(tt.runs, index)
			p := (1 + ts.priorA) / (1 + ts.priorA + ts.priorB)
			if p < tt.min || p > tt.max {
				t.Errorf("prior Beta(%.3g, %.3g): one co-use in one run gives %.3f, want [%.2f, %.2f]", ts.priorA, ts.priorB, p, tt.min, tt.max)
			}
			// The trace channel trusts co-use as far as the runs predict each other: the first
			// run's first pair, whatever its overlap, scores at most the prior's prediction.
			b := &builder{traces: ts}
			i, j := index[tt.runs[0].Skills[0]], index[tt.runs[0].Skills[1]]
			if got := b.trace(i, j); got > tt.max+1e-9 || tt.name == "repeated procedures" && got < tt.min {
				t.Errorf("trace channel of %s and %s: %.3f, want within [%.2f, %.2f]", tt.runs[0].Skills[0], tt.runs[0].Skills[1], got, tt.min, tt.max)
			}
		})
	}
}

func TestKeySpecificity(t *testing.T) {
	tests := []struct {
		name           string
		makers, takers int
		want           float64
	}{
		{"undeclared", 0, 0, 1},
		{"one maker", 1, 0, 1},
		{"two makers", 2, 1, 1},
		{"five makers", 5, 3, 0.5},
		{"seventeen makers", 17, 0, 0.25},
		{"four hundred makers", 401, 2, 0.05},
		{"as many takers as makers", 3, 3, 1 / math.Sqrt2},
		{"taken twice as often as made", 1, 2, 1},
		{"a caller's field", 1, 50, 0.2},
		{"common on both sides", 5, 40, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keySpecificity(tt.makers, tt.takers); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("keySpecificity(%d, %d) = %v, want %v", tt.makers, tt.takers, got, tt.want)
			}
		})
	}
}

// TestReadTraces reads trace files: ids as strings or numbers, blank lines skipped, and every
// bad file refused with an error that names the file and, for a bad entry, its line.
func TestReadTraces(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		in   string // file content; "" leaves the file out
		want []Trace
		err  string // the error, %[1]s standing for the file's path
	}{
		{"string and number ids, blank lines", `{"id": "r1", "skills": ["a", "b"]}` + "\n\n  \n" + `{"id": 2, "skills": ["b"]}` + "\n",
			[]Trace{{ID: "r1", Skills: []string{"a", "b"}}, {ID: "2", Skills: []string{"b"}}}, ""},
		{"empty skills", `{"id": "r", "skills": []}`, []Trace{{ID: "r", Skills: []string{}}}, ""},
		{"missing file", "", nil, "builder: traces: open %[1]s: no such file or directory"},
		{"not JSON", `{"id": "r1", "skills": ["a"]}` + "\n\n{oops\n", nil,
			"builder: traces %[1]s:3: not a JSON trace: invalid character 'o' looking for beginning of object key string"},
		{"no skills", `{"id": "r1"}`, nil, `builder: traces %[1]s:1: field "skills" missing`},
		{"no traces", "\n\n", nil, "builder: traces %[1]s: no traces"},
		{"failed runs marked", `{"id": "f", "skills": ["a", "b"], "outcome": "failure"}` + "\n" +
			`{"id": "s", "skills": ["b", "c"], "outcome": "success", "task": "t"}` + "\n",
			[]Trace{{ID: "f", Skills: []string{"a", "b"}, Failed: true}, {ID: "s", Skills: []string{"b", "c"}, Task: "t"}}, ""},
		{"only failed runs", `{"id": "f", "skills": ["a"], "outcome": "failure"}`, []Trace{{ID: "f", Skills: []string{"a"}, Failed: true}}, ""},
		{"reporters", `{"id": "fb-1", "skills": ["a", "b"], "source": "token:alice"}` + "\n" +
			`{"id": "fb-2", "skills": ["b"], "outcome": "failure", "source": "loopback"}` + "\n" + `{"id": "t", "skills": ["a"], "source": ""}` + "\n",
			[]Trace{{ID: "fb-1", Skills: []string{"a", "b"}, Source: "token:alice"}, {ID: "fb-2", Skills: []string{"b"}, Failed: true, Source: "loopback"},
				{ID: "t", Skills: []string{"a"}}}, ""},
		{"a gateway's calls are read past", `{"id": "gw-0.1-1", "skills": ["a", "b"], "outcome": "success", "calls": [{"tool": "a", "ok": true, "ms": 1}]}` + "\n",
			[]Trace{{ID: "gw-0.1-1", Skills: []string{"a", "b"}}}, ""},
		{"source not a string", `{"id": "r", "skills": ["a"], "source": 7}`, nil,
			"builder: traces %[1]s:1: not a JSON trace: json: cannot unmarshal number into Go struct field .source of type string"},
		{"unknown outcome", `{"id": "r", "skills": ["a"], "outcome": "maybe"}`, nil,
			`builder: traces %[1]s:1: field "outcome": "maybe" is not "success" or "failure"`},
	}
	for k, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("traces%d.jsonl", k))
			if tt.in != "" {
				if err := os.WriteFile(path, []byte(tt.in), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadTraces(path)
			switch {
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case tt.err != "" && (err == nil || err.Error() != fmt.Sprintf(tt.err, path)):
				t.Fatalf("error %v, want %s", err, fmt.Sprintf(tt.err, path))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("traces (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedRuns checks how failed runs weigh on the runs' posterior of a pair i → j: a failed
// run of j without i raises it (the failure is what removing a prerequisite predicts), shared
// among the companions of j the run lacked; a failed run with both, or of other skills, leaves
// it; and a failure never makes a pair the successful runs did not use.
func TestFailedRuns(t *testing.T) {
	index := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	ok := func(s ...string) Trace { return Trace{ID: "ok", Skills: s} }
	fail := func(s ...string) Trace { return Trace{ID: "fail", Skills: s, Failed: true} }
	// b ran 4 times, twice with a, once with c. The prior is fitted to these runs alone in
	// every case: failures do not enter it.
	base := []Trace{ok("a", "b"), ok("a", "b"), ok("b"), ok("b", "c"), ok("d")}
	stats := func(extra ...Trace) *traceStats {
		ts, _ := newTraceStats(append(append([]Trace(nil), base...), extra...), index)
		return ts
	}
	ref := stats()
	tests := []struct {
		name       string
		failed     []Trace
		ab, cb, db float64 // the weight of failures on a → b, c → b, d → b
	}{
		{"none", nil, 0, 0, 0},
		{"b without a or c: shared", []Trace{fail("b")}, 0.5, 0.5, 0},
		{"b with c, without a", []Trace{fail("b", "c"), fail("c", "b")}, 2, 0, 0},
		{"b with both", []Trace{fail("a", "b", "c")}, 0, 0, 0},
		{"other skills", []Trace{fail("d"), fail("a", "c")}, 0, 0, 0},
		{"unknown names", []Trace{fail("x", "y")}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := stats(tt.failed...)
			if ts.priorA != ref.priorA || ts.priorB != ref.priorB || ts.traces != ref.traces {
				t.Errorf("failed runs changed the prior or the run count")
			}
			for _, w := range []struct {
				i    int
				want float64
			}{{0, tt.ab}, {2, tt.cb}, {3, tt.db}} {
				if got := ts.failed[pk(w.i, 1)]; math.Abs(got-w.want) > 1e-12 {
					t.Errorf("failure weight on %d → b: %v, want %v", w.i, got, w.want)
				}
				base, got := ref.posterior(w.i, 1), ts.posterior(w.i, 1)
				switch {
				case w.want > 0 && got <= base:
					t.Errorf("posterior of %d → b: %.3f with the failures, %.3f without: want higher", w.i, got, base)
				case w.want == 0 && got != base:
					t.Errorf("posterior of %d → b: %.3f with the failures, %.3f without: want equal", w.i, got, base)
				}
			}
			if ts.posterior(3, 1) != 0 {
				t.Errorf("a failure made a pair the successful runs never used")
			}
		})
	}
}

// TestFailedRunsInBuild shows failed runs at work in a build: a pair the successful runs used
// together only once in four runs of its target is published weakly, or not at all; failed runs
// of the target without the source then confirm the edge, and raise its weight. The dev sets'
// runs have no failures, so this is where the effect is measured.
func TestFailedRunsInBuild(t *testing.T) {
	skills := loadLib(t, sampleLib)
	const src, dst = "sharpen-kitchen-knife", "water-lawn-with-sprinkler" // nothing else links them
	// Runs that repeat procedures, so that the prior fitted to them trusts co-use (fitPrior),
	// and the pair: used together in one of the three runs of dst.
	var runs []Trace
	for k := range 8 {
		runs = append(runs, Trace{ID: fmt.Sprint("p", k), Skills: []string{"go-to-location", "pick-up-object", "place-object-in-receptacle"}})
	}
	runs = append(runs, Trace{ID: "1", Skills: []string{src, dst}})
	for k := range 2 {
		runs = append(runs, Trace{ID: fmt.Sprint("solo", k), Skills: []string{dst}})
	}
	edge := func(runs []Trace) (float32, graphs.State) {
		opt := DefaultOptions()
		opt.traces = runs
		g, _ := buildGraph(t, skills, opt)
		s, d := -1, -1
		for i := range g.NumSkills() {
			switch g.Name(i) {
			case src:
				s = i
			case dst:
				d = i
			}
		}
		lo, hi := g.Out(s)
		for e := lo; e < hi; e++ {
			if g.Target(e) == d {
				return g.Weight(e), g.State(e)
			}
		}
		return 0, graphs.Unvalidated
	}
	w0, s0 := edge(runs)
	for k := range 10 {
		runs = append(runs, Trace{ID: fmt.Sprint("fail", k), Skills: []string{dst}, Failed: true})
	}
	w1, s1 := edge(runs)
	if s1 != graphs.Confirmed || w1 <= w0 {
		t.Errorf("%s → %s: %s at %.3f without failed runs, %s at %.3f with them; want confirmed and heavier", src, dst, s0, w0, s1, w1)
	}
	t.Logf("%s → %s: %s at %.3f without failed runs, %s at %.3f with 10", src, dst, s0, w0, s1, w1)
}

// TestGridPriorSplit holds the split sums of gridPrior to the cell-by-cell likelihood they
// replace: the same prior on tallies like those of many runs.
func TestGridPriorSplit(t *testing.T) {
	cellByCell := func(entries []priorEntry) (a, b float64) {
		best := math.Inf(-1)
		for ia := range 31 {
			ca := math.Pow(10, -2+float64(ia)/10)
			for ib := range 41 {
				cb := math.Pow(10, -2+float64(ib)/10)
				var ll float64
				for _, c := range entries {
					p := min(max((c.co+ca)/(c.n+ca+cb), 1e-9), 1-1e-9)
					ll += c.hit*math.Log(p) + c.miss*math.Log(1-p)
				}
				if ll > best {
					best, a, b = ll, ca, cb
				}
			}
		}
		return a, b
	}
	rng := rand.New(rand.NewPCG(7, 32))
	for trial := range 40 {
		var entries []priorEntry
		trust := rng.Float64() // how often a co-use repeats
		for range 1 + rng.IntN(300) {
			n := 1 + rng.IntN(2000)
			co := 1 + rng.IntN(n)
			all := float64(1 + rng.IntN(50))
			hit := math.Round(all * min(1, float64(co)/float64(n)+trust*rng.Float64()))
			entries = append(entries, priorEntry{float64(co), float64(n), hit, all - hit})
		}
		wa, wb := cellByCell(entries)
		if a, b := gridPrior(entries); a != wa || b != wb {
			t.Errorf("trial %d: split sums fit Beta(%g, %g), cell by cell Beta(%g, %g)", trial, a, b, wa, wb)
		}
	}
}
