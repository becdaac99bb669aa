package learn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// testCatalog is a deterministic MCP tools/list result: per domain, tools that chain through
// their fields (login gives a token, search takes it and gives an id, get/update/delete take
// the id). extra is appended to every description, to make another catalog.
func testCatalog(domains []string, extra string) []byte {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	type schema struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required,omitempty"`
	}
	type tool struct {
		Name         string  `json:"name"`
		Description  string  `json:"description"`
		InputSchema  schema  `json:"inputSchema"`
		OutputSchema *schema `json:"outputSchema,omitempty"`
	}
	obj := func(req bool, fields ...string) schema {
		s := schema{Type: "object", Properties: map[string]prop{}}
		for _, f := range fields {
			s.Properties[f] = prop{"string", "The " + strings.ReplaceAll(f, "_", " ") + "."}
			if req {
				s.Required = append(s.Required, f)
			}
		}
		return s
	}
	var tools []tool
	for _, d := range domains {
		id := d + "_id"
		out := func(fields ...string) *schema { s := obj(false, fields...); return &s }
		tools = append(tools,
			tool{"srv__" + d + "_login", "Log in to the " + d + " service and return a session token." + extra, obj(true, "user", "password"), out("token")},
			tool{"srv__" + d + "_search", "Search " + d + " records by a query; needs a session token; returns the matching " + d + " id." + extra, obj(true, "token", "query"), out(id)},
			tool{"srv__" + d + "_get", "Get the details of one " + d + " record by its " + d + " id." + extra, obj(true, id), out("details")},
			tool{"srv__" + d + "_update", "Update the details of one " + d + " record, given its " + d + " id and new details." + extra, obj(true, id, "details"), nil},
			tool{"srv__" + d + "_delete", "Delete one " + d + " record by its " + d + " id." + extra, obj(true, id), nil},
		)
	}
	b, err := json.MarshalIndent(map[string]any{"tools": tools}, "", " ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

var domains = []string{"orders", "users", "files", "mail", "calendar", "notes"}

// testTrace is the k-th trace of a steady workload: log in, search, then get or update.
func testTrace(k int) Trace {
	d := domains[k%len(domains)]
	last := []string{"get", "update", "delete"}[k/len(domains)%3]
	tools := []string{"srv__" + d + "_login", "srv__" + d + "_search", "srv__" + d + "_" + last}
	calls := make([]Call, len(tools))
	for i, name := range tools {
		calls[i] = Call{Tool: name, OK: true, Millis: int64(i + 1)}
	}
	return Trace{ID: fmt.Sprintf("gw-test-%d", k), Task: "work on " + d, Tools: tools, Calls: calls, Failed: k%7 == 6}
}

func open(t *testing.T, dir string, opt Options) (*Loop, *fixture.Logs) {
	t.Helper()
	lg := &fixture.Logs{}
	if opt.Logf == nil {
		opt.Logf = lg.Logf
	}
	l, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l, lg
}

// openBuilt is open with the test catalog set and its first graph built.
func openBuilt(t *testing.T, dir string, opt Options) (*Loop, *fixture.Logs) {
	t.Helper()
	l, lg := open(t, dir, opt)
	learnCatalog(t, l)
	return l, lg
}

// learnCatalog sets the test catalog and waits for the build it starts.
func learnCatalog(t *testing.T, l *Loop) {
	t.Helper()
	if err := l.SetCatalog(testCatalog(domains, "")); err != nil {
		t.Fatal(err)
	}
	wait(t, l)
}

func wait(t *testing.T, l *Loop) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("waiting for the build: %v", err)
	}
}

