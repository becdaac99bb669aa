package gateway

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/caskg/caskg/native/internal/gateway/learn"
)

// tracker cuts one front session's calls into traces. A trace opens at a search (the query is
// its task) or, with none open, at a call (empty task); it ends at the next search, the
// session's end (DELETE, the transport closing, the gateway stopping), the close of the
// session's HTTP GET stream (a client that closes without DELETE, as the TypeScript SDK's
// close() does), or when Options.TraceGap passes without a call, whichever comes first. A
// trace is recorded when it ends; until then the gateway's checkpoint (snapshot) hands it,
// calls so far, to a Checkpointer every TraceGap, so a kill -9 loses at most the calls of the
// last TraceGap, however long the trace. A trace without calls is not recorded: it teaches
// nothing. IDs are gw-RUN.SESSION-N, N counting the session's ended traces from 1.
type tracker struct {
	clock  clock
	gap    time.Duration     // Options.TraceGap
	source string            // the traces' source (frontSession.source)
	record func(learn.Trace) // takes each ended trace that has calls

	mu     sync.Mutex
	id     string // the session's, set by begin; "" before
	open   bool
	task   string
	calls  []learn.Call
	last   time.Time // of the latest search or call
	n      int       // traces recorded
	timer  timer
	closed bool
}

func newTracker(clk clock, gap time.Duration, source string, record func(learn.Trace)) *tracker {
	return &tracker{clock: clk, gap: gap, source: source, record: record}
}

// begin starts taking the calls of the session id (at its registration).
func (t *tracker) begin(id string) {
	t.mu.Lock()
	t.id = id
	t.mu.Unlock()
}

// search ends the trace in flight and opens one for the query.
func (t *tracker) search(query string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.finishLocked()
	t.open, t.task, t.calls = true, query, nil
	t.touchLocked()
}

// called adds a call to the trace in flight, first ending it when the idle gap has passed.
func (t *tracker) called(tool string, ok bool, millis int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.open && t.clock.now().Sub(t.last) >= t.gap {
		t.finishLocked()
	}
	if !t.open {
		t.open, t.task, t.calls = true, "", nil
	}
	t.calls = append(t.calls, learn.Call{Tool: tool, OK: ok, Millis: millis})
	t.touchLocked()
}

// timer is the part of *time.Timer the tracker uses, so that tests can fire it by their clock.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// touchLocked notes activity and arms the gap timer, which records the trace in flight when
// no call comes in time, so that it is not kept until the session ends.
func (t *tracker) touchLocked() {
	t.last = t.clock.now()
	if t.timer == nil {
		t.timer = t.clock.afterFunc(t.gap, t.gapTimer)
	} else {
		t.timer.Reset(t.gap)
	}
}

// gapTimer is the gap timer's: it records the trace in flight when the gap has passed since
// its latest search or call.
func (t *tracker) gapTimer() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open && t.clock.now().Sub(t.last) >= t.gap {
		t.finishLocked()
	}
}

// flush records the trace in flight; the session goes on, and its next call opens a trace.
func (t *tracker) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id != "" {
		t.finishLocked()
	}
}

// finish records the trace in flight and takes no more: the session has ended.
func (t *tracker) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" {
		return
	}
	t.finishLocked()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
}

// traceLocked is the trace in flight as it is now, with the ID it gets when it ends (numbered
// t.n+1 before finishLocked counts it, t.n after); it has calls.
func (t *tracker) traceLocked() learn.Trace {
	n := t.n
	if t.open {
		n++
	}
	tr := learn.Trace{ID: fmt.Sprintf("gw-%s-%d", t.id, n), Task: t.task, Calls: t.calls,
		Failed: !t.calls[len(t.calls)-1].OK, Source: t.source}
	for _, c := range t.calls {
		if len(tr.Tools) == 0 || tr.Tools[len(tr.Tools)-1] != c.Tool {
			tr.Tools = append(tr.Tools, c.Tool)
		}
	}
	return tr
}

// snapshot is the trace in flight, with a copy of its calls so far; ok is false when there is
// none with calls.
func (t *tracker) snapshot() (tr learn.Trace, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" || t.closed || !t.open || len(t.calls) == 0 {
		return learn.Trace{}, false
	}
	tr = t.traceLocked()
	tr.Calls = slices.Clone(tr.Calls)
	return tr, true
}

// finishLocked records the trace in flight, if it has calls.
func (t *tracker) finishLocked() {
	if !t.open {
		return
	}
	t.open = false
	if len(t.calls) == 0 {
		return
	}
	t.n++
	tr := t.traceLocked()
	t.calls = nil
	// Recorded under the lock, so that a session's traces reach the file in order.
	t.record(tr)
}
