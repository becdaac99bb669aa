package gateway

import (
	"fmt"
	"sync"
	"time"
)

// tracker cuts one front session's calls into traces. A trace opens at a search (the query is
// its task) or, with none open, at a call (empty task); it ends at the next search, the
// session's end, or when Options.Idle passes without a call, whichever comes first. A trace
// without calls is not recorded: it teaches nothing. IDs are gw-RUN.SESSION-N, N counting the
// session's recorded traces from 1.
type tracker struct {
	s *frontSession

	mu     sync.Mutex
	open   bool
	task   string
	calls  []Call
	last   time.Time // of the latest search or call
	n      int       // traces recorded
	timer  *time.Timer
	closed bool
}

func (t *tracker) init(s *frontSession) {
	t.mu.Lock()
	t.s = s
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
	if t.open && t.s.g.opt.now().Sub(t.last) >= t.s.g.opt.Idle {
		t.finishLocked()
	}
	if !t.open {
		t.open, t.task, t.calls = true, "", nil
	}
	t.calls = append(t.calls, Call{Tool: tool, OK: ok, Millis: millis})
	t.touchLocked()
}

// touchLocked notes activity and arms the idle timer, which records the trace in flight when
// no call comes in time, so that it is not kept until the session ends.
func (t *tracker) touchLocked() {
	t.last = t.s.g.opt.now()
	if t.timer == nil {
		t.timer = time.AfterFunc(t.s.g.opt.Idle, t.idle)
	} else {
		t.timer.Reset(t.s.g.opt.Idle)
	}
}

func (t *tracker) idle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open && t.s.g.opt.now().Sub(t.last) >= t.s.g.opt.Idle {
		t.finishLocked()
	}
}

// finish records the trace in flight and takes no more: the session has ended.
func (t *tracker) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s == nil {
		return
	}
	t.finishLocked()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
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
	tr := Trace{ID: fmt.Sprintf("gw-%s-%d", t.s.id, t.n), Task: t.task, Calls: t.calls,
		Failed: !t.calls[len(t.calls)-1].OK}
	for _, c := range t.calls {
		if len(tr.Tools) == 0 || tr.Tools[len(tr.Tools)-1] != c.Tool {
			tr.Tools = append(tr.Tools, c.Tool)
		}
	}
	t.calls = nil
	if l := t.s.g.opt.Learner; l != nil {
		// Recorded under the lock, so that a session's traces reach the file in order.
		if err := l.Record(tr); err != nil {
			t.s.g.logf("gateway: trace %s not recorded: %v", tr.ID, err)
		}
	}
}
