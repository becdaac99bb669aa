package testlib

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
)

// MemoryQuery is a task that SampleMemory's memory of past tasks answers: its words are in no
// skill's text, only in the tasks of the runs that used the skills MemorySkills names.
const MemoryQuery = "heat the water for the zorblax ritual"

// MemorySkills are the tool set of the runs whose tasks asked for MemoryQuery's words.
var MemorySkills = []string{"brew-tea-in-kettle", "turn-on-stove-burner"}

// memoryRuns are runs with task text over the sample library: per made-up phrase (no skill's
// text has its words) eight tasks in other words that used one tool set, so that each phrase's
// terms are shared by enough distinct tasks to be kept, and held-out tasks find their tool set
// through the memory alone, which calibration rewards with a nonzero weight.
func memoryRuns() []builder.Trace {
	phrases := []struct {
		words  string
		skills []string
	}{
		{"zorblax ritual", MemorySkills},
		{"quenfit routine", []string{"charge-phone-battery", "turn-on-lamp"}},
		{"vimbrel chores", []string{"water-lawn-with-sprinkler", "rewater-dry-plant"}},
	}
	frames := []string{"do the %s", "time for the %s again", "start my %s now", "the usual %s please",
		"%s before lunch", "could you run the %s", "finish the %s today", "%s as always"}
	var runs []builder.Trace
	for _, p := range phrases {
		for i, f := range frames {
			runs = append(runs, builder.Trace{ID: p.words + string(rune('a'+i)), Skills: p.skills,
				Task: fmt.Sprintf(f, p.words)})
		}
	}
	return runs
}

var sampleMemory = sync.OnceValues(func() ([]byte, error) {
	r, err := root()
	if err != nil {
		return nil, err
	}
	lib, err := ingest.Load(filepath.Join(r, "graphs", "sample"))
	if err != nil {
		return nil, err
	}
	res, err := builder.Build(context.Background(), builder.Input{Skills: lib.Skills, Runs: memoryRuns()})
	if err != nil {
		return nil, err
	}
	return res.Artifact, nil
})

// SampleMemory returns the artifact of the sample library built with runs that carry task text,
// so that it holds a memory of past tasks that speaks (a nonzero weight, which it checks):
// MemoryQuery raises MemorySkills. Built once per test binary: callers share it and must not
// modify it.
func SampleMemory(tb testing.TB) []byte {
	tb.Helper()
	data := artifact(tb, sampleMemory)
	g, err := graphs.Decode(data)
	if err != nil {
		tb.Fatal(err)
	}
	if _, _, _, w, _, _ := g.MemoryParams(); !g.HasMemory() || w == 0 {
		var p map[string]json.RawMessage
		json.Unmarshal(g.Params(), &p)
		tb.Fatalf("testlib: the sample's memory of past tasks is silent (weight 0): %s", p["memory"])
	}
	return data
}

// SampleMemoryFile writes SampleMemory to a file of the test's own and returns the path.
func SampleMemoryFile(tb testing.TB) string {
	tb.Helper()
	return tempFile(tb, "memory.skg", SampleMemory(tb))
}