func closeLoop(t *testing.T, l *Loop) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func record(t *testing.T, l *Loop, from, to int) {
	t.Helper()
	for k := from; k < to; k++ {
		if err := l.Record(testTrace(k)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	held := filepath.Join(tmp, "held")
	open(t, held, Options{})
	tests := []struct {
		name, dir string
		opt       Options
		want      string
	}{
		{"a file", file, Options{}, "not a directory"},
		{"under a file", filepath.Join(file, "sub"), Options{}, "not a directory"},
		{"in use", held, Options{}, "in use by another caskg gateway"},
		{"negative learn every", filepath.Join(tmp, "neg"), Options{LearnEvery: -1}, "must not be negative"},
	}
	if os.Geteuid() != 0 { // root reads any directory
		locked := filepath.Join(tmp, "locked")
		os.Mkdir(locked, 0)
		tests = append(tests, struct {
			name, dir string
			opt       Options
			want      string
		}{"unreadable", locked, Options{}, "permission denied"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(tc.dir, tc.opt)
			if err == nil {
				l.Close(context.Background())
				t.Fatalf("Open(%s) succeeded", tc.dir)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "learn: ") {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestReopenResumes checks that a restart with the same catalog keeps the graph (no build)
// and the trace count, and that a new empty directory or an existing empty one works.
func TestReopenResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // created by Open
	cat := testCatalog(domains, "")
	l, _ := open(t, dir, Options{LearnEvery: 100})
	if g, e := l.Graph(); g != nil || e != nil {
		t.Fatal("a graph before the first build")
	}
	learnCatalog(t, l)
	record(t, l, 0, 10)
	st := l.Status()
	if st.TracesRecorded != 10 || st.TracesLearned != 0 || st.Edges == 0 || st.LastUpdate.IsZero() || st.LastError != "" {
		t.Fatalf("status %+v", st)
	}
	graph := fixture.ReadFile(t, filepath.Join(dir, GraphFile))
	closeLoop(t, l)

	l2, lg := open(t, dir, Options{LearnEvery: 100})
	if err := l2.SetCatalog(cat); err != nil {
		t.Fatal(err)
	}
	st2 := l2.Status()
	if st2.Building || st2.TracesRecorded != 10 || st2.TracesLearned != 0 || st2.Edges != st.Edges || !st2.LastUpdate.Equal(st.LastUpdate) {
		t.Fatalf("after reopening: status %+v, want no build and %+v", st2, st)
	}
	wait(t, l2)
	if lg.Has("full build") {
		t.Errorf("reopening rebuilt:\n%s", lg)
	}
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), graph) {
		t.Error("graph.skg changed on reopening")
	}
	if g, _ := l2.Graph(); g == nil || g.NumEdges() != st.Edges {
		t.Error("the reopened loop does not serve the graph")
	}
}

// TestReopenLearnsOwedTraces checks that traces recorded before a restart and not yet learned
// are learned once the catalog is set, when LearnEvery of them are owed.
func TestReopenLearnsOwedTraces(t *testing.T) {
	dir := t.TempDir()
	l, _ := openBuilt(t, dir, Options{LearnEvery: 100})
	record(t, l, 0, 12)
	closeLoop(t, l)
	l2, lg := openBuilt(t, dir, Options{LearnEvery: 10})
	if st := l2.Status(); st.TracesLearned != 12 || st.EdgesFromUse == 0 {
		t.Fatalf("status %+v, want the 12 traces learned:\n%s", st, lg)
	}
	if lg.Has("full build") {
		t.Errorf("an update made a full build:\n%s", lg)
	}
}

// TestLearnEvery checks that every LearnEvery traces an update runs and the engine is swapped,
// and that the previous graph is kept.
func TestLearnEvery(t *testing.T) {
	dir := t.TempDir()
	l, lg := openBuilt(t, dir, Options{LearnEvery: 6})
	_, e0 := l.Graph()
	first := fixture.ReadFile(t, filepath.Join(dir, GraphFile))
	record(t, l, 0, 5)
	wait(t, l)
	if st := l.Status(); st.TracesLearned != 0 {
		t.Fatalf("learned %d traces before LearnEvery", st.TracesLearned)
	}
	record(t, l, 5, 6)
	wait(t, l)
	_, e1 := l.Graph()
	st := l.Status()
	if e1 == e0 || st.TracesLearned != 6 || st.TracesRecorded != 6 || st.EdgesFromUse == 0 || st.Building {
		t.Fatalf("after 6 traces: status %+v, engine swapped %v\n%s", st, e1 != e0, lg)
	}
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, PrevFile)), first) {
		t.Error("graph.prev.skg is not the graph before the update")
	}
	record(t, l, 6, 12)
	wait(t, l)
	if st := l.Status(); st.TracesLearned != 12 {
		t.Fatalf("after 12 traces: status %+v", st)
	}
	if lg.Has("full build (") && strings.Count(lg.String(), "full build (") != 1 {
		t.Errorf("updates made full builds:\n%s", lg)
	}
	learned := l.learned()
	if len(learned) != l.Status().EdgesFromUse {
		t.Fatalf("learned lists %d edges, Status counts %d", len(learned), l.Status().EdgesFromUse)
	}
	for _, e := range learned {
		if e.Runs == 0 || !strings.HasPrefix(e.From, "srv__") {
			t.Errorf("learned edge %+v", e)
		}
	}
}

// TestLearnWithoutEnough checks that traces fewer than LearnEvery are learned by LearnNow, and
// by themselves once LearnAfterQuiet passes without a new trace, and not before.
func TestLearnWithoutEnough(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
		now  bool
	}{{"LearnNow", 0, true}, {"a quiet spell", 20 * time.Millisecond, false}} {
		t.Run(tc.name, func(t *testing.T) {
			l, lg := openBuilt(t, t.TempDir(), Options{LearnEvery: 100, LearnAfterQuiet: tc.idle})
			record(t, l, 0, 3)
			if tc.now {
				if st := l.Status(); st.TracesLearned != 0 || st.Building {
					t.Fatalf("learned before LearnNow: %+v", st)
				}
				l.LearnNow()
			}
			deadline := time.Now().Add(time.Minute)
			for l.Status().TracesLearned != 3 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			wait(t, l)
			if st := l.Status(); st.TracesLearned != 3 || st.EdgesFromUse == 0 {
				t.Fatalf("status %+v\n%s", st, lg)
			}
		})
	}
}

