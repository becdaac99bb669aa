package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
)

func TestTaskFlagsRefuseBadValues(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"build 0", []string{"build", sampleLib, "-o", "x.skg", "--task-min-runs", "0"}, "--task-min-runs 0: must be at least 1"},
		{"build negative", []string{"build", sampleLib, "-o", "x.skg", "--task-min-runs=-2"}, "--task-min-runs -2: must be at least 1"},
		{"build not a number", []string{"build", sampleLib, "-o", "x.skg", "--task-min-runs", "many"}, "task-min-runs"},
		{"update 0", []string{"update", "old.skg", "--traces", "t.jsonl", "-o", "x.skg", "--task-min-runs", "0"}, "--task-min-runs 0: must be at least 1"},
		{"gateway 0", []string{"gateway", "--config", "c.json", "--state-dir", "d", "--task-min-runs", "0"}, "--task-min-runs 0: must be at least 1"},
		{"no-task-text with a value", []string{"build", sampleLib, "-o", "x.skg", "--no-task-text=maybe"}, "no-task-text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// TestNoTaskText builds with runs that carry tasks: by default the artifact has a memory of
// past tasks and the build state the task texts; with --no-task-text neither.
func TestNoTaskText(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	tasks, err := os.ReadFile(sampleTasks)
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(tasks)), "\n")[:6] {
		var task struct{ Gold []string }
		if err := json.Unmarshal([]byte(line), &task); err != nil {
			t.Fatal(err)
		}
		sets = append(sets, task.Gold)
	}
	for v, variant := range []string{"morning", "evening", "weekly", "daily", "urgent"} {
		for c, code := range []string{"zephyr", "quokka", "marmot", "tundra", "nimbus", "sorrel"} {
			line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(code, v), "skills": sets[c], "task": "the " + code + " routine, " + variant})
			b.Write(append(line, '\n'))
		}
	}
	runs := filepath.Join(dir, "runs.jsonl")
	if err := os.WriteFile(runs, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		flag []string
		want bool
	}{{"default", nil, true}, {"no-task-text", []string{"--no-task-text"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".skg")
			r := mustRun(t, append([]string{"build", sampleLib, "-o", out, "--traces", runs, "--state"}, tc.flag...)...)
			// The summary says what the memory kept and its weight, and nothing without it.
			if got := strings.Contains(r.stdout, "\nmemory    30 runs with a task in 6 tool sets;"); got != tc.want {
				t.Errorf("summary has the memory line: %v, want %v:\n%s", got, tc.want, r.stdout)
			}
			g, err := loadArtifact(out)
			if err != nil {
				t.Fatal(err)
			}
			if g.HasMemory() != tc.want {
				t.Errorf("memory %v, want %v", g.HasMemory(), tc.want)
			}
			raw, err := os.ReadFile(out + builder.StateSuffix)
			if err != nil {
				t.Fatal(err)
			}
			st, err := builder.DecodeState(raw)
			if err != nil {
				t.Fatal(err)
			}
			learned, err := st.Runs()
			if err != nil {
				t.Fatal(err)
			}
			if kept := learned[0].Task != ""; kept != tc.want {
				t.Errorf("the build state keeps task %q", learned[0].Task)
			}
			// A change of the memory's options alone keeps the update incremental.
			r = mustRun(t, "update", out, "--traces", runs, "-o", filepath.Join(dir, tc.name+"-2.skg"), "--task-min-runs", "4", "--quiet")
			if !strings.Contains(r.stdout, "update    incremental") {
				t.Errorf("update:\n%s", r.stdout)
			}
		})
	}
}
