package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
)

func TestRecallEvidence(t *testing.T) {
	tests := []struct {
		name string
		in   engine.Recall
		want string
	}{
		{"one run", engine.Recall{Runs: 1, Terms: []string{"stock"}}, "recalled: 1 past run (stock)"},
		{"runs and terms", engine.Recall{Runs: 14, Terms: []string{"stock", "new"}}, "recalled: 14 past runs (stock, new)"},
		{"no terms", engine.Recall{Runs: 3}, "recalled: 3 past runs"},
	}
	for _, tt := range tests {
		if got := tt.in.Evidence(); got != tt.want {
			t.Errorf("%s: Evidence() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRenderRecalled holds the rendered bundle to the memory's evidence: each result the memory
// raised has its recalled line under it, and the header explains the line; with NoMemory
// neither appears.
func TestRenderRecalled(t *testing.T) {
	g := testlib.Decode(t, testlib.SampleMemory(t))
	e := engine.New(g)
	for _, noMemory := range []bool{false, true} {
		// With the memory, results it raised are recalled, and say so; without it none is.
		name, recalled := "memory", !noMemory
		if noMemory {
			name = "no_memory"
		}
		resp, err := e.Query(engine.Request{Query: testlib.MemoryQuery, Render: true, NoMemory: noMemory})
		if err != nil {
			t.Fatal(err)
		}
		raised := 0
		for i, r := range resp.Results {
			if r.Recalled == nil {
				continue
			}
			raised++
			// The result's section runs from its heading to the next one.
			sec := section(resp.Rendered, i+1)
			if line := "\n- " + r.Recalled.Evidence() + "\n"; !strings.Contains(sec, line) {
				t.Errorf("%s: %s's section lacks %q:\n%s", name, r.Name, line, sec)
			}
		}
		if got := raised > 0; got != recalled {
			t.Errorf("%s: %d results recalled, want some: %v", name, raised, recalled)
		}
		for _, s := range []string{"Recalled: past runs", "- recalled: "} {
			if got := strings.Contains(resp.Rendered, s); got != recalled {
				t.Errorf("%s: rendered text has %q: %v, want %v:\n%s", name, s, got, recalled, resp.Rendered)
			}
		}
	}
}

// section is result n's part of a rendered bundle, from "[n] " to the next result's heading.
func section(text string, n int) string {
	head := "\n[" + strconv.Itoa(n) + "] "
	i := strings.Index(text, head)
	if i < 0 {
		return ""
	}
	rest := text[i+len(head):]
	if j := strings.Index(rest, "\n["+strconv.Itoa(n+1)+"] "); j >= 0 {
		rest = rest[:j]
	}
	return head + rest
}
