// Command caskg-bench is `make bench`: it grows libraries from the real skills with native/internal/lab/synth
// (documented there), builds each in a process of its own (build time, peak memory, artifact
// bytes), times queries natively, over wazero and in Node, measures forward push against power
// iteration and the semantic prefilter against the exact scan on the largest library, runs caskg
// beside the JavaScript search libraries in Node (wasm/js/bench-peers.mjs, the peers installed by
// make peers), times caskg update against a full build on a 10,000-skill library with 1% new
// runs (the update stage, update.go), measures the memory of past tasks on 1,000 skills and
// 100,000 runs with task text (the memory stage, memory.go), prints the tables and writes docs/benchmarks.md and the summary
// section of docs/evaluation.md between its markers. Every query latency is measured on two kinds of query: the full
// task texts, and the same texts cut to their first 12 words, as agents' short queries.
//
//	caskg-bench [-sizes 1000,10000,100000] [-curve 2000,5000,20000,50000] [-dir bin/bench]
//	            [-wasm bin/caskg.wasm] [-o docs/benchmarks.md] [-summary docs/evaluation.md] [-reuse]
//	            [-peers .cache/peers] [-peer-sizes real,10000,100000] [-peer-budget 90]
//	            [-update=false | -update-only] [-update-skills 10000] [-update-runs 2000] [-update-new 20]
//	            [-update-rounds 3] [-memory=false | -memory-only] [-memory-skills 1000]
//	            [-memory-runs 100000] [-memory-new 1000] [-memory-flows 10000] [-memory-rounds 1]
//	caskg-bench gateway [-o docs/benchmarks.md] GO-TEST-OUTPUT...
//
// The gateway subcommand is make bench-gateway's: it reads the output of the gateway's Go
// benchmarks (go test -bench) and writes their tables into docs/benchmarks.md between the markers
// <!-- gateway-bench:begin --> and <!-- gateway-bench:end --> (appended when the file has
// neither); the rest of caskg-bench keeps that section when it rewrites the file.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
	"github.com/caskg/caskg/native/internal/memlimit"
	"github.com/caskg/caskg/native/lab/internal/bench"
	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
	"github.com/caskg/caskg/wasm/modbuild"
)

type config struct {
	sizes, curve  []int
	base, tasks   string
	dir, wasm     string
	out, summary  string
	reuse, noWasm bool
	rounds        int
	minTime       time.Duration // the least time of timed passes per host or peer, library and query kind
	pushEps       []float64
	pushQueries   int
	peers         string     // where make peers installed the JavaScript peers; "" for none
	peerSizes     []int      // libraries for the side-by-side run, 0 the real one
	peerBudget    float64    // seconds per system and query kind (bench-peers.mjs --budget)
	update        bool       // run the update stage
	updateOnly    bool       // run the update stage alone, into -dir's earlier results
	updateSpec    updateSpec // the update stage's library, runs and rounds
	memory        bool       // run the memory stage
	memoryOnly    bool       // run the memory stage alone, into -dir's earlier results
	memorySpec    updateSpec // the memory stage's, its runs with task text
}

// ShortWords is how many words of a task text make an agent's short query.
const ShortWords = 12

