package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestUpdateFile writes the README section as make bench does: only the bench span changes,
// and a README whose bench markers are wrong is left alone, named in the error.
func TestUpdateFile(t *testing.T) {
	const eval = "<!-- eval:begin -->\nE\n<!-- eval:end -->\n"
	section := (&Report{Machine: "m", Tasks: "3"}).Summary("benchmarks.md")
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{name: "replaces the span", in: "# x\n" + BeginMarker + "\nold\nlines\n" + EndMarker + "\nz\n",
			want: "# x\n" + BeginMarker + "\n" + section + EndMarker + "\nz\n"},
		{name: "leaves the eval span", in: eval + BeginMarker + EndMarker + "\n",
			want: eval + BeginMarker + "\n" + section + EndMarker + "\n"},
		{name: "no markers", in: eval, want: eval, err: "mdspan: marker " + BeginMarker + " appears 0 times, want once"},
		{name: "end only", in: EndMarker, want: EndMarker, err: "mdspan: marker " + BeginMarker + " appears 0 times"},
		{name: "twice", in: BeginMarker + EndMarker + BeginMarker, want: BeginMarker + EndMarker + BeginMarker,
			err: "mdspan: marker " + BeginMarker + " appears 2 times"},
		{name: "reversed", in: EndMarker + " " + BeginMarker, want: EndMarker + " " + BeginMarker,
			err: "mdspan: marker " + EndMarker + " comes before " + BeginMarker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := fixture.WriteFile(t, dir, "README.md", tc.in)
			err := mdspan.UpdateFile(path, BeginMarker, EndMarker, []byte(section))
			if tc.err == "" && err != nil ||
				tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "README.md")) {
				t.Errorf("error %v, want one naming README.md and containing %q", err, tc.err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("README holds %q, want %q", got, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("temporary files left behind: %v", entries)
			}
		})
	}
}

