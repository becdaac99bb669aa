package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

// TestInspectColdStart holds inspect to saying whether a graph has learned anything from use,
// and how it learns when it has not.
func TestInspectColdStart(t *testing.T) {
	dir := t.TempDir()
	traces := fixture.WriteFile(t, dir, "runs.jsonl", `{"id":"t1","skills":["go-to-location","pick-up-object"]}`+"\n"+
		`{"id":"t2","skills":["go-to-location","pick-up-object"]}`+"\n")
	learned := filepath.Join(dir, "learned.skg")
	mustRun(t, "build", sampleLib, "--traces", traces, "-o", learned)
	tests := []struct {
		name     string
		art      string
		cold     bool
		runs     int
		textHas  []string
		textLack []string
	}{
		{"text only", buildSample(t), true, 0,
			[]string{"learned nothing from use yet", "caskg gateway", "caskg traces import", "caskg update", "feedback"}, nil},
		{"built with runs", learned, false, 2, []string{"learned from 2 runs"}, []string{"nothing from use", "caskg gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in struct{ Learning engine.Learning }
			decodeJSON(t, mustRun(t, "inspect", tt.art, "--json").stdout, &in)
			if in.Learning.Cold != tt.cold || in.Learning.Runs != tt.runs || in.Learning.Live == 0 || in.Learning.Note == "" {
				t.Errorf("inspect --json learning %+v, want cold %v, %d runs, some live edges and a note", in.Learning, tt.cold, tt.runs)
			}
			text := mustRun(t, "inspect", tt.art).stdout
			line := ""
			for l := range strings.Lines(text) {
				if strings.HasPrefix(l, "learning ") {
					line = l
				}
			}
			fixture.Contains(t, "inspect's learning line", line, tt.textHas, tt.textLack)
		})
	}
}