func main() {
	if len(os.Args) > 1 && os.Args[1] == "gateway" {
		if err := gatewayReport(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "caskg-bench:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && (os.Args[1] == "build-one" || os.Args[1] == "update-one") {
		child := buildOne
		if os.Args[1] == "update-one" {
			child = updateOne
		}
		if err := child(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "caskg-bench:", err)
			os.Exit(1)
		}
		return
	}
	c := config{
		updateSpec: updateSpec{name: "update", skills: 10000, runs: 2000, newRuns: 20, rounds: 3},
		memorySpec: updateSpec{name: "memory", skills: 1000, runs: 100000, newRuns: 1000, rounds: 1, flows: 10000},
	}
	sizes := flag.String("sizes", "1000,10000,100000", "synthesized library sizes to build and query")
	curve := flag.String("curve", "2000,5000,20000,50000", "further sizes to build only, for the build curve")
	flag.StringVar(&c.base, "base", "../shared/data/skills", "the real library the synthetic ones grow from")
	flag.StringVar(&c.tasks, "tasks", "../shared/data/eval/skillsbench/tasks.jsonl", "the queries to time (JSONL with \"query\")")
	flag.StringVar(&c.dir, "dir", "bin/bench", "where the artifacts and results.json go")
	flag.StringVar(&c.wasm, "wasm", "bin/caskg.wasm", "the module for the wazero and Node rows (make wasm)")
	flag.StringVar(&c.out, "o", "docs/benchmarks.md", "the report to write")
	flag.StringVar(&c.summary, "summary", "docs/evaluation.md", "the page whose bench section to rewrite (\"\" for none)")
	flag.BoolVar(&c.reuse, "reuse", false, "reuse artifacts and build rows of an earlier run in -dir")
	flag.BoolVar(&c.noWasm, "no-wasm", false, "native rows only")
	render := flag.Bool("render", false, "measure nothing: write the report and the summary section from -dir's results.json")
	flag.IntVar(&c.rounds, "rounds", 3, "passes over the tasks per host and library")
	flag.DurationVar(&c.minTime, "min-time", 2*time.Second, "every host and peer: timed passes continue past -rounds until this long (within -peer-budget)")
	flag.IntVar(&c.pushQueries, "push-queries", 87, "tasks for the push and prefilter accuracy")
	flag.StringVar(&c.peers, "peers", ".cache/peers", "the JavaScript peers installed by make peers (\"\": no side-by-side run)")
	peerSizes := flag.String("peer-sizes", "real,10000,100000", "libraries for the side-by-side run: real and sizes of -sizes")
	flag.Float64Var(&c.peerBudget, "peer-budget", 90, "seconds per peer and query kind before a slow peer stops")
	flag.BoolVar(&c.update, "update", true, "time caskg update against a full build (the update stage; -update=false skips it)")
	flag.BoolVar(&c.updateOnly, "update-only", false, "measure only the update stage: keep every other result of -dir's results.json and rewrite the report")
	c.updateSpec.flags(flag.CommandLine)
	flag.BoolVar(&c.memory, "memory", true, "the memory stage: runs with task text at scale (-memory=false skips it)")
	flag.BoolVar(&c.memoryOnly, "memory-only", false, "measure only the memory stage: keep every other result of -dir's results.json and rewrite the report")
	c.memorySpec.flags(flag.CommandLine)
	flag.Parse()
	var err error
	if c.sizes, err = ints(*sizes); err == nil {
		c.curve, err = ints(*curve)
	}
	if err == nil {
		c.peerSizes, err = libraries(*peerSizes)
	}
	if err == nil {
		err = c.checkUpdate(*render)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "caskg-bench:", err)
		os.Exit(2)
	}
	c.pushEps = []float64{1e-7, 1e-6, engine.PushEpsilon, 1e-4}
	switch {
	case *render:
		err = renderSaved(&c)
	case c.updateOnly:
		err = updateOnly(&c)
	case c.memoryOnly:
		err = memoryOnly(&c)
	default:
		err = run(&c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "caskg-bench:", err)
		os.Exit(1)
	}
}

