package main

import (
	"fmt"
	"strings"

	"github.com/caskg/caskg/native/bench"
	"github.com/caskg/caskg/wasm/engine"
)

// document is BENCHMARKS.md: every table with the command that reruns it.
func document(r *bench.Report, c *config) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmarks\n\n")
	p("Written by `make bench` (`bin/caskg-bench`, [native/cmd/caskg-bench](native/cmd/caskg-bench/main.go)); every\n")
	p("figure below comes from that run. Machine: %s; Node %s. Rerun a part with the command under its table.\n", r.Machine, r.Node)
	p("The machine is shared with other work, so latencies move by a quarter or more from run to run;\n")
	p("`bin/caskg-bench -render` rewrites this file and the README section from `%s/results.json`.\n\n", c.dir)

	p("## Libraries\n\n")
	p("`real` is the 859 real skills of `%s`. The `synth` libraries grow from them with\n", c.base)
	p("[native/synth](native/synth/synth.go), deterministically: skill k is a variant of base skill k mod 859\n")
	p("(sorted by name); variant 0 is the base skill, variant v > 0 is named `<name>-v<v>`, has about one\n")
	p("description word in six replaced by a word of the pooled base vocabulary (chosen by a hash of k and the\n")
	p("position), the first paragraph of the body, the same inputs, outputs and tags, and prerequisites\n")
	p("pointing to the same variant. Every library is built as `caskg build` builds by default (builtin LSA\n")
	p("embedder, contract prober, variant `full`).\n\n")

	p("## Query latency\n\n")
	p("Median and 95th percentile of one query (k = 10) over %d passes of the %s task texts after a\n", c.rounds, r.Tasks)
	p("warm-up pass: `native` calls the engine in process; `wazero` runs `bin/caskg.wasm` in Go over wazero\n")
	p("(request JSON in, response JSON out, as every WASM host pays); `Node` runs it through `wasm/js/caskg.js`\n")
	p("(`wasm/js/bench.mjs`). Load is artifact bytes to an engine ready to answer (the WASM rows include\n")
	p("starting an instance).\n\n")
	b.WriteString(r.QueryTable())
	p("\nFrom %s skills on, the engine takes its large-library paths: forward push instead of power iteration\n", count(engine.LargeLibrary))
	p("and the sign-sketch prefilter for semantic seeds (both below). Under that size answers are the same as a\n")
	p("full computation's, bit for bit.\n\n")
	p("```sh\nmake bench   # or: bin/caskg-bench -sizes 1000,10000,100000 -curve '' -reuse\n```\n\n")

	p("## Build time and memory against library size\n\n")
	p("Each build runs in a process of its own; peak RSS is that process's maximum resident set (`getrusage`).\n")
	p("`candidates s` is candidate induction alone: each skill scores only the %d skills sharing the most\n", 400)
	p("IDF mass of not-too-common tokens with it (blocking plus a bounded pool), so its time grows linearly with\n")
	p("the library, not quadratically. Bytes per edge count the CSR sections (offsets, targets, weights,\n")
	p("association, state and type).\n\n")
	b.WriteString(r.BuildTable())
	p("\n%s\n", r.SectionTable())
	p("```sh\nbin/caskg-bench build-one -n 100000 -base %s -o /tmp/synth-100000.skg   # one row, as JSON\n```\n\n", c.base)

	p("## Forward push against power iteration (%s skills)\n\n", count(r.PushSize))
	p("Forward push keeps an estimate p and a residual r with ppr(π) = p + Σ_u r(u)·ppr(e_u); each ppr(e_u)\n")
	p("sums to 1, so the L1 error of p is exactly the residual left, which the engine reports as\n")
	p("`Response.Residual`: the stated error bound. The reference is power iteration run to an L1 change below\n")
	p("1e-10, from the seeds each of %d task texts gives. The engine uses ε = %g.\n\n", min(c.pushQueries, 87), engine.PushEpsilon)
	b.WriteString(r.PushTable())
	p("\n## Semantic prefilter (%s skills)\n\n", count(r.PushSize))
	p("Comparing the query vector with every skill vector is N×dim multiply-adds. From %s skills the engine\n", count(engine.LargeLibrary))
	p("first ranks skills by a one-bit sketch — how the signs of their components agree with the query's,\n")
	p("each agreement weighted by |q_j| rounded to eight levels, in integers (XOR and popcount; 16 bytes a\n")
	p("skill) — then computes the exact cosine for the best %s only. Recall is the share of the exact\n", count(engine.SemanticPool))
	p("scan's top 50 (top 5) the prefilter keeps; the times are natively, per query.\n\n")
	b.WriteString(r.SemanticTable())
	p("\n## WebAssembly module\n\n%s The Go runtime alone (an empty reactor built the same way) is about 530 KB gzip.\n\n", r.WasmLine())
	p("```sh\nmake wasm\n```\n\n")
	p("Raw results: `%s/results.json`.\n", c.dir)
	return b.String()
}

func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
