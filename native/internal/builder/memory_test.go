package builder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

// Runs with tasks on the sample library: six tool sets of the sample tasks, each asked five
// times under a code name the library never uses ("the zephyr routine, weekly"), so that only
// the memory of past tasks can answer a code name and calibration gives it a weight above 0.
// Every word of these tasks is shared by at least 5 distinct texts.
var (
	memCodes    = []string{"zephyr", "quokka", "marmot", "tundra", "nimbus", "sorrel"}
	memVariants = []string{"morning", "evening", "weekly", "daily", "urgent"}
)

// memoryRuns are the runs above, the tool sets taken from the first sample tasks.
func memoryRuns(t testing.TB) []Trace {
	t.Helper()
	tasks := tasksAsTraces(t, sampleTasks)
	var runs []Trace
	for v, variant := range memVariants {
		for c, code := range memCodes {
			runs = append(runs, Trace{ID: fmt.Sprintf("m-%s-%d", code, v), Skills: tasks[c].Skills,
				Task: fmt.Sprintf("the %s routine, %s", code, variant)})
		}
	}
	return runs
}

// memBuild builds the sample library with runs and opt's memory options, returning the
// artifact and its graph.
func memBuild(t testing.TB, skills []ingest.Skill, runs []Trace, mod func(*Options)) ([]byte, *graphs.Graph) {
	t.Helper()
	opt := DefaultOptions()
	if mod != nil {
		mod(&opt)
	}
	res, err := Build(context.Background(), Input{Skills: skills, Options: &opt, Runs: runs, Embedder: BuiltinEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	return res.Artifact, fixture.Decode(t, res.Artifact)
}

// memoryOf is g's memory of past tasks with its fusion weight set to 0, nil without one.
func memoryOf(t testing.TB, g *graphs.Graph) *graphs.Memory {
	t.Helper()
	a, err := g.Artifact()
	if err != nil {
		t.Fatal(err)
	}
	if a.Memory != nil {
		a.Memory.Weight = 0
	}
	return a.Memory
}

// memTerms are the terms of g's memory of past tasks.
func memTerms(g *graphs.Graph) []string {
	out := make([]string, g.NumMemoryTerms())
	for i := range out {
		out[i] = g.MemoryTerm(i)
	}
	return out
}

// TestMemoryPrivacy builds with runs whose words recur, and one run that pasted an API key and
// an e-mail address into its task: the artifact holds the recurring words and nothing of the
// key or the address, whatever the tokenizer makes of them. With TaskMinRuns 1 the same key
// does reach the artifact, which shows the check can fail; with NoTaskText no word does.
func TestMemoryPrivacy(t *testing.T) {
	const key, addr = "sk-live-9f8e7d6c5b4a", "jane.doe@example.org"
	skills := loadLib(t, sampleLib)
	runs := memoryRuns(t)
	secret := func(key, addr string) []Trace {
		return append(slices.Clone(runs), Trace{ID: "leak", Skills: runs[0].Skills,
			Task: "the zephyr routine with key " + key + " for " + addr})
	}
	art, g := memBuild(t, skills, secret(key, addr), nil)
	plain, _ := memBuild(t, skills, runs, func(o *Options) { o.NoTaskText = true })
	if !g.HasMemory() {
		t.Fatal("no memory of past tasks: the test tests nothing")
	}
	terms := memTerms(g)
	for _, w := range append(slices.Clone(memCodes), "routine") {
		stem := engine.Tokenize(w)[0]
		if !slices.Contains(terms, stem) || !bytes.Contains(art, []byte(stem)) {
			t.Errorf("shared word %q (term %q) not in the artifact; memory terms %q", w, stem, terms)
		}
	}
	secrets := append([]string{key, addr}, engine.Tokenize(key+" "+addr)...)
	for _, s := range secrets {
		if slices.Contains(terms, s) {
			t.Errorf("%q is a memory term", s)
		}
		// A short token may be a piece of the library's own text ("sk" of "task"): the artifact
		// may hold it only where the artifact without any task does.
		if bytes.Contains(art, []byte(s)) && !bytes.Contains(plain, []byte(s)) {
			t.Errorf("%q is in the artifact's bytes", s)
		}
	}
	// Nothing of the secret in the memory at all: another key and address give the same one.
	// Its fusion weight may differ: calibration asks each held-out run its whole task
	// (engine.FitMemory), and a word of one task that is also a word of the library can move
	// which of the 13 weights wins. The weight is one of those 13 numbers, never the word.
	_, og := memBuild(t, skills, secret("ab-wxyz-1a2b3c4d5e6f", "john.roe@sample.net"), nil)
	if m, om := memoryOf(t, g), memoryOf(t, og); !reflect.DeepEqual(m, om) {
		t.Errorf("the memory depends on the key and address pasted into one task:\n%+v\n%+v", m, om)
	}

	t.Run("task-min-runs 1 keeps it", func(t *testing.T) {
		art, g := memBuild(t, skills, secret(key, addr), func(o *Options) { o.TaskMinRuns = 1 })
		if tok := engine.Tokenize(key); !g.HasMemory() || !slices.Contains(memTerms(g), tok[len(tok)-1]) || !bytes.Contains(art, []byte(tok[len(tok)-1])) {
			t.Errorf("TaskMinRuns 1 left %q out: the privacy check above could not fail", tok[len(tok)-1])
		}
	})
	t.Run("no-task-text", func(t *testing.T) {
		art, g := memBuild(t, skills, secret(key, addr), func(o *Options) { o.NoTaskText = true })
		if g.HasMemory() {
			t.Error("NoTaskText: the artifact has a memory of past tasks")
		}
		for _, s := range g.Sections() {
			if strings.HasPrefix(s.Tag, "M") {
				t.Errorf("NoTaskText: section %q", s.Tag)
			}
		}
		for _, w := range memCodes {
			if bytes.Contains(art, []byte(w)) {
				t.Errorf("NoTaskText: %q in the artifact", w)
			}
		}
		if maj, min := g.Version(); maj != graphs.Major || min != graphs.Minor {
			t.Errorf("NoTaskText: format %d.%d, want %d.%d", maj, min, graphs.Major, graphs.Minor)
		}
	})
}

// TestMemoryPoisoning has one reporter send 50 reports of the same task and tool set: the
// artifact answers that task as it did without them, and its memory is the same. Two reporters
// that agree do count.
func TestMemoryPoisoning(t *testing.T) {
	const task = "read a text file"
	skills := loadLib(t, sampleLib)
	// Two trusted runs say "text file": one short of TaskMinRuns, so the words are kept exactly
	// when a reporter's runs are admitted beside them.
	base := append(memoryRuns(t),
		Trace{ID: "own-1", Skills: []string{"find-object", "examine-object-under-lamp"}, Task: "examine the text file under the lamp"},
		Trace{ID: "own-2", Skills: []string{"find-lamp", "turn-on-lamp"}, Task: "find the lamp to see the text file"})
	poison := []string{"read-scale-mass", "fill-watering-can"}
	reports := func(source string) []Trace {
		var out []Trace
		for i := range 50 {
			out = append(out, Trace{ID: fmt.Sprintf("fb-%s-%d", source, i), Skills: poison, Task: task, Source: source})
		}
		return out
	}
	query := func(g *graphs.Graph) []engine.Result {
		resp, err := engine.New(g).Query(engine.Request{Query: task, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Results
	}
	_, want := memBuild(t, skills, base, nil)
	if !want.HasMemory() {
		t.Fatal("no memory of past tasks: the test tests nothing")
	}
	_, got := memBuild(t, skills, append(slices.Clone(base), reports("token:mallory")...), nil)
	if w, g := query(want), query(got); !reflect.DeepEqual(w, g) {
		t.Errorf("one reporter's 50 reports changed the answer to %q:\n got  %v\n want %v", task, g, w)
	}
	if !reflect.DeepEqual(memoryOf(t, got), memoryOf(t, want)) {
		t.Errorf("one reporter's reports reached the memory: terms %q, want %q", memTerms(got), memTerms(want))
	}
	if _, _, _, w, _, _ := want.MemoryParams(); true {
		if _, _, _, g, _, _ := got.MemoryParams(); g != w {
			t.Errorf("one reporter's reports moved the memory's weight from %v to %v", w, g)
		}
	}

	_, agreed := memBuild(t, skills, append(append(slices.Clone(base), reports("token:mallory")...), reports("token:trent")...), nil)
	m := memoryOf(t, agreed)
	if m == nil {
		t.Fatal("two reporters: no memory")
	}
	for _, w := range []string{"text", "file"} { // "read" is theirs alone: 2 runs, below 3
		if !slices.Contains(m.Terms, engine.Tokenize(w)[0]) {
			t.Errorf("two agreeing reporters: %q not a memory term (%q)", w, m.Terms)
		}
	}
	var ids []uint32 // skills are in name order, so ascending
	for i := range agreed.NumSkills() {
		if slices.Contains(poison, agreed.Name(i)) {
			ids = append(ids, uint32(i))
		}
	}
	found := false
	for _, d := range m.Docs {
		found = found || (slices.Equal(d.Skills, ids) && d.Runs == 2)
	}
	if !found {
		t.Errorf("two agreeing reporters: no memory document of %v with 2 runs (one per reporter): %+v", poison, m.Docs)
	}
}

// TestMemoryUpdateMatchesBuild checks that an update with new runs that carry tasks gives the
// bytes of a full build on all the runs, through the build state file, and that a change of
// the memory's options alone keeps the update incremental.
func TestMemoryUpdateMatchesBuild(t *testing.T) {
	skills := loadLib(t, sampleLib)
	runs := memoryRuns(t)
	half := len(runs) / 2
	failed := slices.Clone(runs[half:])
	for k := range failed {
		failed[k].ID += "-failed"
		failed[k].Failed = k%4 == 0
	}
	tests := []struct {
		name     string
		old, new []Trace
		mod      func(*Options) // the update's options and the full build's
	}{
		{"half the runs, then the rest", runs[:half], runs[half:], nil},
		{"no tasks, then tasks", stripTasks(runs[:half]), runs[half:], nil},
		{"failed runs", runs, failed, nil},
		{"task-min-runs changed", runs[:half], runs[half:], func(o *Options) { o.TaskMinRuns = 4 }},
		{"no-task-text given", runs[:half], runs[half:], func(o *Options) { o.NoTaskText = true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, st := fullBuild(t, skills, tc.old)
			st = reread(t, st)
			runs, err := st.Runs()
			if err != nil {
				t.Fatal(err)
			}
			for i, tr := range runs {
				if tr.Task != tc.old[i].Task {
					t.Fatalf("run %d's task %q after the state file, want %q", i, tr.Task, tc.old[i].Task)
				}
			}
			opt := st.Options()
			full := DefaultOptions()
			if tc.mod != nil {
				tc.mod(&opt)
				tc.mod(&full)
			}
			got, gotState, rep, err := updateOf(context.Background(), Input{Old: old, Previous: st, Runs: tc.new}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Update.Mode != "incremental" {
				t.Errorf("update %+v, want incremental", rep.Update)
			}
			all := append(slices.Clone(tc.old), tc.new...)
			res, err := Build(context.Background(), Input{Skills: skills, Options: &full, Runs: all, Embedder: BuiltinEmbedder, State: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, res.Artifact) {
				t.Fatalf("update gave %x (%d bytes), the full build %x (%d bytes)", sha256.Sum256(got), len(got), sha256.Sum256(res.Artifact), len(res.Artifact))
			}
			g := fixture.Decode(t, got)
			if g.HasMemory() == full.NoTaskText {
				t.Errorf("memory %v with NoTaskText %v", g.HasMemory(), full.NoTaskText)
			}
			if d := stateDiff(gotState, res.State); d != "" {
				t.Errorf("the update's build state differs from the full build's: %s", d)
			}
			learned, err := gotState.Runs()
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range learned {
				if full.NoTaskText && tr.Task != "" {
					t.Fatalf("NoTaskText: the build state keeps task %q", tr.Task)
				}
			}
		})
	}
}

// stripTasks is runs without their tasks, as trace files written before runs kept them.
func stripTasks(runs []Trace) []Trace {
	out := slices.Clone(runs)
	for i := range out {
		out[i].Task = ""
	}
	return out
}

// TestTracesWithoutTask reads a trace file whose older lines have no "task" (written before runs
// kept their words) beside lines that have one: it builds, and the memory is made of the
// lines with a task.
func TestTracesWithoutTask(t *testing.T) {
	skills := loadLib(t, sampleLib)
	var b strings.Builder
	for _, r := range tasksAsTraces(t, sampleTasks)[:10] {
		fmt.Fprintf(&b, "{\"id\": %q, \"skills\": [%q, %q]}\n", "old-"+r.ID, r.Skills[0], r.Skills[1])
	}
	runs := memoryRuns(t)
	for _, r := range runs {
		line, err := json.Marshal(map[string]any{"id": r.ID, "skills": r.Skills, "task": r.Task})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ReadTraces(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 10+len(runs) || read[0].Task != "" || read[10].Task != runs[0].Task {
		t.Fatalf("ReadTraces: %d runs, tasks %q, %q", len(read), read[0].Task, read[10].Task)
	}
	opt := DefaultOptions()
	res, err := Build(context.Background(), Input{Skills: skills, Options: &opt, Runs: read, Embedder: BuiltinEmbedder})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Report.Memory; m == nil || m.Runs != len(runs) {
		t.Errorf("memory %+v, want the %d runs with a task", m, len(runs))
	}
}

// TestUpdatesInARow checks that update after update, each through the state file, gives the
// bytes and the state of a full build on every run so far: with failed runs, reported runs of
// two reporters, names not in the library, a run repeated (left out by the update, so not given
// to the full build either) and tasks of spaces; with and without --no-task-text.
func TestUpdatesInARow(t *testing.T) {
	skills := loadLib(t, sampleLib)
	base := memoryRuns(t)
	batch := func(round int) []Trace {
		var out []Trace
		for k, r := range base {
			if k%4 != round%4 {
				continue
			}
			r.ID = fmt.Sprintf("%s-r%d", r.ID, round)
			switch k % 7 {
			case 1:
				r.Failed = true
			case 2, 3:
				r.Source = fmt.Sprintf("token:agent-%d", k%2)
			case 4:
				r.Skills = append(slices.Clone(r.Skills), "no-such-skill")
			case 5:
				r.Task = "   "
			}
			out = append(out, r)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
	}{
		{"task text", nil},
		{"no task text", func(o *Options) { o.NoTaskText = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := DefaultOptions()
			if tc.mod != nil {
				tc.mod(&opt)
			}
			all := batch(0)
			res, err := Build(context.Background(), Input{Skills: skills, Options: &opt, Runs: all, Embedder: BuiltinEmbedder, State: true})
			if err != nil {
				t.Fatal(err)
			}
			art, st := res.Artifact, res.State
			for round := 1; round <= 5; round++ {
				// Even rounds update from the state in memory, as a process that updates again
				// without reading it back does: its run log then shares its records (runLog.head).
				if round%2 == 1 {
					st = reread(t, st)
				}
				fresh := batch(round)
				if round == 3 {
					fresh = append(fresh, all[0]) // a repeat of a learned run: the update leaves it out
				}
				uopt := st.Options()
				got, gotState, rep, err := updateOf(context.Background(), Input{Old: art, Previous: st, Runs: fresh}, uopt)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Update.Mode != "incremental" || rep.Update.Duplicates != b2i(round == 3) {
					t.Fatalf("round %d: update %+v, want incremental with %d repeats", round, rep.Update, b2i(round == 3))
				}
				if round == 3 {
					fresh = fresh[:len(fresh)-1]
				}
				all = append(all, fresh...)
				full, err := Build(context.Background(), Input{Skills: skills, Options: &opt, Runs: all, Embedder: BuiltinEmbedder, State: true})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, full.Artifact) {
					t.Fatalf("round %d: update gave %x, the full build on %d runs %x", round, sha256.Sum256(got), len(all), sha256.Sum256(full.Artifact))
				}
				if d := stateDiff(gotState, full.State); d != "" {
					t.Fatalf("round %d: the update's build state differs from the full build's: %s", round, d)
				}
				if !sameStateFile(t, gotState, full.State) {
					t.Fatalf("round %d: the update's build state file differs from the full build's", round)
				}
				if full.Report.Reported == nil || (full.Report.Memory == nil) != opt.NoTaskText || full.Report.TraceFailures == 0 {
					t.Fatalf("round %d: the runs did not reach the build: reported %v, memory %v, failures %d",
						round, full.Report.Reported, full.Report.Memory, full.Report.TraceFailures)
				}
				art, st = got, gotState
			}
			if n := st.NumRuns(); n != len(all) {
				t.Errorf("the state learned %d runs, want %d", n, len(all))
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