func TestTables(t *testing.T) {
	r := &Report{
		Machine: "test machine", Tasks: "87",
		Builds: []Build{
			{Label: "synth", Skills: 10000, Seconds: 20, Stages: map[string]float64{"candidates": 3}, PeakRSSMB: 200,
				Candidates: 150000, Edges: 40000, Bytes: 11_000_000,
				Sections: map[string]int{"STRS": 8_000_000, "EOFF": 40004, "ETGT": 160000, "EWGT": 160000, "EASC": 160000, "EATR": 80000}},
			{Label: "real", Skills: 859, Seconds: 1.5, Edges: 0, Bytes: 4_000_000},
		},
		Queries: []Query{
			{Label: "synth", Skills: 10000, Host: "native", MedianMs: 2, P95Ms: 3, LoadMs: 40,
				Words12: &Latency{Queries: 261, MedianMs: 0.25, P95Ms: 0.5}},
			{Label: "synth", Skills: 10000, Host: "wazero", MedianMs: 5, P95Ms: 7, LoadMs: 90,
				Words12: &Latency{Queries: 261, MedianMs: 1, P95Ms: 1200}},
			{Label: "real", Skills: 859, Host: "native", MedianMs: 0.5, P95Ms: 1},
			{Label: "real", Skills: 859, Host: "node", MedianMs: 0.9, P95Ms: 1.5},
		},
		Push:     []Push{{Eps: 1e-5, Pushes: 7708.4, Ms: 2.3, Residual: 0.019, L1: 0.019, SameTop10: 1, Top10: 1}},
		Semantic: []Semantic{{Skills: 100000, Pool: 4000, Recall50: 0.98, Recall5: 0.99, ExactMs: 10, SketchMs: 2}},
		Wasm:     Sizes{Raw: 2_400_000, Gzip: 700_000},
		Peers: []PeerRun{
			{Label: "synth", Skills: 10000, Tasks: 87, BudgetS: 60, Rounds: 3, Systems: []PeerSystem{
				{System: "Orama", Version: "3.1.18", LoadMs: 2500, HeapBytes: 300e6, Code: Code{Raw: 221_542, Gzip: 55_966},
					Kinds: map[string]PeerKind{
						"full":    {Queries: 7, MedianMs: 9000, P95Ms: 12000, Tasks: 7, R10: 0.5, COMP10: 0.25},
						"words12": {Queries: 261, MedianMs: 95, P95Ms: 130, Tasks: 87, R10: 0.2, COMP10: 0.1}}}}},
			{Label: "real", Skills: 859, Tasks: 87, BudgetS: 60, Rounds: 3, Systems: []PeerSystem{
				{System: "caskg", Variant: "graph", Version: "0.1.0", LoadMs: 30.5, CompileMs: 12, HeapBytes: 2.1e6, WasmBytes: 9.9e6,
					Code: Code{Raw: 2_338_750, Gzip: 695_740},
					Kinds: map[string]PeerKind{
						"full":    {Queries: 261, MedianMs: 0.7464, P95Ms: 1.5, Tasks: 87, R10: 0.868, COMP10: 0.7241},
						"words12": {Queries: 261, MedianMs: 0.217, P95Ms: 0.4, Tasks: 87, R10: 0.595, COMP10: 0.4368}}}}},
		},
		Updates: []Update{
			{Skills: 10000, OldRuns: 2000, NewRuns: 20, StateBytes: 123_456_789, Bytes: 11_054_272,
				Full:   UpdateSide{Seconds: 31.25, Rounds: []float64{33, 31.25, 29.5}, PeakRSSMB: 262.4, ProbesRun: 24000},
				Update: UpdateSide{Seconds: 2.5, Rounds: []float64{2.5, 2.625, 2.25}, PeakRSSMB: 180.6, ProbesRun: 150, ProbesCached: 23850, Mode: "incremental"}},
			{Skills: 1000, OldRuns: 200, NewRuns: 2, Bytes: 4_400_000, Full: UpdateSide{PeakRSSMB: 90}},
		},
	}
	for _, tc := range []struct {
		name, got string
		want      []string
	}{
		{"query", r.QueryTable(), []string{
			"| real | 859 | 0.50 ms (p95 1.00) | — | 0.90 ms (p95 1.50) | 1.8× |",
			"| synth | 10,000 | 2.00 ms (p95 3.00) | 5.00 ms (p95 7.00) | — | 2.5× | 40.0 / 90.0 / — ms |"}},
		{"build", r.BuildTable(), []string{
			"| real | 859 | 1.5 | 0.0 | 0 | 0 | 0 | 4.0 | 4,656 | — |",
			"| synth | 10,000 | 20.0 | 3.0 | 200 | 150,000 | 40,000 | 11.0 | 1,100 | 15.0 |"}},
		{"sections", r.SectionTable(), []string{"| `STRS` | 8,000,000 | 72.7% | 800.0 |"}},
		{"push", r.PushTable(), []string{"| 1e-05 | 7,708 | 2.30 | 1.90e-02 | 1.90e-02 | 100% | 100.0% |"}},
		{"semantic", r.SemanticTable(), []string{"| 100,000 | 4,000 | 98.0% | 99.0% | 10.00 | 2.00 |"}},
		{"update", r.UpdateTable(), []string{
			"| skills | runs | full build s (range) | update s (range) | update ÷ full | peak RSS MB: full / update | probes: full / update (reused) | state MB | artifact MB |\n",
			"| 10,000 | 2,000 + 20 | 31.2 (29.5–33.0) | 2.50 (2.25–2.62) | 0.080 (12.5× faster) | 262 / 181 | 24,000 / 150 (23,850) | 123.5 | 11.1 |\n",
			"| 1,000 | 200 + 2 | 0.0 | 0.00 | — | 90 / 0 | 0 / 0 (0) | 0.0 | 4.4 |\n"}},
		{"terminal", r.Terminal(), []string{"Incremental update\n| skills | runs |"}},
		{"wasm", r.WasmLine(), []string{"<!-- size:module-raw -->2,400,000<!-- /size --> bytes raw, <!-- size:module-gzip -->700,000<!-- /size --> gzip (level 9)."}},
		{"summary", r.Summary("benchmarks.md"), []string{"Generated by `make bench` from [benchmarks.md](benchmarks.md)", "| synth | 10,000 |"}},
		{"wasm against native", r.WasmTable(), []string{
			"| real | 859 | 500 µs (p95 1.00 ms) | — | 900 µs (p95 1.50 ms) · 1.8× | — | — | — |",
			"| synth | 10,000 | 2.00 ms (p95 3.00 ms) | 5.00 ms (p95 7.00 ms) · 2.5× | — | 250 µs (p95 500 µs) | 1.00 ms (p95 1.20 s) · 4.0× | — |"}},
		{"peers", r.PeerTable(), []string{
			"| real 859 | caskg `graph` | 30.5 ms (compile 12.0 ms) | 746 µs (p95 1.50 ms) | 0.868 / 0.724 | 217 µs (p95 400 µs) | 0.595 / 0.437 | 2.1 + WASM 10 | 696 (2,339) |",
			"| synth 10,000 | Orama 3.1.18 | 2.50 s | 9.00 s (p95 12.00 s), 7 queries | 0.500 / 0.250 (7 of 87 tasks) | 95.0 ms (p95 130 ms) | 0.200 / 0.100 | 300.0 | 56 (222) |"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%s table lacks %q:\n%s", tc.name, w, tc.got)
			}
		}
	}
	// Rows are ordered by size whatever order they were measured in.
	if q := r.QueryTable(); strings.Index(q, "| real |") > strings.Index(q, "| synth |") {
		t.Errorf("rows not ordered by size:\n%s", q)
	}
	if q := r.PeerTable(); strings.Index(q, "| real 859 |") > strings.Index(q, "| synth 10,000 |") {
		t.Errorf("peer rows not ordered by size:\n%s", q)
	}
}

func TestDur(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{{0.0004, "0 µs"}, {0.0771, "77 µs"}, {0.9994, "999 µs"}, {1, "1.00 ms"}, {16.913, "16.9 ms"}, {511.1, "511 ms"},
		{4512, "4.51 s"}} {
		if got := dur(tc.ms); got != tc.want {
			t.Errorf("dur(%g) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
