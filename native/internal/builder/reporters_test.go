package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/ingest"
)

// TestReportsCannotForge is the forgery an open feedback endpoint allowed: a pair nothing else
// links, reported used together by one client again and again. The reports are read as the
// feedback log writes them (ReadTraces), with the reporter each line names. Before reporters
// were counted, two such lines published a confirmed dependency edge at weight 0.999, one an
// uncertain edge at 0.667. Now one reporter, however often it reports, publishes nothing and
// tips nothing; two or three that agree count as that many runs.
func TestReportsCannotForge(t *testing.T) {
	skills := loadLib(t, sampleLib)
	const src, dst = "sharpen-kitchen-knife", "water-lawn-with-sprinkler" // nothing else links them
	line := func(id, source string) string {
		return fmt.Sprintf(`{"id":%q,"skills":[%q,%q],"source":%q}`, id, src, dst, source)
	}
	trusted := fmt.Sprintf(`{"id":"t1","skills":[%q,%q]}`, src, dst)
	repeat := func(n int, source string) []string {
		var out []string
		for k := range n {
			out = append(out, line(fmt.Sprint("fb-", source, k), source))
		}
		return out
	}
	tests := []struct {
		name  string
		lines []string
		want  graphs.State // graphs.Unvalidated: no edge published
	}{
		{"one token, 50 reports", repeat(50, "token:mallory"), graphs.Unvalidated},
		{"loopback, 50 reports", repeat(50, "loopback"), graphs.Unvalidated},
		{"one token, 50 failed and successful reports", append(repeat(25, "token:mallory"),
			strings.ReplaceAll(strings.Join(repeat(25, "token:mallory"), "\n"), `"source"`, `"outcome":"failure","source"`)), graphs.Unvalidated},
		{"one trusted run", []string{trusted}, graphs.Uncertain},
		{"one trusted run, one token's 50 reports", append([]string{trusted}, repeat(50, "token:mallory")...), graphs.Uncertain},
		{"two tokens", append(repeat(1, "token:alice"), repeat(1, "token:bob")...), graphs.Confirmed},
		{"three tokens", append(append(repeat(1, "token:alice"), repeat(1, "token:bob")...), repeat(1, "token:carol")...), graphs.Confirmed},
	}
	weights := map[string]float32{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "feedback.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(tt.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := ReadTraces(path)
			if err != nil {
				t.Fatal(err)
			}
			opt := DefaultOptions()
			opt.traces = runs
			g, _ := buildGraph(t, skills, opt)
			state, w := graphs.Unvalidated, float32(0)
			for u := range g.NumSkills() {
				lo, hi := g.Out(u)
				for e := lo; e < hi; e++ {
					if g.Name(u) == src && g.Name(g.Target(e)) == dst {
						state, w = g.State(e), g.Weight(e)
					}
				}
			}
			if state != tt.want {
				t.Errorf("%s → %s: %s at %.3f, want %s", src, dst, state, w, tt.want)
			}
			weights[tt.name] = w
		})
	}
	if a, b := weights["one trusted run"], weights["one trusted run, one token's 50 reports"]; a != b {
		t.Errorf("one token's reports moved a trusted edge from %.4f to %.4f", a, b)
	}
}

// TestReportedStats checks how reported runs enter the runs' statistics: once per reporter,
// and only where MinReporters agree.
func TestReportedStats(t *testing.T) {
	index := map[string]int{"a": 0, "b": 1, "c": 2}
	run := func(source string, s ...string) Trace { return Trace{ID: "r", Skills: s, Source: source} }
	failed := func(source string, s ...string) Trace {
		return Trace{ID: "f", Skills: s, Source: source, Failed: true}
	}
	tests := []struct {
		name       string
		runs       []Trace
		nilStats   bool
		coAB       int
		countB     int
		beforeAB   int
		failedAB   float64 // failure weight on a → b
		priorFixed bool    // the prior is the trusted runs' alone
	}{
		{"one reporter", []Trace{run("x", "a", "b"), run("x", "a", "b"), run("x", "b", "a")}, true, 0, 0, 0, 0, false},
		{"two reporters", []Trace{run("x", "a", "b"), run("x", "a", "b"), run("y", "b", "a")}, false, 2, 2, 1, 0, false},
		{"two reporters, one of a", []Trace{run("x", "a", "b"), run("y", "a"), run("y", "b")}, false, 0, 2, 0, 0, false},
		{"trusted runs and one reporter", []Trace{run("", "a", "b"), run("", "a", "b", "c"), run("x", "a", "c"), run("x", "c", "a")}, false, 2, 2, 2, 0, true},
		{"one reporter's failures", []Trace{run("", "a", "b"), failed("x", "b"), failed("x", "b"), failed("x", "b")}, false, 1, 1, 1, 0, true},
		{"two reporters' failures, capped", []Trace{run("", "a", "b"), failed("x", "b"), failed("x", "b"), failed("y", "b")}, false, 1, 1, 1, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := newTraceStats(tt.runs, index)
			if ts == nil {
				if !tt.nilStats {
					t.Fatal("no statistics")
				}
				return
			}
			if tt.nilStats {
				t.Fatalf("statistics from one reporter: co %v, count %v", ts.co.rows, ts.count)
			}
			if got := ts.co.co(0, 1); got != tt.coAB || ts.co.co(1, 0) != got {
				t.Errorf("co(a, b) = %d / %d, want %d", got, ts.co.co(1, 0), tt.coAB)
			}
			if got := ts.count[1]; got != tt.countB {
				t.Errorf("count(b) = %d, want %d", got, tt.countB)
			}
			if got := ts.co.before(0, 1); got != tt.beforeAB {
				t.Errorf("before(a, b) = %d, want %d", got, tt.beforeAB)
			}
			if got := ts.failed[pk(0, 1)]; got != tt.failedAB {
				t.Errorf("failure weight on a → b = %v, want %v", got, tt.failedAB)
			}
			if tt.priorFixed {
				var trusted []Trace
				for _, r := range tt.runs {
					if r.Source == "" && !r.Failed {
						trusted = append(trusted, r)
					}
				}
				ref, _ := newTraceStats(trusted, index)
				if ref.traces != ts.traces {
					t.Errorf("reported runs among the trusted runs: %d runs, want %d", ts.traces, ref.traces)
				}
			}
		})
	}
}

