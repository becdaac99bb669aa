package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/gateway/learn"
	"github.com/caskg/caskg/native/internal/mcptransport"
)

// fakeTimer is a timer of a fakeClock: add fires it once the clock reaches its time.
type fakeTimer struct {
	c     *fakeClock
	at    time.Time
	f     func()
	armed bool
}

// afterFunc arms a timer that the clock's add fires, as time.AfterFunc does with real time.
func (c *fakeClock) afterFunc(d time.Duration, f func()) timer {
	t := &fakeTimer{c: c, f: f}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.at, t.armed = t.c.t.Add(d), true
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// advance moves the clock by d and runs the timers due, in this goroutine, before it returns.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	var due []func()
	for _, t := range c.timers {
		if t.armed && !t.at.After(c.t) {
			t.armed = false
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// TestTraceGap checks that a trace is written once TraceGap passes without a call, with no
// search, session end or shutdown to end it: what a kill -9 can lose is bounded by the gap.
func TestTraceGap(t *testing.T) {
	tests := []struct {
		name  string
		gap   time.Duration // 0: the default
		quiet time.Duration // how long the session waits after its last call
		want  int           // traces written by then
	}{
		{"default gap, not yet", 0, DefaultTraceGap - time.Second, 0},
		{"default gap passed", 0, DefaultTraceGap, 1},
		{"a shorter gap", 5 * time.Second, 5 * time.Second, 1},
		{"a longer gap, not yet", time.Minute, 59 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			g := startGateway(t, alphaConfig(), Options{Learner: rec, TraceGap: tt.gap, now: clock.now, afterFunc: clock.afterFunc,
				dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
			fc := connect(t, g)
			fc.search(t, "read", 2)
			clock.advance(3 * time.Second) // a call after a pause shorter than any gap: the same trace
			fc.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
			clock.advance(tt.quiet)
			got := rec.got()
			if len(got) != tt.want {
				t.Fatalf("%d traces after %v without a call, want %d", len(got), tt.quiet, tt.want)
			}
			if tt.want == 1 && (got[0].Task != "read" || len(got[0].Calls) != 1) {
				t.Errorf("trace: %+v", got[0])
			}
			// The next call opens a trace of its own after the gap, or joins the open one.
			fc.callTool(t, "alpha__stat", nil)
			g.Close()
			want := [][]string{{"alpha__read_file", "alpha__stat"}}
			if tt.want == 1 {
				want = [][]string{{"alpha__read_file"}, {"alpha__stat"}}
			}
			got = rec.got()
			var tools [][]string
			for _, tr := range got {
				tools = append(tools, tr.Tools)
			}
			if d := cmp.Diff(want, tools); d != "" {
				t.Errorf("after the next call and shutdown (-want +got):\n%s", d)
			}
		})
	}
}

// TestTraceEndsWhenStreamCloses checks that an HTTP session whose client goes away without a
// DELETE (the TypeScript SDK's close() aborts its GET stream and sends none) has its trace
// written when the GET stream ends, not when the session times out.
func TestTraceEndsWhenStreamCloses(t *testing.T) {
	rec := &recorder{}
	g := startGateway(t, alphaConfig(), Options{Learner: rec, TraceGap: time.Hour,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	front := serveFront(t, g)
	url := front.URL + mcptransport.MCPPath
	session := ""
	post := func(body string) {
		t.Helper()
		resp := rawPost(t, front.URL, "", session, body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 || bytes.Contains(b, []byte(`"isError":true`)) {
			t.Fatalf("POST %s: %d %s", body, resp.StatusCode, b)
		}
		if session == "" {
			session = resp.Header.Get("Mcp-Session-Id")
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ts-like","version":"1"}}}`)
	if session == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	ctx, closeStream := context.WithCancel(context.Background())
	defer closeStream()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}

	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"read a file"}}}`)
	post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"alpha__read_file","arguments":{"path":"a"}}}}`)
	if n := len(rec.got()); n != 0 {
		t.Fatalf("%d traces while the client is connected, want 0", n)
	}
	closeStream() // the client goes away: no DELETE
	resp.Body.Close()
	waitFor(t, "the trace of the closed stream", func() bool { return len(rec.got()) == 1 })
	if got := rec.got()[0]; got.Task != "read a file" || !slices.Equal(got.Tools, []string{"alpha__read_file"}) {
		t.Errorf("trace: %+v", got)
	}
}

// journal is a recorder that also keeps the open traces of the last checkpoint.
type journal struct {
	recorder
	open        []learn.Trace
	checkpoints int
}

func (j *journal) Checkpoint(open []learn.Trace) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.open = slices.Clone(open)
	j.checkpoints++
	return nil
}

// durable is how many calls a kill -9 would not lose now: those of the recorded traces and of
// the open ones as last checkpointed.
func (j *journal) durable() (n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, t := range append(slices.Clone(j.traces), j.open...) {
		n += len(t.Calls)
	}
	return n
}

// TestKillLosesAtMostTheGap: a session that calls every 10 s never pauses for the 30 s trace
// gap, so its trace never ends; still, at any moment every call older than the gap is durable
// (recorded or checkpointed), under the ID the trace gets when it ends. A gateway with nothing
// new checkpoints nothing, and Close leaves no trace open.
func TestKillLosesAtMostTheGap(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	j := &journal{}
	g := startGateway(t, alphaConfig(), Options{Learner: j, TraceGap: 30 * time.Second, now: clock.now, afterFunc: clock.afterFunc,
		dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	fc.search(t, "a long task", 3)
	const step = 10 * time.Second
	for i := range 18 {
		fc.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
		clock.advance(step)
		// Call k was made at k*step; now is (i+1)*step: the calls at or before now-30s are
		// 0..i-2, i-1 of them.
		if d, want := j.durable(), max(0, i-1); d < want {
			t.Fatalf("after call %d and %v more: %d calls durable, want at least %d", i, step, d, want)
		}
	}
	if n := len(j.got()); n != 0 {
		t.Fatalf("%d traces recorded; the session never paused", n)
	}
	j.mu.Lock()
	open, n := slices.Clone(j.open), j.checkpoints
	j.mu.Unlock()
	if len(open) != 1 || open[0].ID != "gw-0.1-1" || open[0].Task != "a long task" || open[0].Tools[0] != "alpha__read_file" {
		t.Fatalf("checkpointed %+v, want the session's trace gw-0.1-1", open)
	}
	clock.advance(time.Minute) // the gap ends the trace; the next checkpoint drops it
	clock.advance(time.Minute) // nothing changed: no checkpoint
	j.mu.Lock()
	open, n2 := slices.Clone(j.open), j.checkpoints
	j.mu.Unlock()
	if got := j.got(); len(got) != 1 || got[0].ID != "gw-0.1-1" || len(got[0].Calls) != 18 || len(open) != 0 {
		t.Errorf("after the gap: recorded %+v, open %+v; want gw-0.1-1 with 18 calls, none open", got, open)
	}
	if n2 != n+1 {
		t.Errorf("%d checkpoints after the trace ended, want 1", n2-n)
	}
}

// TestCheckpointToDisk: with the learning loop as learner, a session's open trace reaches the
// state folder's traces.open.jsonl within a gap, with its task and calls; once the trace has
// ended, the next checkpoint removes the file.
func TestCheckpointToDisk(t *testing.T) {
	dir := t.TempDir()
	loop, err := learn.Open(dir, learn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close(context.Background()) })
	clock := &fakeClock{t: time.Unix(1000, 0)}
	g := startGateway(t, alphaConfig(), Options{Learner: loop, TraceGap: 30 * time.Second, now: clock.now,
		afterFunc: clock.afterFunc, dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	path := filepath.Join(dir, learn.OpenTracesFile)
	fc.search(t, "read two files", 3)
	fc.callTool(t, "alpha__read_file", map[string]any{"path": "a"})
	clock.advance(5 * time.Second)
	fc.callTool(t, "alpha__stat", nil)
	clock.advance(25 * time.Second) // the first checkpoint, 30 s after the start
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := builder.ParseTrace(bytes.TrimSpace(data))
	if err != nil || run.ID != "gw-0.1-1" || run.Task != "read two files" || !slices.Equal(run.Skills, []string{"alpha__read_file", "alpha__stat"}) {
		t.Fatalf("%s: %s (%v), want gw-0.1-1 with its two calls", learn.OpenTracesFile, data, err)
	}
	clock.advance(10 * time.Second) // 30 s after the last call: the trace ends
	if st := loop.Status(); st.TracesRecorded != 1 {
		t.Fatalf("recorded %d traces, want 1", st.TracesRecorded)
	}
	clock.advance(30 * time.Second) // the next checkpoint: nothing open
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s with no trace open: %v", learn.OpenTracesFile, err)
	}
	// Close records the trace open at a checkpoint and removes the file.
	fc.callTool(t, "alpha__stat", nil)
	clock.advance(15 * time.Second)
	fc.callTool(t, "alpha__stat", nil)
	clock.advance(15 * time.Second) // a checkpoint, 30 s after the last; the gap has not passed
	if n := loop.Status().TracesRecorded; n != 1 {
		t.Fatalf("recorded %d traces, want the second still open", n)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no checkpoint of the second trace: %v", err)
	}
	g.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s after Close: %v", learn.OpenTracesFile, err)
	}
	if st := loop.Status(); st.TracesRecorded != 2 {
		t.Errorf("recorded %d traces after Close, want 2", st.TracesRecorded)
	}
}

// TestCheckpointForgetsDropped: a trace the rate limiter drops when it ends leaves the
// checkpoint at once, so that a kill before the next one does not have it recorded after all.
func TestCheckpointForgetsDropped(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	j := &journal{}
	g := startGateway(t, alphaConfig(), Options{Learner: j, TraceGap: 30 * time.Second, TraceRate: 1, now: clock.now,
		afterFunc: clock.afterFunc, dial: inMemory(t, map[string]func() *mcp.Server{"alpha": alphaServer})})
	fc := connect(t, g)
	fc.search(t, "one", 3)
	fc.callTool(t, "alpha__stat", nil)
	fc.search(t, "two", 3) // trace one is recorded: the minute's budget is spent
	fc.callTool(t, "alpha__stat", nil)
	clock.advance(20 * time.Second)
	fc.callTool(t, "alpha__stat", nil)
	clock.advance(10 * time.Second) // the first checkpoint holds trace two
	j.mu.Lock()
	held := len(j.open) == 1 && j.open[0].Task == "two"
	j.mu.Unlock()
	if !held || len(j.got()) != 1 {
		t.Fatalf("checkpoint %+v, recorded %d; want trace two open and one recorded", j.open, len(j.got()))
	}
	fc.search(t, "three", 3) // ends trace two, over the rate
	waitFor(t, "the dropped trace out of the checkpoint", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.open) == 0
	})
	if g.health().TracesDropped != 1 {
		t.Errorf("dropped %d, want 1", g.health().TracesDropped)
	}
}