// blocker is a BuildOptions that holds the full build it is called for until released.
type blocker struct {
	entered chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (b *blocker) options(skills []ingest.Skill) (builder.Options, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-time.After(time.Minute):
		return builder.Options{}, errors.New("blocker: never released")
	}
	return builder.DefaultOptions(), nil
}

func (b *blocker) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-b.entered:
	case <-time.After(time.Minute):
		t.Fatal("the full build did not start")
	}
}

// TestCatalogChange checks that a changed catalog starts a full build while the old graph
// answers, that records made meanwhile coalesce into one follow-up, and that a bad catalog
// leaves the old graph answering with the error in Status.
func TestCatalogChange(t *testing.T) {
	dir := t.TempDir()
	b := newBlocker()
	l, lg := open(t, dir, Options{LearnEvery: 2, BuildOptions: b.options})
	l.SetCatalog(testCatalog(domains, ""))
	b.waitEntered(t)
	b.release <- struct{}{}
	wait(t, l)
	g0, e0 := l.Graph()
	n0 := g0.NumSkills()

	changed := testCatalog(append(domains, "photos"), "")
	if err := l.SetCatalog(changed); err != nil {
		t.Fatal(err)
	}
	b.waitEntered(t)
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, CatalogFile)), changed) {
		t.Error("catalog.json is not the new catalog")
	}
	if st := l.Status(); !st.Building {
		t.Errorf("status %+v during the build", st)
	}
	record(t, l, 0, 6) // three requests while the build runs
	if g, e := l.Graph(); g != g0 || e != e0 {
		t.Error("the old graph does not answer during the full build")
	}
	b.release <- struct{}{}
	wait(t, l)
	g1, _ := l.Graph()
	if g1.NumSkills() != n0+5 {
		t.Errorf("%d skills after the change, want %d", g1.NumSkills(), n0+5)
	}
	if st := l.Status(); st.TracesLearned != 6 {
		t.Errorf("status %+v: the follow-up did not learn the 6 traces\n%s", st, lg)
	}
	if n := strings.Count(lg.String(), "graph swapped in"); n != 3 {
		t.Errorf("%d graphs swapped in, want 3 (first, changed catalog, one follow-up):\n%s", n, lg)
	}

	if err := l.SetCatalog([]byte(`{"tools": []}`)); err != nil {
		t.Fatal(err)
	}
	wait(t, l)
	st := l.Status()
	if !strings.Contains(st.LastError, "empty library") || st.Building {
		t.Errorf("status %+v after a bad catalog", st)
	}
	if g, _ := l.Graph(); g != g1 {
		t.Error("a failed build replaced the graph")
	}
}

