package engine

import (
	"encoding/json"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib/fixture"
)

func TestLearningOf(t *testing.T) {
	skills := []testSkill{{"a", "Alpha task.", ""}, {"b", "Beta task.", ""}, {"c", "Gamma task.", ""}}
	edge := func(s, d int, st graphs.State) graphs.Edge {
		return graphs.Edge{Source: s, Target: d, Weight: 0.5, Assoc: 0.5, State: st, Type: graphs.Workflow}
	}
	live := []graphs.Edge{edge(0, 1, graphs.Confirmed), edge(1, 2, graphs.Uncertain), edge(2, 0, graphs.Scaffold)}
	scaffold := []graphs.Edge{edge(0, 1, graphs.Scaffold)}
	tests := []struct {
		name     string
		params   map[string]any
		edges    []graphs.Edge
		want     Learning // without Note
		noteHas  []string
		noteLack []string
	}{
		{"no parameters, no edges", nil, nil, Learning{Cold: true},
			[]string{"learned nothing yet", "adds nothing", "caskg gateway", "caskg traces import", "caskg update", "feedback"}, nil},
		{"text only", map[string]any{"traces": 0}, live, Learning{Live: 2, Cold: true},
			[]string{"nothing from use yet", "2 live edges", "text alone", "caskg gateway"}, nil},
		{"scaffold is not live", map[string]any{"traces": 0}, scaffold, Learning{Cold: true},
			[]string{"no live edges"}, nil},
		{"learned", map[string]any{"traces": 12}, live, Learning{Runs: 12, Live: 2},
			[]string{"learned from 12 runs", "2 live edges"}, []string{"caskg gateway"}},
		{"one run, no live edge", map[string]any{"traces": 1}, scaffold, Learning{Runs: 1},
			[]string{"1 run", "no live edges"}, []string{"caskg gateway"}},
		{"runs not a whole number", map[string]any{"traces": 2.5}, live, Learning{Live: 2, Cold: true}, nil, nil},
		{"runs not a number", map[string]any{"traces": "7", "variant": "full"}, live, Learning{Live: 2, Cold: true}, nil, nil},
		{"runs beside other parameters", map[string]any{"lambda": map[string]any{"traces": 0.2}, "traces": 3, "variant": "full"}, live,
			Learning{Runs: 3, Live: 2}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			art := testArtifact(skills, tt.edges)
			art.Params = tt.params
			got := LearningOf(artifactEngine(t, art).Graph())
			note := got.Note
			got.Note = ""
			if got != tt.want {
				t.Errorf("LearningOf = %+v, want %+v", got, tt.want)
			}
			fixture.Contains(t, "the note", note, tt.noteHas, tt.noteLack)
		})
	}
}

func FuzzParamRuns(f *testing.F) {
	for _, s := range []string{`{"traces":3}`, `{"traces":-1}`, `{"traces":1e3}`, `[]`, `{"a":{"traces":2}}`, `{`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if n := paramRuns(p); n < 0 {
			t.Errorf("paramRuns(%q) = %d", p, n)
		}
	})
}

func TestLearningAppendJSON(t *testing.T) {
	for _, l := range []Learning{{}, {Runs: 3, Live: 12, Note: "a \"quoted\" <note>\n"}, {Cold: true, Note: howItLearns}} {
		want, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON = %s, want %s", got, want)
		}
	}
}
