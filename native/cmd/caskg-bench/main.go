// Command caskg-bench measures build time, peak memory, artifact size and query latency of
// caskg on libraries grown from the real ones by native/synth, and prints a Markdown table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/embed"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/ingest"
	"github.com/caskg/caskg/native/synth"
	"github.com/caskg/caskg/wasm/engine"
)

func main() {
	sizes := flag.String("sizes", "1000,10000,100000", "library sizes to build")
	base := flag.String("base", "../shared/data/skills", "real library the synthetic ones grow from")
	tasks := flag.String("tasks", "../shared/data/eval/skillsbench/tasks.jsonl", "queries to time")
	semantic := flag.Bool("semantic", true, "train the builtin embedder")
	out := flag.String("o", "", "also write each built artifact to this directory")
	flag.Parse()
	if err := run(*sizes, *base, *tasks, *semantic, *out); err != nil {
		fmt.Fprintln(os.Stderr, "caskg-bench:", err)
		os.Exit(1)
	}
}

func run(sizes, base, tasksPath string, semantic bool, out string) error {
	lib, err := ingest.Load(base)
	if err != nil {
		return err
	}
	tasks, err := eval.ReadTasks(tasksPath, false)
	if err != nil {
		return err
	}
	fmt.Println("| skills | build s | peak RSS MB | artifact MB | bytes/skill | edges | query median µs (graph) | query p95 µs | load ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("size %q: %v", f, err)
		}
		skills, err := synth.Grow(lib.Skills, n)
		if err != nil {
			return err
		}
		runtime.GC()
		start := time.Now()
		opt := build.DefaultOptions()
		if semantic {
			sorted := append([]ingest.Skill(nil), skills...)
			sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
			texts := make([]string, len(sorted))
			for i, s := range sorted {
				texts[i] = build.SkillText(s)
			}
			m, err := embed.NewBuiltin(texts, embed.BuiltinOptions{})
			if err != nil {
				return err
			}
			opt.Embedder = m
		}
		data, rep, err := build.BuildContext(context.Background(), skills, opt)
		if err != nil {
			return err
		}
		buildSec := time.Since(start).Seconds()
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		if out != "" {
			os.WriteFile(fmt.Sprintf("%s/synth-%d.skg", out, n), data, 0o644)
		}
		t0 := time.Now()
		g, err := graphs.Decode(data)
		if err != nil {
			return err
		}
		eng := engine.New(g)
		load := time.Since(t0)
		var lat []time.Duration
		for r := 0; r < 3; r++ {
			for _, t := range tasks {
				q := time.Now()
				if _, err := eng.Query(engine.Request{Query: t.Query, K: 10}); err != nil {
					return err
				}
				lat = append(lat, time.Since(q))
			}
		}
		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		fmt.Printf("| %d | %.1f | %.0f | %.1f | %d | %d | %d | %d | %d |\n", n, buildSec, float64(ru.Maxrss)/1024,
			float64(len(data))/1e6, len(data)/n, rep.Published, lat[len(lat)/2].Microseconds(),
			lat[len(lat)*95/100].Microseconds(), load.Milliseconds())
	}
	return nil
}
