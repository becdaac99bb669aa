package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/eval"
)

// writeRuns writes the gold sets of tasks as a trace file.
func writeRuns(t *testing.T, path string, tasks []eval.Task) {
	t.Helper()
	var b bytes.Buffer
	for _, tk := range tasks {
		line, _ := json.Marshal(map[string]any{"id": tk.ID, "skills": tk.Gold})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUpdate checks that caskg update makes, from an artifact built with --state and new runs,
// the artifact caskg build makes from the library and all the runs, with and without the
// library named, and writes the build state beside it.
func TestUpdate(t *testing.T) {
	dir := t.TempDir()
	tasks, err := eval.ReadTasks(sampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	writeRuns(t, p("old.jsonl"), tasks[:15])
	writeRuns(t, p("new.jsonl"), tasks[15:])
	writeRuns(t, p("all.jsonl"), tasks)
	mustRun(t, "build", sampleLib, "--traces", p("old.jsonl"), "--state", "-o", p("old.skg"), "--quiet")
	mustRun(t, "build", sampleLib, "--traces", p("all.jsonl"), "-o", p("full.skg"), "--quiet")
	if _, err := os.Stat(p("full.skg.state")); err == nil {
		t.Errorf("build without --state wrote a build state")
	}
	want, err := os.ReadFile(p("full.skg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"from the state's library", []string{"update", p("old.skg"), "--traces", p("new.jsonl"), "-o", p("a.skg"), "--quiet"}},
		{"library given", []string{"update", p("old.skg"), sampleLib, "--traces", p("new.jsonl"), "-o", p("b.skg"), "--quiet"}},
	} {
		r := mustRun(t, tc.args...)
		out := tc.args[len(tc.args)-2]
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: update's artifact differs from the full build's", tc.name)
		}
		if !strings.Contains(r.stdout, "update    incremental: 15 runs") {
			t.Errorf("%s: stdout %q does not say what the update reused", tc.name, r.stdout)
		}
		if _, err := os.Stat(out + ".state"); err != nil {
			t.Errorf("%s: no build state beside the new artifact: %v", tc.name, err)
		}
	}
	// A second update starts from the first one's state; the runs it already has are left out.
	r := mustRun(t, "update", p("a.skg"), "--traces", p("all.jsonl"), "-o", p("c.skg"), "--json")
	var sum struct {
		Update struct {
			Mode       string `json:"mode"`
			NewTraces  int    `json:"new_traces"`
			Duplicates int    `json:"duplicate_traces"`
		} `json:"update"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if sum.Update.Mode != "incremental" || sum.Update.NewTraces != 0 || sum.Update.Duplicates != len(tasks) {
		t.Errorf("replayed runs: %+v, want all %d left out", sum.Update, len(tasks))
	}
	if got, _ := os.ReadFile(p("c.skg")); !bytes.Equal(got, want) {
		t.Errorf("update by runs already in the artifact changed it")
	}
}

// TestUpdateErrors checks the usage errors and the refusals of caskg update.
func TestUpdateErrors(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	tasks, err := eval.ReadTasks(sampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	writeRuns(t, p("runs.jsonl"), tasks[:5])
	mustRun(t, "build", sampleLib, "--state", "-o", p("old.skg"), "--quiet")
	mustRun(t, "build", sampleLib, "-o", p("bare.skg"), "--quiet")
	mustRun(t, "build", sampleLib, "--cap", "8", "--state", "-o", p("other.skg"), "--quiet")
	checkFails(t, []failCase{
		{"no artifact", []string{"update", "-o", p("x.skg")}, 2, "no OLD.skg"},
		{"no output", []string{"update", p("old.skg"), "--traces", p("runs.jsonl")}, 2, "-o NEW.skg is required"},
		{"nothing new", []string{"update", p("old.skg"), "-o", p("x.skg")}, 2, "nothing to update"},
		{"no state", []string{"update", p("bare.skg"), "--traces", p("runs.jsonl"), "-o", p("x.skg")}, 1, "bare.skg.state: no build state"},
		{"another artifact's state", []string{"update", p("old.skg"), "--state", p("other.skg.state"), "--traces", p("runs.jsonl"), "-o", p("x.skg")}, 1, "belongs to another artifact"},
		{"not a state", []string{"update", p("old.skg"), "--state", p("runs.jsonl"), "--traces", p("runs.jsonl"), "-o", p("x.skg")}, 1, "runs.jsonl: builder: not a caskg build state"},
	})
	if _, err := os.Stat(p("x.skg")); err == nil {
		t.Errorf("a refused update wrote its output")
	}
}

// TestUpdateHeldReports checks that update and build --traces say how many reported runs the
// agreement rule held back: the README's two feedback reports from one reporter teach nothing,
// and the summary says so instead of nothing.
func TestUpdateHeldReports(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	report := `{"id": "fb-%d", "skills": ["pick-up-object", "heat-object-in-microwave"], "outcome": "success", "source": "%s"}` + "\n"
	one := fmt.Sprintf(report, 1, "loopback") + fmt.Sprintf(report, 2, "loopback")
	if err := os.WriteFile(p("one.jsonl"), []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	two := one + fmt.Sprintf(report, 3, "token:bob")
	if err := os.WriteFile(p("two.jsonl"), []byte(two), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "build", sampleLib, "--state", "-o", p("a.skg"), "--quiet")
	const held = "reports   2 reported runs from 1 reporter held back: a skill, pair or word counts once 2 reporters agree\n"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"update, one reporter", []string{"update", p("a.skg"), "--traces", p("one.jsonl"), "-o", p("b.skg")}, held},
		{"build, one reporter", []string{"build", sampleLib, "--traces", p("one.jsonl"), "-o", p("c.skg")}, held},
		{"build, two reporters", []string{"build", sampleLib, "--traces", p("two.jsonl"), "-o", p("d.skg")},
			"reports   3 reported runs from 2 reporters, all counted\n"},
	} {
		if r := mustRun(t, c.args...); !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s: output lacks %q:\n%s", c.name, c.want, r.stdout)
		}
	}
	r := mustRun(t, "build", sampleLib, "--traces", p("one.jsonl"), "-o", p("e.skg"), "--json")
	var rep struct {
		Reported map[string]int `json:"reported"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"runs": 2, "reporters": 1, "held_runs": 2, "held_reporters": 1}
	if !maps.Equal(rep.Reported, want) {
		t.Errorf("--json reported = %v, want %v", rep.Reported, want)
	}
}
