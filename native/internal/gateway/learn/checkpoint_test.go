package learn

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
)

// kill leaves l as a kill -9 would: the lock released and traces.jsonl closed, nothing else
// done (no Close, so no flush, no build finished, no file removed).
func kill(t *testing.T, l *Loop) {
	t.Helper()
	wait(t, l)
	l.mu.Lock()
	l.closed = true
	if l.quiet != nil {
		l.quiet.Stop()
	}
	l.mu.Unlock()
	l.cancel()
	l.tf.Close()
	unlockDir(l.lock)
}

// partial is testTrace(k) cut to its first n calls, as a checkpoint holds a trace in flight.
func partial(k, n int) Trace {
	t := testTrace(k)
	t.Tools, t.Calls, t.Failed = t.Tools[:n], t.Calls[:n], false
	return t
}

// TestCheckpointRecovery: after a kill, Open records the traces the last checkpoint held
// open that no trace file has, with their task and calls, once; a trace that ended after the
// checkpoint is not recorded twice; a clean checkpoint with nothing open leaves no file.
func TestCheckpointRecovery(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, Options{})
	record(t, l, 0, 1)
	if err := l.Checkpoint([]Trace{partial(1, 2), partial(2, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(testTrace(1)); err != nil { // trace 1 ends after the checkpoint
		t.Fatal(err)
	}
	kill(t, l)

	l2, lg := open(t, dir, Options{})
	if got, want := recordedIDs(l2), testIDs(0, 3); !slices.Equal(got, want) {
		t.Fatalf("after the kill: traces %q, want %q:\n%s", got, want, lg)
	}
	runs, err := builder.ReadTraces(filepath.Join(dir, TracesFile))
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[2]; len(r.Skills) != 1 || r.Skills[0] != testTrace(2).Tools[0] || r.Task != testTrace(2).Task {
		t.Errorf("the recovered trace: %+v, want trace 2's first call and its task", r)
	}
	if len(runs[1].Skills) != 3 {
		t.Errorf("trace 1 as recorded: %+v, want its 3 tools, not the checkpoint's 2", runs[1])
	}
	if _, err := os.Stat(filepath.Join(dir, OpenTracesFile)); !os.IsNotExist(err) {
		t.Errorf("%s after recovery: %v", OpenTracesFile, err)
	}
	if !lg.Has("recorded 1 traces that were open") {
		t.Errorf("no word of the recovery:\n%s", lg)
	}
	// A checkpoint with nothing open removes the file; Close leaves it so.
	if err := l2.Checkpoint([]Trace{partial(3, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := l2.Checkpoint(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OpenTracesFile)); !os.IsNotExist(err) {
		t.Errorf("%s after an empty checkpoint: %v", OpenTracesFile, err)
	}
	closeLoop(t, l2)
	if err := l2.Checkpoint(nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Checkpoint after Close: %v", err)
	}
}

// TestCheckpointRollback: a rollback after a kill records the traces left open first, so that
// the one it sets aside (ended and learned after the checkpoint) does not come back at the
// next start, and the one that never ended stays to be learned.
func TestCheckpointRollback(t *testing.T) {
	dir := t.TempDir()
	l, _ := openBuilt(t, dir, Options{LearnEvery: 1})
	if err := l.Checkpoint([]Trace{partial(0, 2), partial(1, 1)}); err != nil {
		t.Fatal(err)
	}
	record(t, l, 0, 1) // trace 0 ends and is learned
	wait(t, l)
	if st := l.Status(); st.TracesLearned != 1 {
		t.Fatalf("learned %d, want 1", st.TracesLearned)
	}
	kill(t, l)
	if n, err := Rollback(dir); err != nil || n != 1 {
		t.Fatalf("Rollback: %d, %v; want 1 trace undone", n, err)
	}
	l2, lg := open(t, dir, Options{})
	if got, want := recordedIDs(l2), testIDs(1, 2); !slices.Equal(got, want) {
		t.Errorf("after rollback: traces %q, want %q:\n%s", got, want, lg)
	}
	closeLoop(t, l2)
	if n, err := Relearn(dir); err != nil || n != 1 {
		t.Fatalf("Relearn: %d, %v; want 1", n, err)
	}
}

// FuzzRecoverOpen: whatever traces.jsonl and traces.open.jsonl hold, recovery does not panic,
// removes the checkpoint, leaves traces.jsonl with no torn line, its whole traces as they were
// followed by the checkpoint's traces it did not have, each ID once.
func FuzzRecoverOpen(f *testing.F) {
	for _, s := range traceSeeds {
		f.Add([]byte(traceSeeds[0]+"\n"+s), []byte(s+"\n"+traceSeeds[2]+"\n"))
		f.Add([]byte(s), []byte(traceSeeds[0]+"\n"))
	}
	f.Fuzz(func(t *testing.T, traces, open []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, TracesFile), traces, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, OpenTracesFile), open, 0o644); err != nil {
			t.Fatal(err)
		}
		before := recoverTraces(traces)
		n, err := recoverOpen(dir, func(string, ...any) {})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, OpenTracesFile)); !os.IsNotExist(err) {
			t.Fatalf("checkpoint left: %v", err)
		}
		after, err := os.ReadFile(filepath.Join(dir, TracesFile))
		if err != nil {
			t.Fatal(err)
		}
		r := recoverTraces(after)
		if n > 0 && (r.torn != 0 || r.keep != int64(len(after))) {
			t.Fatalf("traces.jsonl after recovery: torn line %d, keep %d of %d", r.torn, r.keep, len(after))
		}
		if len(r.traces) != len(before.traces)+n {
			t.Fatalf("%d traces after, want %d + %d", len(r.traces), len(before.traces), n)
		}
		for i, tr := range before.traces {
			if r.traces[i].Key() != tr.Key() {
				t.Fatalf("trace %d changed", i)
			}
		}
		seen := map[string]bool{}
		for _, tr := range before.traces {
			seen[tr.ID] = true
		}
		for _, tr := range r.traces[len(before.traces):] {
			if seen[tr.ID] {
				t.Fatalf("recovered %q twice", tr.ID)
			}
			seen[tr.ID] = true
		}
	})
}
