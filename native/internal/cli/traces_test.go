package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli/tracelog"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/google/go-cmp/cmp"
)

// traceLogs are tracelog's fixtures, one per format.
var traceLogs = []string{"claude-code.jsonl", "openai-chat.jsonl", "openai-responses.json", "mcp.jsonl", "caskg.jsonl"}

func traceLogPaths() []string {
	out := make([]string, len(traceLogs))
	for i, f := range traceLogs {
		out[i] = filepath.Join("tracelog", "testdata", f)
	}
	return out
}

func TestTracesImport(t *testing.T) {
	art := buildSample(t)
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	r := mustRun(t, append(append([]string{"traces", "import"}, traceLogPaths()...), "--artifact", art, "-o", out, "--json")...)
	var rep struct {
		Output string `json:"output"`
		tracelog.Report
	}
	decodeJSON(t, r.stdout, &rep)
	c := &checks{t: t}
	if diff := cmp.Diff([]tracelog.FormatStats{
		{Format: tracelog.ClaudeCode, Files: 1, Traces: 2, Calls: 9, Exact: 4, Normalized: 3, Unmatched: 2},
		{Format: tracelog.OpenAIChat, Files: 1, Traces: 3, Calls: 6, Exact: 2, Normalized: 2, Unmatched: 2},
		{Format: tracelog.OpenAIResponses, Files: 1, Traces: 2, Calls: 4, Exact: 2, Normalized: 2, Unmatched: 0},
		{Format: tracelog.MCP, Files: 1, Traces: 2, Calls: 4, Exact: 1, Normalized: 2, Unmatched: 1},
		{Format: tracelog.Caskg, Files: 1, Traces: 2, Calls: 6, Exact: 4, Normalized: 1, Unmatched: 1},
	}, rep.Formats); diff != "" {
		c.errorf("formats (-want +got):\n%s", diff)
	}
	if rep.Output != out || rep.Written != 10 || rep.Empty != 1 || rep.Collapsed != 2 {
		c.errorf("output %q, %d written, %d empty, %d collapsed; want %q, 10, 1, 2", rep.Output, rep.Written, rep.Empty, rep.Collapsed, out)
	}
	if len(rep.Unmatched) == 0 || rep.Unmatched[0] != (tracelog.NameCount{Name: "get_weather", Count: 2}) {
		c.errorf("top unmatched %v, want get_weather (2) first", rep.Unmatched)
	}
	c.done()

	traces, err := builder.ReadTraces(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 10 || !cmp.Equal(traces[0].Skills, []string{"go-to-location", "pick-up-object", "heat-object-in-microwave", "put-down-object"}) {
		t.Errorf("read back %d traces, first %v", len(traces), traces[0])
	}
	tmp := t.TempDir()
	buildReport := filepath.Join(tmp, "build.json")
	mustRun(t, "build", sampleLib, "--traces", out, "-o", filepath.Join(tmp, "traced.skg"), "--report", buildReport)
	data, err := os.ReadFile(buildReport)
	if err != nil {
		t.Fatal(err)
	}
	var br builder.Report
	decodeJSON(t, string(data), &br)
	if br.TraceSkipped != 0 || len(br.TracePrior) != 2 {
		t.Errorf("build --traces: %d trace names unknown, prior %v; want 0 and a fitted prior", br.TraceSkipped, br.TracePrior)
	}

	text := mustRun(t, append(append([]string{"traces", "import"}, traceLogPaths()...), "--artifact", art, "-o", out)...)
	fixture.Contains(t, "text report", text.stdout, []string{
		"claude-code", "openai-responses", "wrote 10 traces to " + out,
		"mcp__kitchen__heat_object_in_microwave", "→ heat-object-in-microwave",
		"unmatched (the library may be missing these):", "get_weather",
	}, nil)
}

func TestTracesImportErrors(t *testing.T) {
	art := buildSample(t)
	dir := t.TempDir()
	bad := fixture.WriteFile(t, dir, "bad.jsonl", "{\"jsonrpc\":\"2.0\"}\nnot json\n")
	none := fixture.WriteFile(t, dir, "none.jsonl", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"Read"}}`)
	out := filepath.Join(dir, "out.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"traces"}, 2, "want a subcommand: import"},
		{"no logs", []string{"traces", "import", "--artifact", art, "-o", out}, 2, "want at least one LOG"},
		{"no artifact", []string{"traces", "import", bad, "-o", out}, 2, "--artifact is required"},
		{"no output", []string{"traces", "import", bad, "--artifact", art}, 2, "-o is required"},
		{"bad line, nothing else", []string{"traces", "import", bad, "--artifact", art, "-o", out}, 1, bad + ":2: not JSON"},
		{"bad line --strict", []string{"traces", "import", bad, "--artifact", art, "-o", out, "--strict"}, 1, bad + ":2: not JSON: invalid character 'o' in literal null (expecting 'u') (--strict; 1 bad records in " + bad + ")"},
		{"nothing matched", []string{"traces", "import", none, "--artifact", art, "-o", out}, 1, "no call matched a skill"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed import wrote %s (%v)", out, err)
	}
}

// TestTracesImportForgives checks that bad records and unreadable files are reported with file
// and line and left out while the rest is imported, and that --strict refuses them instead.
func TestTracesImportForgives(t *testing.T) {
	art := buildSample(t)
	dir := t.TempDir()
	mixed := fixture.WriteFile(t, dir, "mixed.jsonl", `{"id":"a","skills":["go-to-location","pick-up-object"]}
{"id":"b","skills":
{"id":"c","skills":["find-object",3]}
{"id":"d","skills":["turn-on-lamp","examine-object-under-lamp"]}
`)
	junk := fixture.WriteFile(t, dir, "junk.log", "\x00\x01binary\n")
	out := filepath.Join(dir, "out.jsonl")
	r := run(t, "traces", "import", mixed, junk, "--artifact", art, "-o", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	fixture.Contains(t, "stderr", r.stderr, []string{
		mixed + ":2: not JSON", mixed + ":3: field \"skills\": entry 2 is not a name", junk + ": no JSON record",
	}, nil)
	fixture.Contains(t, "stdout", r.stdout, []string{"wrote 2 traces", "2 bad records left out"}, nil)
	traces, err := builder.ReadTraces(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 2 || traces[0].ID != "a" || traces[1].ID != "d" {
		t.Errorf("imported %+v, want a and d", traces)
	}

	var rep struct {
		Unreadable []string `json:"unreadable_files"`
		tracelog.Report
	}
	decodeJSON(t, mustRun(t, "traces", "import", mixed, junk, "--artifact", art, "-o", out, "--json").stdout, &rep)
	if rep.BadRecords != 2 || len(rep.Problems) != 2 || rep.Problems[0].Line != 2 || len(rep.Unreadable) != 1 {
		t.Errorf("json report: %d bad records, problems %+v, unreadable %v", rep.BadRecords, rep.Problems, rep.Unreadable)
	}

	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	for _, logs := range [][]string{{mixed}, {junk}} {
		r := run(t, append(append([]string{"traces", "import"}, logs...), "--artifact", art, "-o", out, "--strict")...)
		if r.code != 1 || !strings.Contains(r.stderr, "--strict") {
			t.Errorf("--strict %v: exit %d, stderr %q", logs, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused import wrote %s (%v)", out, err)
	}
}
