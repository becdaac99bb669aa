package host_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/host"
)

// Benchmarks on the artifact of the 859 real skills in ../shared/data/skills, asked the 87
// SkillsBench tasks (k = 10). `make bench-wasm` runs them beside wasm/js/bench.mjs, Node's side,
// on the artifact `caskg build` made, named by CASKG_BENCH_ARTIFACT; without it they build one
// with build.DefaultOptions.

// benchFixture is the benchmark's artifact and tasks.
func benchFixture(b *testing.B) fixture {
	path := os.Getenv("CASKG_BENCH_ARTIFACT")
	if path == "" {
		return need(b, skillsFixture, realSkills)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	g, err := graphs.Decode(data)
	if err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	tasks, err := testlib.ReadTasks(realTasks, false)
	if err != nil {
		b.Fatal(err)
	}
	return fixture{artifact: data, graph: g, tasks: tasks}
}

// BenchmarkQuery is the latency of one query: the engine called natively, and the module over
// wazero (request JSON in, response JSON out, as every WASM host pays). ns/op is the mean;
// median-ns/query the median over the run.
func BenchmarkQuery(b *testing.B) {
	fx := benchFixture(b)
	reqs := make([]engine.Request, len(fx.tasks))
	lines := make([][]byte, len(fx.tasks))
	for i, t := range fx.tasks {
		reqs[i] = engine.Request{Query: t.Query, K: 10}
		lines[i], _ = json.Marshal(reqs[i])
	}
	ctx := context.Background()
	b.Run("native", func(b *testing.B) {
		eng := engine.New(fx.graph)
		timeQueries(b, len(reqs), func(i int) error {
			_, err := eng.Query(reqs[i])
			return err
		})
	})
	b.Run("wazero", func(b *testing.B) {
		p := load(b, host.Options{Instances: 1}, fx.artifact)
		timeQueries(b, len(reqs), func(i int) error {
			_, err := p.QueryJSON(ctx, lines[i])
			return err
		})
	})
}

// timeQueries runs query(i) for the b.N iterations, cycling through n queries after one warm-up
// pass, and reports the median.
func timeQueries(b *testing.B, n int, query func(i int) error) {
	for i := range n {
		if err := query(i); err != nil {
			b.Fatal(err)
		}
	}
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := query(i % n); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "median-ns/query")
}

// BenchmarkLoad is the time from artifact bytes to an engine ready to answer: natively, decoding
// and preparing the engine; over wazero, a fresh instance (the Go runtime's start included)
// loading its copy of the artifact.
func BenchmarkLoad(b *testing.B) {
	fx := benchFixture(b)
	ctx := context.Background()
	b.Run("native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			g := testlib.Decode(b, fx.artifact)
			engine.New(g)
		}
	})
	b.Run("wazero", func(b *testing.B) {
		m := compile(b, host.Options{Instances: 1})
		for b.Loop() {
			p, err := m.Load(ctx, fx.artifact)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			p.Close(ctx)
			b.StartTimer()
		}
	})
}

// BenchmarkCompile is wazero compiling the module without a cache: what a process pays once
// before its first Load unless Options.Cache has the module from an earlier run.
func BenchmarkCompile(b *testing.B) {
	wasm := wasmBytes(b)
	ctx := context.Background()
	for b.Loop() {
		c := wazero.NewCompilationCache()
		m, err := host.Compile(ctx, wasm, &host.Options{Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
		c.Close(ctx)
	}
}

// BenchmarkStart is what a process pays from module and artifact bytes to a Pool ready to
// answer (host.Load): cold, compiling the module into an empty cache directory; warm, finding
// the machine code a previous process left in the directory (Options.CacheDir, by default under
// the user's cache directory).
func BenchmarkStart(b *testing.B) {
	fx := benchFixture(b)
	wasm := wasmBytes(b)
	ctx := context.Background()
	start := func(b *testing.B, dir string) {
		p, err := host.Load(ctx, wasm, fx.artifact, &host.Options{Instances: 1, CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Close(ctx)
		b.StartTimer()
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			b.StartTimer()
			start(b, dir)
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		start(b, dir)
		for b.Loop() {
			start(b, dir)
		}
	})
}
