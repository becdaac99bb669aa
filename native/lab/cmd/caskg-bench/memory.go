package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/lab/internal/bench"
	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
)

// memoryTasks is how many of the new runs' task texts the memory stage times as queries.
const memoryTasks = 200

// memoryStage is the memory-of-past-tasks stage: runs with task text (synth.TaskRuns over
// c.memorySpec.flows workflows) at scale. It times caskg update of a build with its old runs by
// its new ones against a full build with them all (timeUpdate, which checks the two
// artifacts byte-identical), builds the same library without runs (-mode plain), and times
// queries on both artifacts natively and, with mod, over wazero: the SkillsBench task texts and
// memoryTasks of the new runs' own task texts (what agents search with).
func memoryStage(c *config, mod *host.Module) (*bench.Memory, error) {
	spec := c.memorySpec
	u, dir, err := timeUpdate(c, spec)
	if err != nil {
		return nil, err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	common := []string{"-n", strconv.Itoa(spec.skills), "-base", c.base, "-runs", p("runs-old.jsonl"), "-new", p("runs-new.jsonl")}
	for _, mode := range []string{"plain", "notask"} {
		if _, err := updateChild(append(common, "-mode", mode, "-o", p(mode+".skg"))); err != nil {
			return nil, err
		}
	}
	var arts [3][]byte // without runs, runs without task text, runs with it (the memory)
	for i, name := range []string{"plain.skg", "notask.skg", "full.skg"} {
		if arts[i], err = os.ReadFile(p(name)); err != nil {
			return nil, err
		}
	}
	g, err := graphs.Decode(arts[2])
	if err != nil {
		return nil, err
	}
	m := &bench.Memory{Skills: spec.skills, Runs: spec.runs + spec.newRuns, Workflows: spec.flows,
		PlainBytes: len(arts[0]), NoTaskBytes: len(arts[1]), Bytes: len(arts[2]), Update: u}
	if !g.HasMemory() {
		return nil, fmt.Errorf("memory stage: the build with %d runs has no memory (calibration silenced it)", m.Runs)
	}
	for _, s := range g.Sections() {
		if s.Tag[0] == 'M' {
			m.MemoryBytes += s.Length
		}
	}
	_, _, _, w, _, _ := g.MemoryParams()
	m.Docs, m.Terms, m.Weight = g.NumMemoryDocs(), g.NumMemoryTerms(), float64(w)

	tasks, err := eval.ReadTasks(c.tasks, false)
	if err != nil {
		return nil, err
	}
	kinds := []struct {
		name    string
		queries []string
	}{{"SkillsBench tasks", nil}, {"runs' own tasks", nil}}
	for _, t := range tasks {
		kinds[0].queries = append(kinds[0].queries, t.Query)
	}
	runs, err := builder.ReadTraces(p("runs-new.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, r := range runs[:min(len(runs), memoryTasks)] {
		kinds[1].queries = append(kinds[1].queries, r.Task)
	}
	kinds[0].name = strconv.Itoa(len(kinds[0].queries)) + " " + kinds[0].name
	kinds[1].name = strconv.Itoa(len(kinds[1].queries)) + " " + kinds[1].name

	ctx := context.Background()
	hosts := []string{"native"}
	if mod != nil {
		hosts = append(hosts, "wazero")
	}
	for _, h := range hosts {
		for _, k := range kinds {
			lat, err := hostLatency(ctx, h, mod, arts[:], k.queries, c.rounds, c.minTime)
			if err != nil {
				return nil, fmt.Errorf("memory stage: %s: %w", h, err)
			}
			row := bench.MemoryLatency{Host: h, Kind: k.name, Plain: *lat[0], NoTask: *lat[1], Memory: *lat[2]}
			m.Latency = append(m.Latency, row)
			fmt.Fprintf(os.Stderr, "memory stage: %s, %s: median %.3f ms without runs, %.3f ms with runs without task text, %.3f ms with the memory\n",
				h, k.name, row.Plain.MedianMs, row.NoTask.MedianMs, row.Memory.MedianMs)
		}
	}
	return m, nil
}

// hostLatency times queries (k = 10) on each of arts natively or over wazero, as timeQueries
// times them, but interleaved: each query is asked of every artifact in turn, so that a change
// in the machine's load falls on all of them.
func hostLatency(ctx context.Context, h string, mod *host.Module, arts [][]byte, queries []string, rounds int, minTime time.Duration) ([]*bench.Latency, error) {
	asks := make([]func(string) error, len(arts))
	for i, data := range arts {
		switch h {
		case "native":
			g, err := graphs.Decode(data)
			if err != nil {
				return nil, err
			}
			eng := engine.New(g)
			asks[i] = func(q string) error {
				_, err := eng.Query(engine.Request{Query: q, K: 10})
				return err
			}
		case "wazero":
			e, err := mod.Load(ctx, data)
			if err != nil {
				return nil, err
			}
			defer e.Close(ctx)
			lines := make(map[string][]byte, len(queries))
			for _, q := range queries {
				lines[q], _ = json.Marshal(engine.Request{Query: q, K: 10})
			}
			asks[i] = func(q string) error {
				_, err := e.QueryJSON(ctx, lines[q])
				return err
			}
		default:
			return nil, fmt.Errorf("host %q is not native or wazero", h)
		}
	}
	lat := make([][]time.Duration, len(arts))
	k := 0
	_, err := timeQueries(queries, rounds, minTime, func(q string) error {
		// timeQueries times this call, all artifacts together; each is timed on its own here.
		for i, ask := range asks {
			t := time.Now()
			if err := ask(q); err != nil {
				return err
			}
			if k >= len(queries) { // the warm-up pass is not timed
				lat[i] = append(lat[i], time.Since(t))
			}
		}
		k++
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*bench.Latency, len(arts))
	for i := range lat {
		out[i] = latency(lat[i])
	}
	return out, nil
}

// memorySection is docs/benchmarks.md's memory-of-past-tasks section.
func memorySection(b *strings.Builder, r *bench.Report, c *config) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	m := r.Memory
	u := m.Update
	p("## Memory of past tasks at scale\n\n")
	p("Runs that carry task text give the artifact a memory of past tasks (`wasm/engine/memory.go`). The stage\n")
	p("grows the %s-skill `synth` library and makes %s runs with task text with\n", mdspan.Count(m.Skills), mdspan.Count(u.OldRuns))
	p("[synth.TaskRuns](../native/internal/lab/synth/tasks.go): %s workflows (3 to 5 skills of one variant group), the\n", mdspan.Count(m.Workflows))
	p("popular ones more often, one run in eight with one skill swapped; each task 6 to 10 words of the\n")
	p("workflow's skills' descriptions, 2 or 3 filler words common to all tasks and a reference number of its own.\n")
	p("Then %s more (1%%). It builds the library three times: without runs, with all %s runs stripped of their\n", mdspan.Count(u.NewRuns), mdspan.Count(m.Runs))
	p("task text (the edges they teach, no memory) and with them whole (edges and memory). It times queries\n")
	p("(k = 10, passes as above, the three artifacts in turn per query) natively and over wazero, on the SkillsBench\n")
	p("task texts and on %d of the new runs' own task texts, which the memory answers. The memory's cost is its\n", memoryTasks)
	p("artifact against the one without task text: the edges of %s runs cost far more than the memory beside\n", mdspan.Count(m.Runs))
	p("them (the last column). Then artifact bytes, and, as in the incremental-update section, `caskg update` of the\n")
	p("build with %s runs by the %s new ones against a full build (%s, median; the artifacts byte-identical).\n",
		mdspan.Count(u.OldRuns), mdspan.Count(u.NewRuns), rounds(len(u.Full.Rounds)))
	p("The build state keeps what the runs add up to and the memory's corpus, so the update reads only the new runs;\n")
	p("what it redoes over all of them is what every new run moves: the runs' prior and channel, the memory and its\n")
	p("calibration (1,000 held-out runs asked of the new graph; each fold's memory patched from the whole one). The\n")
	p("memory of every run and the held-out runs' votes of their folds' memories are made beside the candidates, the\n")
	p("term frequencies counted again only for the tool sets new runs touched and those holding a term the privacy\n")
	p("rule now judges otherwise (the state keeps the rest), and the artifact is encoded once, its memory added to it.\n\n")
	b.WriteString(r.MemoryTable())
	b.WriteString("\n")
	b.WriteString(r.MemorySizeTable())
	p("\nBuild stages of the full build (s): %s; of the update: %s.\n", stages(u.Full.Stages), stages(u.Update.Stages))
	p("\n```sh\nbin/caskg-bench -memory-only -memory-skills %d -memory-runs %d -memory-new %d -memory-flows %d -memory-rounds %d   # this section alone (make bench runs it; -memory=false skips it)\n```\n\n",
		m.Skills, u.OldRuns, u.NewRuns, m.Workflows, max(len(u.Full.Rounds), 1))
}

// stages is a build's seconds per stage, the slowest first, those of 0.05 s and more.
func stages(st map[string]float64) string {
	names := make([]string, 0, len(st))
	for k, v := range st {
		if v >= 0.05 {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if st[a] != st[b] {
			if st[a] > st[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.2f", k, st[k])
	}
	if len(parts) == 0 {
		return "none above 0.05"
	}
	return strings.Join(parts, ", ")
}