// checkUpdate checks the update stage's flags.
func (c *config) checkUpdate(render bool) error {
	switch {
	case c.updateOnly && render:
		return errors.New("-update-only measures and -render does not: give one")
	case c.updateOnly && !c.update:
		return errors.New("-update-only with -update=false: nothing to run")
	case c.updateSpec.check() != nil:
		return c.updateSpec.check()
	case c.memoryOnly && (render || c.updateOnly):
		return errors.New("-memory-only measures the memory stage alone: not with -render or -update-only")
	case c.memoryOnly && !c.memory:
		return errors.New("-memory-only with -memory=false: nothing to run")
	case c.memory && c.memorySpec.check() != nil:
		return c.memorySpec.check()
	case c.memory && c.memorySpec.flows < 1:
		return fmt.Errorf("-memory-flows %d: must be at least 1", c.memorySpec.flows)
	}
	return nil
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("size %q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// libraries parses -peer-sizes: "real" (0, the real library) or sizes, comma-separated.
func libraries(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "real" {
			out = append(out, 0)
			continue
		}
		n, err := ints(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n...)
	}
	return out, nil
}

func run(c *config) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	tasks, err := eval.ReadTasks(c.tasks, false)
	if err != nil {
		return err
	}
	queries := make([]string, len(tasks))
	short := make([]string, len(tasks))
	for i, t := range tasks {
		queries[i] = t.Query
		short[i] = firstWords(t.Query, ShortWords)
	}
	r := &bench.Report{Machine: machine(), Go: runtime.Version(), Node: nodeVersion(), Tasks: strconv.Itoa(len(queries)) + " SkillsBench",
		Command: "make bench"}

	// Builds, each in a child process so that its peak RSS is its own.
	type lib struct {
		label string
		n     int
		path  string
		query bool
	}
	libs := []lib{{"real", 0, filepath.Join(c.dir, "real.skg"), true}}
	all := append(slices.Clone(c.sizes), c.curve...)
	slices.Sort(all)
	for _, n := range slices.Compact(all) {
		libs = append(libs, lib{"synth", n, filepath.Join(c.dir, fmt.Sprintf("synth-%d.skg", n)), slices.Contains(c.sizes, n)})
	}
	for _, l := range libs {
		row, err := buildChild(c, l.n, l.path)
		if err != nil {
			return err
		}
		row.Label = l.label
		r.Builds = append(r.Builds, row)
		fmt.Fprintf(os.Stderr, "built %s %d skills in %.1fs, peak RSS %.0f MB, %d edges\n", l.label, row.Skills, row.Seconds, row.PeakRSSMB, row.Edges)
	}

	var mod *host.Module
	ctx := context.Background()
	if !c.noWasm {
		cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(".cache", "wazero"))
		if err != nil {
			return err
		}
		defer cache.Close(ctx)
		var wasm []byte
		if mod, wasm, err = c.module(ctx, cache); err != nil {
			return err
		}
		defer mod.Close(ctx)
		r.Wasm = bench.Sizes{Raw: len(wasm), Gzip: modbuild.Gzip(wasm)}
	}
	for k, l := range libs {
		if !l.query {
			continue
		}
		data, err := os.ReadFile(l.path)
		if err != nil {
			return err
		}
		n := r.Builds[k].Skills
		q, eng, err := timeNative(data, queries, short, c.rounds, c.minTime)
		if err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
		q.Label, q.Skills = l.label, n
		r.Queries = append(r.Queries, q)
		fmt.Fprintf(os.Stderr, "native %s %d: median %.2f ms\n", l.label, n, q.MedianMs)
		if mod != nil {
			q, err := timeWazero(ctx, mod, data, queries, short, c.rounds, c.minTime)
			if err != nil {
				return fmt.Errorf("%s over wazero: %w", l.path, err)
			}
			q.Label, q.Skills = l.label, n
			r.Queries = append(r.Queries, q)
			fmt.Fprintf(os.Stderr, "wazero %s %d: median %.2f ms\n", l.label, n, q.MedianMs)
			if q, err = timeNode(c, l.path); err != nil {
				return fmt.Errorf("%s in Node: %w", l.path, err)
			}
			q.Label, q.Skills = l.label, n
			r.Queries = append(r.Queries, q)
			fmt.Fprintf(os.Stderr, "node %s %d: median %.2f ms\n", l.label, n, q.MedianMs)
		}
		if c.peers != "" && !c.noWasm && slices.Contains(c.peerSizes, l.n) {
			p, err := runPeers(c, l.label, l.n, l.path)
			if err != nil {
				return fmt.Errorf("%s beside the peers: %w", l.path, err)
			}
			r.Peers = append(r.Peers, p)
		}
		if l.label == "synth" && n == slices.Max(c.sizes) && n >= engine.LargeLibrary {
			pq := queries[:min(len(queries), c.pushQueries)]
			r.PushSize = n
			if r.Push, err = pushAccuracy(eng, pq, c.pushEps); err != nil {
				return err
			}
			sem, err := semanticIndexes(eng, pq)
			if err != nil {
				return err
			}
			r.Semantic = append(r.Semantic, sem...)
		}
	}

	if c.update {
		u, err := updateStage(c)
		if err != nil {
			return err
		}
		r.Updates = []bench.Update{u}
	}
	if c.memory {
		if r.Memory, err = memoryStage(c, mod); err != nil {
			return err
		}
	}
	return save(r, c)
}

