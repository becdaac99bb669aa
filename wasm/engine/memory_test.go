package engine

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/caskg/caskg/graphs"
)

// memDoc is a memory document as the tests read it: its tool set, runs, whether it failed, and
// its terms with their frequencies.
type memDoc struct {
	skills []uint32
	runs   int
	failed bool
	tf     map[string]float32
}

// memDocs reads m back into documents, in order.
func memDocs(m *graphs.Memory) []memDoc {
	if m == nil {
		return nil
	}
	out := make([]memDoc, len(m.Docs))
	for d, doc := range m.Docs {
		out[d] = memDoc{skills: doc.Skills, runs: doc.Runs, failed: doc.Failed, tf: map[string]float32{}}
	}
	for t, ps := range m.Postings {
		for _, p := range ps {
			out[p.Doc].tf[m.Terms[t]] = p.TF
		}
	}
	return out
}

func TestBuildMemory(t *testing.T) {
	// run is a trusted run of skills that asked task.
	run := func(task string, skills ...int) PastRun { return PastRun{Task: task, Skills: skills} }
	reported := func(by, task string, skills ...int) PastRun {
		return PastRun{Task: task, Skills: skills, Reporter: by}
	}
	// many is n trusted runs of skills, each with a task of its own around the shared words.
	many := func(n int, shared string, skills ...int) []PastRun {
		var out []PastRun
		for i := range n {
			out = append(out, run(fmt.Sprintf("%s number%d", shared, i), skills...))
		}
		return out
	}
	tests := []struct {
		name      string
		runs      []PastRun
		opt       MemoryOptions
		want      []memDoc // nil: no memory
		wantStats MemoryStats
	}{
		{"no runs", nil, MemoryOptions{}, nil, MemoryStats{}},
		{"no task", []PastRun{run("  ", 1), run("", 2)}, MemoryOptions{}, nil, MemoryStats{NoTask: 2}},
		{"a word of one task is dropped", append(many(3, "convert invoice", 2, 1), run("convert invoice secret", 2, 1)),
			MemoryOptions{},
			[]memDoc{{skills: []uint32{1, 2}, runs: 4, tf: map[string]float32{"convert": 4, "invoic": 4}}},
			MemoryStats{Runs: 4, Sets: 1, TermsKept: 2, TermsDropped: 4}}, // number0..2, secret
		{"identical tasks merge: one text, three runs", []PastRun{run("parse the log", 1), run("parse the log", 1), run("parse the log ", 1)},
			MemoryOptions{}, nil, MemoryStats{TermsDropped: 2}},
		{"identical tasks merge: their words count once", append(many(2, "parse log", 1), run("parse log", 1), run("parse log", 1)),
			MemoryOptions{},
			[]memDoc{{skills: []uint32{1}, runs: 4, tf: map[string]float32{"pars": 3, "log": 3}}},
			MemoryStats{Runs: 4, Sets: 1, TermsKept: 2, TermsDropped: 2}},
		{"per set cap keeps the newest", []PastRun{run("alpha beta", 1), run("alpha gamma", 1), run("alpha delta", 1), run("alpha beta", 1)},
			MemoryOptions{MinRuns: 1, PerSet: 2},
			// newest first: "alpha beta" (run 4), "alpha delta" (run 3); "alpha gamma" capped
			[]memDoc{{skills: []uint32{1}, runs: 3, tf: map[string]float32{"alpha": 2, "beta": 1, "delta": 1}}},
			MemoryStats{Runs: 3, Capped: 1, Sets: 1, TermsKept: 3}},
		{"failed runs in their own document", append(many(3, "resize image", 1, 2), PastRun{Task: "resize image", Skills: []int{2, 1}, Failed: true}),
			MemoryOptions{},
			[]memDoc{
				{skills: []uint32{1, 2}, runs: 1, failed: true, tf: map[string]float32{"resiz": 1, "imag": 1}},
				{skills: []uint32{1, 2}, runs: 3, tf: map[string]float32{"resiz": 3, "imag": 3}},
			},
			MemoryStats{Runs: 4, Sets: 2, TermsKept: 2, TermsDropped: 3}},
		{"one reporter is never admitted", append(many(3, "send mail", 1),
			reported("token:m", "send mail now", 5), reported("token:m", "send mail now", 5), reported("token:m", "send mail later", 5)),
			MemoryOptions{},
			[]memDoc{{skills: []uint32{1}, runs: 3, tf: map[string]float32{"send": 3, "mail": 3}}},
			MemoryStats{Runs: 3, Sets: 1, Unagreed: 1, TermsKept: 2, TermsDropped: 3}},
		{"two reporters agree: once each, their newest task", append(many(3, "send mail", 1),
			reported("token:a", "send mail now", 5), reported("token:a", "send mail urgently", 5), reported("loopback", "send mail urgently", 5)),
			MemoryOptions{MinRuns: 2},
			[]memDoc{
				{skills: []uint32{1}, runs: 3, tf: map[string]float32{"send": 3, "mail": 3}},
				{skills: []uint32{5}, runs: 2, tf: map[string]float32{"send": 2, "mail": 2, "urgently": 2}},
			},
			// "urgently" is the two reporters' alone: kept with MinRuns 2; the older "now" not at all
			MemoryStats{Runs: 5, Sets: 2, TermsKept: 3, TermsDropped: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, st := BuildMemory(tc.runs, tc.opt)
			if got := memDocs(m); !equalDocs(got, tc.want) {
				t.Errorf("documents\n got  %+v\n want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(st, tc.wantStats) {
				t.Errorf("stats %+v, want %+v", st, tc.wantStats)
			}
			if m == nil {
				return
			}
			if !slices.IsSorted(m.Terms) || m.Depth != memDepth || m.Weight != 0 {
				t.Errorf("terms %q, depth %d, weight %v", m.Terms, m.Depth, m.Weight)
			}
			// What BuildMemory makes is a valid artifact's memory.
			a := &graphs.Artifact{Skills: make([]graphs.Skill, 6), Lexicon: graphs.Lexicon{DocLen: make([]float32, 6)}, Memory: m}
			for i := range a.Skills {
				a.Skills[i].Name = fmt.Sprint("s", i)
			}
			if _, err := graphs.Encode(a); err != nil {
				t.Errorf("the memory does not encode: %v", err)
			}
		})
	}
}

func equalDocs(a, b []memDoc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i].skills, b[i].skills) || a[i].runs != b[i].runs || a[i].failed != b[i].failed || len(a[i].tf) != len(b[i].tf) {
			return false
		}
		for k, v := range a[i].tf {
			if b[i].tf[k] != v {
				return false
			}
		}
	}
	return true
}