// TestRecord checks the line Record writes and what it refuses.
func TestRecord(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, Options{})
	tr := Trace{ID: "gw-a<b>-1", Task: "find & book", Tools: []string{"a__x", "b__y"}, Failed: true,
		Calls: []Call{{"a__x", true, 3}, {"b__y", false, 12}}}
	if err := l.Record(tr); err != nil {
		t.Fatal(err)
	}
	want := `{"id":"gw-a<b>-1","task":"find & book","skills":["a__x","b__y"],"outcome":"failure","calls":[{"tool":"a__x","ok":true,"ms":3},{"tool":"b__y","ok":false,"ms":12}]}` + "\n"
	if got := string(fixture.ReadFile(t, filepath.Join(dir, TracesFile))); got != want {
		t.Errorf("line\n%s\nwant\n%s", got, want)
	}
	runs, err := builder.ReadTraces(filepath.Join(dir, TracesFile))
	if err != nil || len(runs) != 1 || runs[0].ID != tr.ID || !runs[0].Failed || len(runs[0].Skills) != 2 || runs[0].Task != tr.Task {
		t.Errorf("ReadTraces: %+v, %v", runs, err)
	}
	for _, bad := range []Trace{{Tools: []string{"a"}}, {ID: "x"}, {ID: "x", Tools: []string{""}}, {ID: "x", Tools: []string{strings.Repeat("a", maxLine)}}} {
		if err := l.Record(bad); err == nil {
			t.Errorf("Record(%.40v) succeeded", bad)
		}
	}
	if st := l.Status(); st.TracesRecorded != 1 {
		t.Errorf("recorded %d", st.TracesRecorded)
	}
	closeLoop(t, l)
	if err := l.Record(tr); !errors.Is(err, errClosed) {
		t.Errorf("Record after Close: %v", err)
	}
}

// TestRecordNoTaskText: a loop told to leave task texts out writes none to traces.jsonl, and
// its graph's build state keeps none either.
func TestRecordNoTaskText(t *testing.T) {
	dir := t.TempDir()
	l, _ := openBuilt(t, dir, Options{NoTaskText: true, LearnEvery: 3})
	for k := range 3 {
		if err := l.Record(testTrace(k)); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, l)
	if raw := fixture.ReadFile(t, filepath.Join(dir, TracesFile)); bytes.Contains(raw, []byte("work on")) {
		t.Errorf("traces.jsonl keeps the task text:\n%s", raw)
	}
	st, err := builder.DecodeState(fixture.ReadFile(t, filepath.Join(dir, GraphFile+builder.StateSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].Task != "" {
		t.Errorf("build state traces %+v", runs)
	}
	if o := st.Options(); !o.NoTaskText {
		t.Error("the graph was built with task text")
	}
	if _, err := Open(t.TempDir(), Options{TaskMinRuns: -1}); err == nil {
		t.Error("Open with TaskMinRuns -1 succeeded")
	}
}

func TestConcurrentRecord(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, Options{LearnEvery: 15})
	l.SetCatalog(testCatalog(domains, ""))
	const workers, each = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				if err := l.Record(testTrace(w*each + k)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wait(t, l)
	runs, err := builder.ReadTraces(filepath.Join(dir, TracesFile))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID] = true
	}
	if len(runs) != workers*each || len(ids) != workers*each {
		t.Fatalf("%d lines, %d distinct ids, want %d", len(runs), len(ids), workers*each)
	}
	// Every trace is learned once the last request is served.
	l.mu.Lock()
	l.request()
	l.mu.Unlock()
	wait(t, l)
	if st := l.Status(); st.TracesRecorded != workers*each || st.TracesLearned != workers*each || st.LastError != "" {
		t.Errorf("status %+v", st)
	}
}