// save writes results.json, then the report.
func save(r *bench.Report, c *config) error {
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := atomicfile.Write(filepath.Join(c.dir, "results.json"), append(js, '\n')); err != nil {
		return err
	}
	return write(r, c)
}

// updateOnly runs the update stage alone: its row replaces the saved run's, whose other results
// are kept.
func updateOnly(c *config) error {
	r, err := saved(c)
	if err != nil {
		return fmt.Errorf("-update-only keeps an earlier run's results: %w", err)
	}
	u, err := updateStage(c)
	if err != nil {
		return err
	}
	r.Updates = []bench.Update{u}
	return save(r, c)
}

// module reads -wasm and compiles it for one instance at a time, through cache unless it is
// nil; it returns the module's bytes too.
func (c *config) module(ctx context.Context, cache wazero.CompilationCache) (*host.Module, []byte, error) {
	wasm, err := os.ReadFile(c.wasm)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (make wasm builds it)", err)
	}
	mod, err := host.Compile(ctx, wasm, &host.Options{Cache: cache, Instances: 1})
	return mod, wasm, err
}

// memoryOnly runs the memory stage alone. With an earlier run's results in -dir, its results
// replace the saved run's, whose others are kept; without, it saves its own in -dir/memory.json
// and rewrites only the memory section of the report (between bench.MemoryBegin and
// bench.MemoryEnd, inserted when missing).
func memoryOnly(c *config) error {
	r, err := saved(c)
	fresh := errors.Is(err, os.ErrNotExist)
	if fresh {
		r, err = &bench.Report{Machine: machine(), Go: runtime.Version(), Node: nodeVersion(), Command: "make bench"}, nil
	}
	if err != nil {
		return err
	}
	var mod *host.Module
	ctx := context.Background()
	if !c.noWasm {
		if mod, _, err = c.module(ctx, nil); err != nil {
			return err
		}
		defer mod.Close(ctx)
	}
	if r.Memory, err = memoryStage(c, mod); err != nil {
		return err
	}
	if !fresh {
		return save(r, c)
	}
	js, _ := json.MarshalIndent(r.Memory, "", "  ")
	if err := atomicfile.Write(filepath.Join(c.dir, "memory.json"), append(js, '\n')); err != nil {
		return err
	}
	fmt.Print("Memory of past tasks\n" + r.MemoryTable() + "\n" + r.MemorySizeTable())
	var section strings.Builder
	memorySection(&section, r, c)
	old, err := os.ReadFile(c.out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return atomicfile.Write(c.out, []byte(bench.WithMemorySection(string(old), section.String())))
}

// saved reads the results of an earlier run from -dir.
func saved(c *config) (*bench.Report, error) {
	path := filepath.Join(c.dir, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r bench.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// renderSaved writes the report of an earlier run.
func renderSaved(c *config) error {
	r, err := saved(c)
	if err != nil {
		return err
	}
	return write(r, c)
}

// write prints the tables and writes the report and the summary section.
func write(r *bench.Report, c *config) error {
	fmt.Print(r.Terminal())
	doc := document(r, c)
	if old, err := os.ReadFile(c.out); err == nil {
		doc = bench.KeepGatewaySection(doc, string(old))
	}
	if err := atomicfile.Write(c.out, []byte(doc)); err != nil {
		return err
	}
	if c.summary != "" {
		link, err := filepath.Rel(filepath.Dir(c.summary), c.out)
		if err != nil {
			return fmt.Errorf("caskg-bench: -summary %s: %w", c.summary, err)
		}
		return mdspan.UpdateFile(c.summary, bench.BeginMarker, bench.EndMarker, []byte(r.Summary(filepath.ToSlash(link))))
	}
	return nil
}

// buildChild builds library n (0: the real one) in a child process and returns its row.
func buildChild(c *config, n int, out string) (bench.Build, error) {
	rowPath := out + ".json"
	if c.reuse {
		if b, err := os.ReadFile(rowPath); err == nil {
			if _, err := os.Stat(out); err == nil {
				var row bench.Build
				if err := json.Unmarshal(b, &row); err == nil {
					return row, nil
				}
			}
		}
	}
	var row bench.Build
	b, err := child(&row, "build-one", "-n", strconv.Itoa(n), "-base", c.base, "-o", out)
	if err != nil {
		return bench.Build{}, fmt.Errorf("building %d skills: %w", n, err)
	}
	return row, atomicfile.Write(rowPath, b)
}

// child runs this program with args in a process of its own (so each measurement has its own
// peak RSS), its stderr passed through, and decodes the JSON it prints into v. It returns what
// the child printed.
func child(v any, args ...string) ([]byte, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", args[0], err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s printed %q: %w", args[0], b, err)
	}
	return b, nil
}

// buildOne is the child: grow, embed, build, write the artifact, print the row as JSON.
func buildOne(args []string) error {
	fs := flag.NewFlagSet("build-one", flag.ContinueOnError)
	n := fs.Int("n", 0, "skills to synthesize; 0 builds the base library as it is")
	base := fs.String("base", "", "base library")
	out := fs.String("o", "", "artifact")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	lib, err := ingest.Load(*base)
	if err != nil {
		return err
	}
	skills := lib.Skills
	if *n > 0 {
		if skills, err = synth.Grow(lib.Skills, *n); err != nil {
			return err
		}
	}
	memlimit.ForSkills(len(skills)) // as caskg build does
	res, err := builder.Build(context.Background(), builder.Input{Skills: skills})
	if err != nil {
		return err
	}
	data, rep := res.Artifact, res.Report
	secs := time.Since(start).Seconds()
	if err := atomicfile.Write(*out, data); err != nil {
		return err
	}
	g, err := graphs.Decode(data)
	if err != nil {
		return err
	}
	sections := map[string]int{}
	for _, s := range g.Sections() {
		sections[s.Tag] += s.Length
	}
	row := bench.Build{Skills: len(skills), Seconds: secs, Stages: rep.StageSeconds, PeakRSSMB: peakRSSMB(),
		Candidates: rep.Candidates, Edges: rep.Published, Bytes: len(data), Sections: sections}
	return json.NewEncoder(os.Stdout).Encode(row)
}

// timeNative is the engine called in process: load = decode and prepare; then the queries timed
// as timeQueries times them.
func timeNative(data []byte, queries, short []string, rounds int, minTime time.Duration) (bench.Query, *engine.Engine, error) {
	t := time.Now()
	g, err := graphs.Decode(data)
	if err != nil {
		return bench.Query{}, nil, err
	}
	eng := engine.New(g)
	load := time.Since(t)
	query := func(q string) error {
		_, err := eng.Query(engine.Request{Query: q, K: 10})
		return err
	}
	lat, err := timeQueries(queries, rounds, minTime, query)
	if err != nil {
		return bench.Query{}, nil, err
	}
	q := summarize("native", lat)
	q.LoadMs = msec(load)
	lat, err = timeQueries(short, rounds, minTime, query)
	q.Words12 = latency(lat)
	return q, eng, err
}

// timeWazero is the module over wazero: request JSON in, response JSON out.
func timeWazero(ctx context.Context, mod *host.Module, data []byte, queries, short []string, rounds int, minTime time.Duration) (bench.Query, error) {
	t := time.Now()
	e, err := mod.Load(ctx, data)
	if err != nil {
		return bench.Query{}, err
	}
	load := time.Since(t)
	defer e.Close(ctx)
	lines := make(map[string][]byte, len(queries)+len(short))
	for _, q := range append(slices.Clone(queries), short...) {
		lines[q], _ = json.Marshal(engine.Request{Query: q, K: 10})
	}
	query := func(q string) error {
		_, err := e.QueryJSON(ctx, lines[q])
		return err
	}
	lat, err := timeQueries(queries, rounds, minTime, query)
	if err != nil {
		return bench.Query{}, err
	}
	q := summarize("wazero", lat)
	q.LoadMs = msec(load)
	lat, err = timeQueries(short, rounds, minTime, query)
	q.Words12 = latency(lat)
	return q, err
}

// timeNode runs wasm/js/bench.mjs, Node's side, and reads its JSON line.
func timeNode(c *config, artifact string) (bench.Query, error) {
	cmd := exec.Command("node", "wasm/js/bench.mjs", c.wasm, artifact, c.tasks, "10", strconv.Itoa(c.rounds), seconds(c.minTime), "--json")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return bench.Query{}, err
	}
	var res struct {
		Queries        int
		Median, P95    float64
		Load           float64
		Compile, Total float64
		Words12        struct {
			Queries     int
			Median, P95 float64
		}
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &res); err != nil {
		return bench.Query{}, fmt.Errorf("bench.mjs printed %q: %w", b, err)
	}
	q := bench.Query{Host: "node", Queries: res.Queries, MedianMs: res.Median, P95Ms: res.P95, LoadMs: res.Load}
	if w := res.Words12; w.Queries > 0 {
		q.Words12 = &bench.Latency{Queries: w.Queries, MedianMs: w.Median, P95Ms: w.P95}
	}
	return q, nil
}

