package cli

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
)

// TestQueryRecalled holds every form of caskg query's output to the memory's evidence: a result
// the memory raised says so (text, --render, --json), and nothing says so with --no-memory.
func TestQueryRecalled(t *testing.T) {
	art := testlib.SampleMemoryFile(t)
	q := testlib.MemoryQuery
	tests := []struct {
		name string
		args []string
		want bool // the recalled evidence appears
		re   string
	}{
		{"text", []string{"query", art, q}, true, `(?m)^    ↳ recalled: \d+ past runs? \(.*zorblax.*\)$`},
		{"text no-memory", []string{"query", art, q, "--no-memory"}, false, `recalled`},
		{"render", []string{"query", art, q, "--render"}, true, `(?m)^- recalled: \d+ past runs? \(.*zorblax.*\)$`},
		{"render no-memory", []string{"query", art, q, "--render", "--no-memory"}, false, `recalled`},
		{"json", []string{"query", art, q, "--json"}, true, `"recalled":\{"runs":\d+,"terms":\[[^]]*"zorblax"`},
		{"json no-memory", []string{"query", art, q, "--json", "--no-memory"}, false, `recalled`},
	}
	for _, tt := range tests {
		out := mustRun(t, tt.args...).stdout
		if got := regexp.MustCompile(tt.re).MatchString(out); got != tt.want {
			t.Errorf("%s: output matches %q: %v, want %v:\n%s", tt.name, tt.re, got, tt.want, out)
		}
	}
	// --json: the skills the past runs used carry the evidence.
	var resp struct {
		Results []struct {
			Name     string `json:"name"`
			Recalled *struct {
				Runs  int      `json:"runs"`
				Terms []string `json:"terms"`
			} `json:"recalled"`
		} `json:"results"`
	}
	decodeJSON(t, mustRun(t, "query", art, q, "--json").stdout, &resp)
	recalled := map[string]bool{}
	for _, r := range resp.Results {
		recalled[r.Name] = r.Recalled != nil && r.Recalled.Runs > 0
	}
	for _, s := range testlib.MemorySkills {
		if !recalled[s] {
			t.Errorf("--json: %s has no recalled evidence: %+v", s, resp.Results)
		}
	}
}

// TestInspectMemory holds inspect to what the artifact says of its memory of past tasks: the
// bytes of its sections, the build parameters' counts and its weight, and with --memory-terms
// the kept terms; an artifact without one says nothing of it.
func TestInspectMemory(t *testing.T) {
	art := testlib.SampleMemoryFile(t)
	g := testlib.Decode(t, testlib.SampleMemory(t))
	var size int
	for _, s := range g.Sections() {
		if graphs.IsMemorySection(s.Tag) {
			size += s.Length
		}
	}
	var params struct {
		Memory memoryParams `json:"memory"`
	}
	if err := json.Unmarshal(g.Params(), &params); err != nil {
		t.Fatal(err)
	}
	p := params.Memory
	var terms []string
	for i := range g.NumMemoryTerms() {
		terms = append(terms, g.MemoryTerm(i))
	}

	var in struct {
		Memory *memoryInfo `json:"memory"`
	}
	decodeJSON(t, mustRun(t, "inspect", art, "--json").stdout, &in)
	want := memoryInfo{Bytes: size, memoryParams: p}
	if in.Memory == nil || in.Memory.Bytes != want.Bytes || in.Memory.memoryParams != want.memoryParams || in.Memory.Terms != nil {
		t.Errorf("inspect --json memory %+v, want %+v", in.Memory, want)
	}
	if p.Weight == 0 || p.Runs == 0 || p.TermsKept != len(terms) {
		t.Errorf("params memory %+v: want a weight, runs and %d terms kept", p, len(terms))
	}
	decodeJSON(t, mustRun(t, "inspect", art, "--json", "--memory-terms").stdout, &in)
	if in.Memory == nil || strings.Join(in.Memory.Terms, " ") != strings.Join(terms, " ") {
		t.Errorf("inspect --json --memory-terms: terms %v, want %v", in.Memory, terms)
	}

	tests := []struct {
		name string
		args []string
		has  []string
		lack []string
	}{
		{"text", []string{"inspect", art},
			[]string{"memory", strconv.Itoa(p.Runs) + " runs", strconv.Itoa(p.ToolSets) + " tool sets", "weight " + strconv.FormatFloat(p.Weight, 'g', -1, 64), strconv.Itoa(size) + " bytes",
				strconv.Itoa(p.TermsKept) + " kept", strconv.Itoa(p.TermsDropped) + " dropped"},
			[]string{"zorblax"}},
		{"terms", []string{"inspect", art, "--memory-terms"}, []string{"memory terms", strings.Join(terms, ", ")}, nil},
		{"no memory", []string{"inspect", buildSample(t)}, nil, []string{"memory"}},
	}
	for _, tt := range tests {
		out := mustRun(t, tt.args...).stdout
		for _, s := range tt.has {
			if !strings.Contains(out, s) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, s, out)
			}
		}
		for _, s := range tt.lack {
			if strings.Contains(out, s) {
				t.Errorf("%s: output has %q:\n%s", tt.name, s, out)
			}
		}
	}
}