// TestLearnedFrom checks the evidence caskg inspect --learned shows: runs, failed runs,
// trusted runs and reporters per pair, and whether the build counted them.
func TestLearnedFrom(t *testing.T) {
	st := &State{}
	if err := st.log.append([]Trace{
		{ID: "1", Skills: []string{"a", "b"}},
		{ID: "2", Skills: []string{"a", "b"}, Source: "token:x"},
		{ID: "3", Skills: []string{"b", "c"}, Source: "token:x"},
		{ID: "4", Skills: []string{"b"}, Source: "token:y", Failed: true},
		{ID: "5", Skills: []string{"a", "c", "zz"}, Source: "token:y"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		st.Skills = append(st.Skills, ingest.Skill{Name: name})
	}
	evidence, err := LearnedFrom(st, func(s, d int) bool { return s < d })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evidence {
		got = append(got, fmt.Sprintf("%s→%s runs %d failed %d trusted %d reporters %v counted %v", ev.Source, ev.Target, ev.Runs, ev.Failed, ev.Trusted, ev.Reporters, ev.Counted))
	}
	want := []string{
		"a→b runs 2 failed 1 trusted 1 reporters [token:x] counted true",
		"a→c runs 1 failed 0 trusted 0 reporters [token:y] counted false",
		"b→c runs 1 failed 0 trusted 0 reporters [token:x] counted false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the evidence per pair (-want +got):\n%s", diff)
	}
}

// TestReportedPrior checks that runs each sent by a reporter of its own, where every skill and
// pair has two reporters, give the statistics and the prior the same runs give trusted; and
// that one reporter's runs, however many, leave the trusted runs' prior as it is.
func TestReportedPrior(t *testing.T) {
	index := map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}
	sets := [][]string{{"a", "b"}, {"a", "b"}, {"a", "b", "c"}, {"c", "a", "b"}, {"a", "b"}, {"c", "d"}, {"d", "c"}}
	var trusted, reported []Trace
	for k, s := range sets {
		trusted = append(trusted, Trace{ID: fmt.Sprint(k), Skills: s})
		reported = append(reported, Trace{ID: fmt.Sprint(k), Skills: s, Source: fmt.Sprint("token:r", k)})
	}
	tt, _ := newTraceStats(trusted, index)
	rt, _ := newTraceStats(reported, index)
	if fmt.Sprint(tt.co.rows, tt.count) != fmt.Sprint(rt.co.rows, rt.count) {
		t.Errorf("reported: co and before %v count %v; trusted: %v %v", rt.co.rows, rt.count, tt.co.rows, tt.count)
	}
	if tt.priorA != rt.priorA || tt.priorB != rt.priorB {
		t.Errorf("prior of reported runs Beta(%g, %g), of trusted Beta(%g, %g)", rt.priorA, rt.priorB, tt.priorA, tt.priorB)
	}
	var forged []Trace
	for k := range 50 {
		forged = append(forged, Trace{ID: fmt.Sprint("f", k), Skills: []string{"a", "d"}, Source: "token:mallory"})
	}
	ft, _ := newTraceStats(append(slices.Clone(trusted), forged...), index)
	if ft.priorA != tt.priorA || ft.priorB != tt.priorB || ft.co.co(0, 3) != 0 {
		t.Errorf("one reporter moved the prior to Beta(%g, %g) from Beta(%g, %g), co(a, d) %d", ft.priorA, ft.priorB, tt.priorA, tt.priorB, ft.co.co(0, 3))
	}
}

func TestReportedRunsString(t *testing.T) {
	for _, c := range []struct {
		name string
		in   ReportedRuns
		want string
	}{
		{"all held", ReportedRuns{Runs: 2, Reporters: 1, HeldRuns: 2, HeldReporters: 1},
			"2 reported runs from 1 reporter held back: a skill, pair or word counts once 2 reporters agree"},
		{"all counted", ReportedRuns{Runs: 1, Reporters: 1}, "1 reported run from 1 reporter, all counted"},
		{"some held", ReportedRuns{Runs: 5, Reporters: 3, HeldRuns: 1, HeldReporters: 1},
			"5 reported runs from 3 reporters: 4 counted, 1 from 1 reporter held back (a skill, pair or word counts once 2 reporters agree)"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