// runPeers writes the library's texts beside its artifact (PeerText of every skill, JSONL) and
// runs wasm/js/bench-peers.mjs on them in one Node process.
func runPeers(c *config, label string, n int, artifact string) (bench.PeerRun, error) {
	lib, err := ingest.Load(c.base)
	if err != nil {
		return bench.PeerRun{}, err
	}
	skills := lib.Skills
	if n > 0 {
		if skills, err = synth.Grow(lib.Skills, n); err != nil {
			return bench.PeerRun{}, err
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, s := range skills {
		if err := enc.Encode(struct {
			Name string `json:"name"`
			Text string `json:"text"`
		}{s.Name, PeerText(s)}); err != nil {
			return bench.PeerRun{}, err
		}
	}
	docs := artifact + ".docs.jsonl"
	if err := atomicfile.Write(docs, buf.Bytes()); err != nil {
		return bench.PeerRun{}, err
	}
	cmd := exec.Command("node", "--expose-gc", "--max-old-space-size=8192", "wasm/js/bench-peers.mjs",
		"--wasm", c.wasm, "--artifact", artifact, "--docs", docs, "--tasks", c.tasks, "--peers", c.peers,
		"--rounds", strconv.Itoa(c.rounds), "--min-time", seconds(c.minTime), "--budget", strconv.FormatFloat(c.peerBudget, 'g', -1, 64), "--json")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return bench.PeerRun{}, fmt.Errorf("wasm/js/bench-peers.mjs: %w (make peers installs the peers)", err)
	}
	var run bench.PeerRun
	if err := json.Unmarshal(bytes.TrimSpace(b), &run); err != nil {
		return bench.PeerRun{}, fmt.Errorf("wasm/js/bench-peers.mjs printed %q: %w", b, err)
	}
	run.Label = label
	return run, nil
}

// PeerText is the text every system in the side-by-side run indexes for a skill, what the BM25
// reference of ../shared/tools/score.py indexes: name, title, description, the parameters
// (inputs and outputs: name with underscores as spaces, type, description), tags, schema text
// and body, one per line, cut to its first 4,000 characters as score.py cuts a SKILL.md.
func PeerText(s ingest.Skill) string {
	parts := []string{s.Name, s.Title, s.Description}
	for _, f := range slices.Concat(s.Inputs, s.Outputs) {
		parts = append(parts, strings.Join(strings.Fields(strings.ReplaceAll(f.Name, "_", " ")+" "+f.Type+" "+f.Description), " "))
	}
	parts = append(parts, strings.Join(s.Tags, " "), s.SchemaText, s.Body)
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	text := strings.Join(kept, "\n")
	if r := []rune(text); len(r) > 4000 {
		text = string(r[:4000])
	}
	return text
}

// seconds is d in seconds, as the Node scripts take it.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }

// firstWords is the first n whitespace-separated words of text, joined by single spaces.
func firstWords(text string, n int) string {
	w := strings.Fields(text)
	return strings.Join(w[:min(n, len(w))], " ")
}

// timeQueries runs one warm-up pass over queries, collects garbage (as Go's benchmarks do
// before timing, so that an earlier stage's garbage is not collected during this one), then
// times passes over them, each query on its own: at least rounds passes and at least minTime of
// them, so that a fast host's median does not rest on a few hundred samples of a 2-core machine
// shared with other work (the Node scripts take the same rule).
func timeQueries(queries []string, rounds int, minTime time.Duration, query func(string) error) ([]time.Duration, error) {
	for _, q := range queries {
		if err := query(q); err != nil {
			return nil, err
		}
	}
	runtime.GC()
	var lat []time.Duration
	start := time.Now()
	for r := 0; r < rounds || time.Since(start) < minTime; r++ {
		for _, q := range queries {
			t := time.Now()
			if err := query(q); err != nil {
				return nil, err
			}
			lat = append(lat, time.Since(t))
		}
	}
	return lat, nil
}

// latency is the median and 95th percentile of lat.
func latency(lat []time.Duration) *bench.Latency {
	q := summarize("", lat)
	return &bench.Latency{Queries: q.Queries, MedianMs: q.MedianMs, P95Ms: q.P95Ms}
}

func summarize(host string, lat []time.Duration) bench.Query {
	if len(lat) == 0 {
		return bench.Query{Host: host}
	}
	slices.Sort(lat)
	return bench.Query{Host: host, Queries: len(lat), MedianMs: msec(lat[len(lat)/2]), P95Ms: msec(lat[len(lat)*95/100])}
}

func msec(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// pushAccuracy compares forward push at each threshold with power iteration run to an L1 change
// of 1e-10, from the seeds the engine picks for each query.
func pushAccuracy(eng *engine.Engine, queries []string, epss []float64) ([]bench.Push, error) {
	rows := make([]bench.Push, len(epss))
	for i := range rows {
		rows[i].Eps = epss[i]
	}
	for _, q := range queries {
		pi, err := eng.Personalization(engine.Request{Query: q, K: 10})
		if err != nil {
			return nil, err
		}
		exact, _ := eng.PowerIteration(pi, engine.DefaultGamma, 1e-10, 2000)
		want := top10(exact)
		for i, eps := range epss {
			t := time.Now()
			p, res, pushes := eng.ForwardPush(pi, engine.DefaultGamma, eps)
			rows[i].Ms += msec(time.Since(t))
			rows[i].Pushes += float64(pushes)
			rows[i].Residual += res
			for v := range p {
				rows[i].L1 += math.Abs(p[v] - exact[v])
			}
			got := top10(p)
			if slices.Equal(got, want) {
				rows[i].SameTop10++
			}
			for _, v := range got {
				if slices.Contains(want, v) {
					rows[i].Top10 += 0.1
				}
			}
		}
	}
	k := float64(len(queries))
	for i := range rows {
		rows[i].Ms /= k
		rows[i].Pushes /= k
		rows[i].Residual /= k
		rows[i].L1 /= k
		rows[i].SameTop10 /= k
		rows[i].Top10 /= k
	}
	return rows, nil
}

// top10 is the ten highest scores' nodes, ties by id.
func top10(p []float64) []int {
	ids := make([]int, len(p))
	for i := range ids {
		ids[i] = i
	}
	slices.SortStableFunc(ids, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	return ids[:min(10, len(ids))]
}

// semanticIndexes measures the semantic candidate indexes of a large library against the exact
// scan: the artifact's vector clusters, when it has them, and the sign-sketch prefilter the
// engine takes without them (over the same artifact less its clusters).
func semanticIndexes(eng *engine.Engine, queries []string) ([]bench.Semantic, error) {
	var out []bench.Semantic
	g := eng.Graph()
	if g.NumClusters() > 0 {
		s, err := semanticRecall(eng, queries, "clusters", engine.ClusterPool)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		a, err := g.Artifact()
		if err != nil {
			return nil, err
		}
		a.Clusters = nil
		b, err := graphs.Encode(a)
		if err != nil {
			return nil, err
		}
		if g, err = graphs.Decode(b); err != nil {
			return nil, err
		}
		eng = engine.New(g)
	}
	s, err := semanticRecall(eng, queries, "sign sketch", engine.SemanticPool)
	return append(out, s), err
}

// semanticRecall is the share of the exact scan's top 50 (and top 5) that eng's semantic
// candidates (index, passing pool skills to the exact cosine) keep.
func semanticRecall(eng *engine.Engine, queries []string, index string, pool int) (bench.Semantic, error) {
	s := bench.Semantic{Index: index, Skills: eng.Graph().NumSkills(), Pool: pool}
	n := 0
	for _, q := range queries {
		v := eng.Embed(q)
		if v == nil {
			continue
		}
		n++
		t := time.Now()
		exact := eng.SemanticNeighbors(v, true)
		s.ExactMs += msec(time.Since(t))
		t = time.Now()
		got := eng.SemanticNeighbors(v, false)
		s.SketchMs += msec(time.Since(t))
		for r, id := range exact {
			if slices.Contains(got, id) {
				s.Recall50 += 1 / float64(len(exact))
				if r < 5 {
					s.Recall5 += 1 / float64(min(5, len(exact)))
				}
			}
		}
	}
	if n == 0 {
		return s, errors.New("no query has a semantic vector: the artifact has no encoder")
	}
	k := float64(n)
	s.Recall50, s.Recall5, s.ExactMs, s.SketchMs = s.Recall50/k, s.Recall5/k, s.ExactMs/k, s.SketchMs/k
	return s, nil
}

// gatewayReport is the gateway subcommand (see the command's comment).
func gatewayReport(args []string) error {
	fs := flag.NewFlagSet("caskg-bench gateway", flag.ContinueOnError)
	out := fs.String("o", "docs/benchmarks.md", "the report whose gateway section to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: caskg-bench gateway [-o docs/benchmarks.md] GO-TEST-OUTPUT...")
	}
	var results []bench.GoBench
	for _, file := range fs.Args() {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		res, err := bench.ParseGoBench(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		results = append(results, res...)
	}
	section := bench.GatewaySection(results, machine())
	fmt.Print(section)
	old, err := os.ReadFile(*out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if doc := bench.WithGatewayMarkers(string(old)); doc != string(old) {
		if err := atomicfile.Write(*out, []byte(doc)); err != nil {
			return err
		}
	}
	return mdspan.UpdateFile(*out, bench.GatewayBegin, bench.GatewayEnd, []byte(section))
}

func machine() string {
	cpu := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d × %s, %s, %s", runtime.NumCPU(), cpu, runtime.GOOS, runtime.Version())
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "none"
	}
	return strings.TrimSpace(string(out))
}
