package host_test

import (
	"os"
	"sync"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
)

// Inputs, relative to this package. The shared data sits beside the project and is read in
// place; tests that need it skip without it.
const (
	sampleLib    = "../../graphs/sample"
	sampleTasks  = "../../graphs/sample-tasks.jsonl"
	shared       = "../../../shared/data"
	toolsCatalog = shared + "/eval/toollinkos/tools.json"
	toolsTasks   = shared + "/eval/toollinkos/tasks_test.jsonl"
	realSkills   = shared + "/skills"
	realTasks    = shared + "/eval/skillsbench/tasks.jsonl"
)

// fixture is an artifact built with the native builder, and tasks to ask it.
type fixture struct {
	artifact []byte
	graph    *graphs.Graph
	tasks    []testlib.Task
	err      error
}

// buildFixture builds the artifact of a library with the default options and no semantic model,
// as `caskg build --embedder none` does.
func buildFixture(lib, tasks string, maxTasks int) fixture {
	data, err := testlib.BuildPlain(lib, 0)
	if err != nil {
		return fixture{err: err}
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return fixture{err: err}
	}
	ts, err := testlib.ReadTasks(tasks, false)
	if err != nil {
		return fixture{err: err}
	}
	if maxTasks > 0 && len(ts) > maxTasks {
		ts = ts[:maxTasks]
	}
	return fixture{artifact: data, graph: g, tasks: ts}
}

var (
	sampleFixture = sync.OnceValue(func() fixture { return buildFixture(sampleLib, sampleTasks, 0) })
	toolsFixture  = sync.OnceValue(func() fixture { return buildFixture(toolsCatalog, toolsTasks, 200) })
	skillsFixture = sync.OnceValue(func() fixture { return buildFixture(realSkills, realTasks, 0) })
)

// need returns the fixture, skipping the test when its shared data is absent.
func need(tb testing.TB, f func() fixture, sharedPath string) fixture {
	tb.Helper()
	if sharedPath != "" {
		if _, err := os.Stat(sharedPath); err != nil {
			tb.Skipf("shared data not found (%v); it sits beside the project as ../shared", err)
		}
	}
	fx := f()
	if fx.err != nil {
		tb.Fatal(fx.err)
	}
	return fx
}
