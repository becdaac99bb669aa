package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
	"github.com/caskg/caskg/native/lab/internal/bench"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestPeerText: the peers' text per skill holds the fields score.py's BM25 indexes, one per line,
// empty ones left out, cut to 4,000 characters (not bytes).
func TestPeerText(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for _, tc := range []struct {
		name  string
		skill ingest.Skill
		want  string
	}{
		{"name and description", ingest.Skill{Name: "pdf", Description: "Read PDF files."}, "pdf\nRead PDF files."},
		{"every field", ingest.Skill{Name: "csv-join", Title: "CSV join", Description: "Join two CSV files.",
			Inputs:  []ingest.Field{{Name: "left_file", Type: "path", Description: "first  table"}},
			Outputs: []ingest.Field{{Name: "joined"}}, Tags: []string{"data", "csv"}, SchemaText: "key column",
			Body: "  Use pandas.\n\nThen save.  "},
			"csv-join\nCSV join\nJoin two CSV files.\nleft file path first table\njoined\ndata csv\nkey column\nUse pandas.\n\nThen save."},
		{"cut to 4,000 characters", ingest.Skill{Name: "x", Description: "d", Body: long}, "x\nd\n" + long[:2*3996]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PeerText(tc.skill); got != tc.want {
				t.Errorf("PeerText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFirstWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 12, ""},
		{"  one\ttwo\n\nthree ", 12, "one two three"},
		{"a b c d e f g h i j k l m n", 12, "a b c d e f g h i j k l"},
		{"a b c", 2, "a b"},
	} {
		if got := firstWords(tc.in, tc.n); got != tc.want {
			t.Errorf("firstWords(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestLibraries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"real,10000,100000", []int{0, 10000, 100000}, false},
		{" real ", []int{0}, false},
		{"", nil, false},
		{"10000,0", nil, true},
		{"ten", nil, true},
	} {
		got, err := libraries(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("libraries(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCheckUpdate(t *testing.T) {
	ok := config{update: true, updateSpec: updateSpec{name: "update", skills: 10000, runs: 2000, newRuns: 20, rounds: 3}}
	for _, tc := range []struct {
		name   string
		edit   func(*config)
		render bool
		err    string
	}{
		{"defaults", func(*config) {}, false, ""},
		{"render", func(*config) {}, true, ""},
		{"only the stage", func(c *config) { c.updateOnly = true }, false, ""},
		{"skipped", func(c *config) { c.update = false }, false, ""},
		{"only and render", func(c *config) { c.updateOnly = true }, true, "-update-only measures and -render does not"},
		{"only and skipped", func(c *config) { c.updateOnly, c.update = true, false }, false, "nothing to run"},
		{"no new runs", func(c *config) { c.updateSpec.newRuns = 0 }, false, "each must be at least 1"},
		{"no old runs", func(c *config) { c.updateSpec.runs = 0 }, false, "each must be at least 1"},
		{"no skills", func(c *config) { c.updateSpec.skills = -1 }, false, "each must be at least 1"},
		{"no rounds", func(c *config) { c.updateSpec.rounds = 0 }, false, "each must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.checkUpdate(tc.render)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("checkUpdate: %v, want an error containing %q", err, tc.err)
			}
		})
	}
}

// TestWriteRuns: the update stage's run files read back, through builder.ReadTraces, as the runs.
func TestWriteRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []synth.Run
	}{
		{"one run", []synth.Run{{ID: "run-0", Skills: []string{"a", "b", "c"}}}},
		{"names to escape", []synth.Run{{ID: "run-7", Skills: []string{"x\"y", "ü-v1"}}, {ID: "run-8", Skills: []string{"z"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "runs.jsonl")
			if err := writeRuns(path, tc.runs); err != nil {
				t.Fatal(err)
			}
			got, err := builder.ReadTraces(path)
			if err != nil {
				t.Fatal(err)
			}
			var want []builder.Trace
			for _, r := range tc.runs {
				want = append(want, builder.Trace{ID: r.ID, Skills: r.Skills})
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back %+v, want %+v", got, want)
			}
		})
	}
}

// TestDocumentUpdate: docs/benchmarks.md has the incremental-update section, with its table and the
// command that reruns it at the saved sizes, only when the run measured it.
func TestDocumentUpdate(t *testing.T) {
	c := &config{dir: "bin/bench", base: "../shared/data/skills", rounds: 3, pushQueries: 87}
	row := bench.Update{Skills: 10000, OldRuns: 2000, NewRuns: 20, StateBytes: 50e6, Bytes: 11e6,
		Full:   bench.UpdateSide{Seconds: 30, Rounds: []float64{30, 29, 31}, PeakRSSMB: 260},
		Update: bench.UpdateSide{Seconds: 3, Rounds: []float64{3, 4, 2}, PeakRSSMB: 200}}
	for _, tc := range []struct {
		name      string
		updates   []bench.Update
		want, not []string
	}{
		{"measured", []bench.Update{row}, []string{
			"## Incremental update\n",
			"grows the 10,000-skill `synth` library, makes 2,000 runs",
			"(1%) and times 3 rounds of:\na full build with all 2,020 runs",
			"| 10,000 | 2,000 + 20 | 30.0 (29.0–31.0) | 3.00 (2.00–4.00) | 0.100 (10.0× faster) |",
			"bin/caskg-bench -update-only -update-skills 10000 -update-runs 2000 -update-new 20 -update-rounds 3 ",
		}, nil},
		{"not measured", nil, nil, []string{"Incremental update", "-update-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := document(&bench.Report{Machine: "m", Tasks: "87", Updates: tc.updates}, c)
			for _, w := range tc.want {
				if !strings.Contains(doc, w) {
					t.Errorf("docs/benchmarks.md lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(doc, w) {
					t.Errorf("docs/benchmarks.md has %q", w)
				}
			}
		})
	}
	// The section comes after the build table and before forward push.
	doc := document(&bench.Report{Updates: []bench.Update{row}}, c)
	if b, u, p := strings.Index(doc, "## Build time"), strings.Index(doc, "## Incremental update"), strings.Index(doc, "## Forward push"); !(b < u && u < p) {
		t.Errorf("sections at %d (build), %d (update), %d (push): want in that order", b, u, p)
	}
}

func TestMedianSide(t *testing.T) {
	side := func(s float64) bench.UpdateSide { return bench.UpdateSide{Seconds: s, ProbesRun: int(s * 10)} }
	for _, tc := range []struct {
		name   string
		rounds []float64
		want   float64
	}{
		{"one", []float64{2}, 2},
		{"odd", []float64{3, 1, 2}, 2},
		{"even: the lower middle", []float64{4, 1, 3, 2}, 2},
		{"ties", []float64{5, 5, 1}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []bench.UpdateSide
			for _, s := range tc.rounds {
				in = append(in, side(s))
			}
			got := medianSide(in)
			if got.Seconds != tc.want || got.ProbesRun != int(tc.want*10) || !slices.Equal(got.Rounds, tc.rounds) {
				t.Errorf("medianSide(%v) = %+v, want the round of %g with every round's time", tc.rounds, got, tc.want)
			}
		})
	}
}

// TestStatusKB reads the peak resident set from a /proc status text.
func TestStatusKB(t *testing.T) {
	status := "Name:\tcaskg-bench\nVmPeak:\t  2000 kB\nVmHWM:\t   123456 kB\nVmRSS:\t 100 kB\n"
	tests := []struct {
		key  string
		want int64
		ok   bool
	}{
		{"VmHWM:", 123456, true},
		{"VmPeak:", 2000, true},
		{"VmSwap:", 0, false},
	}
	for _, tt := range tests {
		if got, ok := statusKB(status, tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("statusKB(%q) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if mb := peakRSSMB(); mb <= 0 {
		t.Errorf("peakRSSMB() = %v, want a positive size", mb)
	}
}

// TestGatewayReport: the gateway subcommand appends its section to a docs/benchmarks.md without
// one, rewrites it in place the next time, and a full rewrite of the report keeps it.
func TestGatewayReport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "benchmarks.md")
	results := filepath.Join(dir, "gateway.txt")
	put := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	put(out, "# Benchmarks\n\nthe rest\n")
	put(results, "BenchmarkSearchTools/graph-2 \t 100\t 1500000 ns/op\t 1100 p50-us\t 9000 p99-us\n")
	if err := gatewayReport([]string{"-o", out, results}); err != nil {
		t.Fatal(err)
	}
	first := read()
	if !strings.HasPrefix(first, "# Benchmarks\n\nthe rest\n\n"+bench.GatewayBegin+"\n## Gateway") ||
		!strings.Contains(first, "| graph | **1.10 ms** |") || !strings.HasSuffix(first, bench.GatewayEnd+"\n") {
		t.Fatalf("first report:\n%s", first)
	}
	put(results, "BenchmarkSearchTools/graph-2 \t 100\t 1500000 ns/op\t 1700 p50-us\t 9000 p99-us\n")
	if err := gatewayReport([]string{"-o", out, results}); err != nil {
		t.Fatal(err)
	}
	second := read()
	if strings.Count(second, bench.GatewayBegin) != 1 || !strings.Contains(second, "| graph | **1.70 ms** |") {
		t.Fatalf("second report:\n%s", second)
	}
	c := &config{out: out, dir: "bin/bench", base: "../shared/data/skills", rounds: 3, pushQueries: 87}
	if err := write(&bench.Report{Machine: "m", Tasks: "3"}, c); err != nil {
		t.Fatal(err)
	}
	third := read()
	if strings.Contains(third, "the rest") || !strings.Contains(third, "| graph | **1.70 ms** |") {
		t.Fatalf("the full rewrite lost the gateway section or kept the old text:\n%s", third)
	}
	put(results, "BenchmarkX-2 10 fast ns/op\n")
	if err := gatewayReport([]string{"-o", out, results}); err == nil || !strings.Contains(err.Error(), "gateway.txt: bench: line 1") {
		t.Errorf("a bad line: %v", err)
	}
}

// TestWriteSummary writes the report and the summary as make bench does: the summary's link to
// the report is relative to the page that holds it (docs/evaluation.md → benchmarks.md).
func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	page := fixture.WriteFile(t, filepath.Join(dir, "docs"), "evaluation.md", "# x\n\n"+bench.BeginMarker+"\nold\n"+bench.EndMarker+"\n")
	c := &config{dir: "bin/bench", base: "base", out: filepath.Join(dir, "docs", "benchmarks.md"), summary: page}
	if err := write(&bench.Report{Machine: "m", Tasks: "87"}, c); err != nil {
		t.Fatal(err)
	}
	got := string(fixture.ReadFile(t, page))
	if want := "Generated by `make bench` from [benchmarks.md](benchmarks.md) (m; 87 tasks, k = 10)"; !strings.Contains(got, want) {
		t.Errorf("docs/evaluation.md:\n%s\nwant it to hold %q", got, want)
	}
}
