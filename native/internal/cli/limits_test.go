package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/wasm/service"
)

// TestQueryLimits holds caskg query to the limits the HTTP API and the MCP server share
// (wasm/service): -k, --seeds, the task text and --batch.
func TestQueryLimits(t *testing.T) {
	art := buildSample(t)
	dir := t.TempDir()
	var many strings.Builder
	for i := range service.MaxBatch + 1 {
		many.WriteString(`{"id": ` + strconv.Itoa(i) + `, "query": "heat an egg"}` + "\n")
	}
	manyTasks := filepath.Join(dir, "many.jsonl")
	if err := os.WriteFile(manyTasks, []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", service.MaxQueryBytes+1)
	tests := []struct {
		name string
		args []string
		code int
		want string // a part of stderr, or of stdout when code is 0
	}{
		{"k at the limit", []string{"query", art, "-k", "100", "--json", "heat an egg"}, 0, `{"results":[`},
		{"k over the limit", []string{"query", art, "-k", "101", "heat an egg"}, 2, "caskg query: flag -k: 101 is outside [1, 100]"},
		{"k negative", []string{"query", art, "-k", "-1", "heat an egg"}, 2, "flag -k: -1 is outside [1, 100]"},
		{"k the engine's bound", []string{"query", art, "-k", "1000", "--batch", manyTasks}, 2, "flag -k: 1000 is outside [1, 100]"},
		{"seeds at the limit", []string{"query", art, "--seeds", "100", "--json", "heat an egg"}, 0, `{"results":[`},
		{"seeds over the limit", []string{"query", art, "--seeds", "101", "heat an egg"}, 2, "flag -seeds: 101 is outside [1, 100]"},
		{"text at the limit", []string{"query", art, "--json", long[1:]}, 0, `{"results":[`},
		{"text over the limit", []string{"query", art, long}, 1, "caskg query: the task text is 8193 bytes, at most 8192"},
		{"batch over the limit", []string{"query", art, "--batch", manyTasks}, 1, "many.jsonl: more than 10000 tasks, at most 10000 in one run; split the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			out := r.stderr
			if tt.code == 0 {
				out = r.stdout
			}
			if r.code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, stdout %.200q, stderr %q; want exit %d and %q", r.code, r.stdout, r.stderr, tt.code, tt.want)
			}
		})
	}
}

// A task of a batch over the query limit gets its error line, the others their answers, and
// the run fails at the end.
func TestBatchQueryLimit(t *testing.T) {
	art := buildSample(t)
	p := filepath.Join(t.TempDir(), "tasks.jsonl")
	long := strings.Repeat("egg ", service.MaxQueryBytes/4+1)
	tasks := `{"id": "ok", "query": "heat an egg"}` + "\n" + `{"id": "long", "query": "` + long + `"}` + "\n"
	if err := os.WriteFile(p, []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "query", art, "--batch", p, "--json")
	if wantErr := `{"error":"caskg query: --batch ` + p + `: 1 of 2 tasks failed"}` + "\n"; r.code != 1 || r.stderr != wantErr {
		t.Errorf("exit %d, stderr %q; want 1, %q", r.code, r.stderr, wantErr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), r.stdout)
	}
	var ok, bad batchLine
	if json.Unmarshal([]byte(lines[0]), &ok) != nil || len(ok.Results) == 0 || ok.Error != "" {
		t.Errorf("line 1: %s", lines[0])
	}
	want := `service: field "query": ` + strconv.Itoa(len(long)) + " bytes, at most 8192"
	if json.Unmarshal([]byte(lines[1]), &bad) != nil || len(bad.Results) != 0 || bad.Error != want || bad.Line != 2 {
		t.Errorf("line 2: %s\nwant the error %q", lines[1], want)
	}
}