// TestTraceRecovery checks Open on traces.jsonl left in various states.
func TestTraceRecovery(t *testing.T) {
	good := `{"id":"1","skills":["a","b"]}`
	tests := []struct {
		name      string
		in        string
		want      string // the file after Open
		traces    int
		logged    string
		newRecord bool // a Record after Open starts a line of its own
	}{
		{"empty", "", "", 0, "", true},
		{"whole lines", good + "\n" + good + "\n", good + "\n" + good + "\n", 2, "", true},
		{"torn last line", good + "\n" + `{"id":"2","ski`, good + "\n", 1, "traces.jsonl:2: cut off a torn last line of 14 bytes", true},
		{"last line without newline", good + "\n" + good, good + "\n" + good + "\n", 2, "", true},
		{"bad middle line", good + "\nnot json\n" + good + "\n", good + "\nnot json\n" + good + "\n", 2, "traces.jsonl:2: skipped: not a JSON trace", true},
		{"bad outcome", `{"id":"1","skills":["a"],"outcome":"maybe"}` + "\n", `{"id":"1","skills":["a"],"outcome":"maybe"}` + "\n", 0, `traces.jsonl:1: skipped: field "outcome"`, true},
		{"blank lines and CRLF", "\n" + good + "\r\n\n", "\n" + good + "\r\n\n", 1, "", true},
		{"trailing spaces", good + "\n  ", good + "\n", 1, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, TracesFile)
			os.WriteFile(path, []byte(tc.in), 0o644)
			l, lg := open(t, dir, Options{})
			if got := string(fixture.ReadFile(t, path)); got != tc.want {
				t.Errorf("file after Open %q, want %q", got, tc.want)
			}
			if st := l.Status(); st.TracesRecorded != tc.traces {
				t.Errorf("%d traces, want %d", st.TracesRecorded, tc.traces)
			}
			if tc.logged != "" && !lg.Has(tc.logged) {
				t.Errorf("log does not say %q:\n%s", tc.logged, lg)
			}
			if tc.logged == "" && lg.String() != "" {
				t.Errorf("unexpected log:\n%s", lg)
			}
			if err := l.Record(testTrace(0)); err != nil {
				t.Fatal(err)
			}
			after := fixture.ReadFile(t, path)
			line, _ := encodeLine(testTrace(0))
			if !bytes.HasSuffix(after, line) || !bytes.Equal(after[:len(after)-len(line)], []byte(tc.want)) {
				t.Errorf("after a Record: %q", after)
			}
		})
	}
}

// TestCorruptGraph checks that a graph that does not decode is reported and rebuilt, and that
// sidecars of another graph are not trusted.
func TestCorruptGraph(t *testing.T) {
	dir := t.TempDir()
	l, _ := openBuilt(t, dir, Options{LearnEvery: 3})
	record(t, l, 0, 3)
	wait(t, l)
	closeLoop(t, l)
	good := fixture.ReadFile(t, filepath.Join(dir, GraphFile))

	os.WriteFile(filepath.Join(dir, GraphFile), good[:len(good)/2], 0o644)
	l2, lg := open(t, dir, Options{LearnEvery: 3})
	if g, _ := l2.Graph(); g != nil {
		t.Fatal("a corrupt graph is served")
	}
	if !lg.Has("graph.skg: graphs:") || !lg.Has("rebuilt") {
		t.Errorf("the corrupt graph is not reported:\n%s", lg)
	}
	learnCatalog(t, l2)
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), good) {
		t.Error("the rebuilt graph differs from the one before")
	}
	closeLoop(t, l2)

	// The previous graph's sidecars beside the current graph: both are refused.
	for _, suffix := range []string{builder.StateSuffix, metaSuffix} {
		os.WriteFile(filepath.Join(dir, GraphFile+suffix), fixture.ReadFile(t, filepath.Join(dir, PrevFile+suffix)), 0o644)
	}
	l3, lg := open(t, dir, Options{LearnEvery: 3})
	if !lg.Has("graph.skg.state belongs to another graph") || !lg.Has("graph.skg.meta belongs to another graph") {
		t.Errorf("mismatched sidecars not reported:\n%s", lg)
	}
	learnCatalog(t, l3)
	if !lg.Has("full build") || !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), good) {
		t.Errorf("no full build to the same graph:\n%s", lg)
	}
}

