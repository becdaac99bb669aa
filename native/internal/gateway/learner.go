package gateway

import "github.com/caskg/caskg/native/internal/gateway/learn"

// LoopLearner is the learning loop of package learn as the gateway's Learner. The gateway names
// traces and status in its own types, so that it does not depend on how the loop keeps them.
func LoopLearner(l *learn.Loop) Learner { return loopLearner{l} }

type loopLearner struct{ *learn.Loop }

func (l loopLearner) Record(t Trace) error { return l.Loop.Record(learnTrace(t)) }

func (l loopLearner) Checkpoint(open []Trace) error {
	ts := make([]learn.Trace, len(open))
	for i, t := range open {
		ts[i] = learnTrace(t)
	}
	return l.Loop.Checkpoint(ts)
}

func learnTrace(t Trace) learn.Trace {
	calls := make([]learn.Call, len(t.Calls))
	for i, c := range t.Calls {
		calls[i] = learn.Call{Tool: c.Tool, OK: c.OK, Millis: c.Millis}
	}
	return learn.Trace{ID: t.ID, Task: t.Task, Tools: t.Tools, Failed: t.Failed, Calls: calls, Source: t.Source}
}

func (l loopLearner) Status() Status {
	s := l.Loop.Status()
	return Status{TracesRecorded: s.TracesRecorded, TracesLearned: s.TracesLearned, Edges: s.Edges,
		EdgesFromUse: s.EdgesFromUse, LastUpdate: s.LastUpdate, Building: s.Building, LastError: s.LastError}
}