// TestRollback checks that a rollback brings the graph before the latest update back and sets
// aside the traces that update learned: a restart does not learn them again, a second
// rollback does not swap the graphs back, and Relearn returns the traces for the next start.
func TestRollback(t *testing.T) {
	dir := t.TempDir()
	_, err := Rollback(dir)
	if err == nil || !strings.Contains(err.Error(), "no previous graph") || !strings.HasPrefix(err.Error(), "learn: rollback: ") {
		t.Fatalf("Rollback of an empty dir: %v", err)
	}
	l, _ := openBuilt(t, dir, Options{LearnEvery: 4})
	g0 := fixture.ReadFile(t, filepath.Join(dir, GraphFile))
	record(t, l, 0, 4)
	wait(t, l)
	g1 := fixture.ReadFile(t, filepath.Join(dir, GraphFile))
	if _, err := Rollback(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Rollback while open: %v", err)
	}
	closeLoop(t, l)
	if bytes.Equal(g0, g1) {
		t.Fatal("learning 4 traces did not change the graph")
	}
	traces := func() int {
		t.Helper()
		n := 0
		for _, ln := range bytes.Split(fixture.ReadFile(t, filepath.Join(dir, TracesFile)), []byte("\n")) {
			if len(bytes.TrimSpace(ln)) > 0 {
				n++
			}
		}
		return n
	}
	if n, err := Rollback(dir); err != nil || n != 4 {
		t.Fatalf("Rollback: %d traces undone, %v; want 4", n, err)
	}
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), g0) || traces() != 0 {
		t.Fatalf("after rollback: not the first graph, or %d traces left in %s, want 0", traces(), TracesFile)
	}
	if _, err := Rollback(dir); err == nil || !strings.Contains(err.Error(), "no previous graph") {
		t.Errorf("second Rollback: %v, want no previous graph", err)
	}
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), g0) {
		t.Fatal("the second rollback swapped the graphs back")
	}
	// A restart keeps the rolled-back graph: nothing to learn.
	l2, lg := open(t, dir, Options{LearnEvery: 4})
	learnCatalog(t, l2)
	if st := l2.Status(); st.TracesLearned != 0 || st.TracesRecorded != 0 || lg.Has("swapped in") {
		t.Fatalf("restart after rollback: %+v\n%s", st, lg)
	}
	closeLoop(t, l2)
	// Relearn takes the traces back, and the next start learns them to the same graph.
	if n, err := Relearn(dir); err != nil || n != 4 || traces() != 4 {
		t.Fatalf("Relearn: %d traces, %v, %d in %s; want 4", n, err, traces(), TracesFile)
	}
	if n, err := Relearn(dir); err != nil || n != 0 || traces() != 4 {
		t.Fatalf("second Relearn: %d traces, %v, %d in %s; want 0 more", n, err, traces(), TracesFile)
	}
	l3, lg := open(t, dir, Options{LearnEvery: 4})
	if st := l3.Status(); st.TracesLearned != 0 || st.TracesRecorded != 4 {
		t.Fatalf("after relearn: %+v", st)
	}
	learnCatalog(t, l3)
	if !bytes.Equal(fixture.ReadFile(t, filepath.Join(dir, GraphFile)), g1) || lg.Has("full build") {
		t.Errorf("relearning did not update to the same graph:\n%s", lg)
	}
}

// TestCloseDuringBuild checks that Close cancels a build that outlives its context, writes no
// graph, and leaves no temporary file.
func TestCloseDuringBuild(t *testing.T) {
	dir := t.TempDir()
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	opts := func(skills []ingest.Skill) (builder.Options, error) {
		opt := builder.DefaultOptions()
		opt.Progress = func(stage string, done, total int) {
			if stage == "candidates" && done == 0 {
				started <- struct{}{}
				select {
				case <-release:
				case <-time.After(time.Minute):
				}
			}
		}
		return opt, nil
	}
	l, err := Open(dir, Options{BuildOptions: opts})
	if err != nil {
		t.Fatal(err)
	}
	l.SetCatalog(testCatalog(domains, ""))
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the build did not start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Close(ctx) }()
	select {
	case <-l.ctx.Done(): // Close canceled the build's context
	case <-time.After(time.Minute):
		t.Fatal("Close did not cancel the build")
	}
	close(release)
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return")
	}
	if err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("Close: %v, want the build canceled", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != CatalogFile && e.Name() != TracesFile && e.Name() != lockFile {
			t.Errorf("left %s in the state dir", e.Name())
		}
	}
	if err := l.Close(context.Background()); !errors.Is(err, errClosed) {
		t.Errorf("second Close: %v", err)
	}
	// The directory is free again.
	l2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l2.Close(context.Background())
}
