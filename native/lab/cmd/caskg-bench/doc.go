package main

import (
	"fmt"
	"strings"

	"github.com/caskg/caskg/native/lab/internal/bench"
	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/wasm/engine"
)

// document is docs/benchmarks.md: every table with the command that reruns it.
func document(r *bench.Report, c *config) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmarks\n\n")
	p("Written by `make bench` (`bin/caskg-bench`, [native/lab/cmd/caskg-bench](../native/lab/cmd/caskg-bench/main.go)); every\n")
	p("figure below comes from that run. Machine: %s; Node %s. Rerun a part with the command under its table.\n", r.Machine, r.Node)
	p("The machine is shared with other work, so latencies move by a quarter or more from run to run;\n")
	p("`bin/caskg-bench -render` rewrites this file and the summary in docs/evaluation.md from `%s/results.json`.\n\n", c.dir)

	p("## Libraries\n\n")
	p("`real` is the 859 real skills of `%s`. The `synth` libraries grow from them with\n", c.base)
	p("[native/internal/lab/synth](../native/internal/lab/synth/synth.go), deterministically: skill k is a variant of base skill k mod 859\n")
	p("(sorted by name); variant 0 is the base skill, variant v > 0 is named `<name>-v<v>`, has about one\n")
	p("description word in six replaced by a word of the pooled base vocabulary (chosen by a hash of k and the\n")
	p("position), the first paragraph of the body, the same inputs, outputs and tags, and prerequisites\n")
	p("pointing to the same variant. Every library is built as `caskg build` builds by default (builtin LSA\n")
	p("embedder, contract prober, variant `full`).\n\n")

	p("## Query latency\n\n")
	p("Median and 95th percentile of one query (k = 10) over %d passes of the %s task texts after a\n", c.rounds, r.Tasks)
	p("warm-up pass and a garbage collection, and more passes until %s of them have gone by:\n", c.minTime)
	p("`native` calls the engine in process; `wazero` runs `bin/caskg.wasm` in Go over wazero\n")
	p("(request JSON in, response JSON out, as every WASM host pays); `Node` runs it through `wasm/js/caskg.js`\n")
	p("(`wasm/js/bench.mjs`). Load is artifact bytes to an engine ready to answer (the WASM rows include\n")
	p("starting an instance).\n\n")
	b.WriteString(r.QueryTable())
	p("\nEvery query propagates by forward push, whose residual bounds its L1 error (below): no ranking depends on\n")
	p("that error, and Via only within it (rationale.md). From %s skills on, the engine compares the query\n", mdspan.Count(engine.LargeLibrary))
	p("vector with a pool of candidates from the artifact's vector clusters (below); under that size the semantic list is exact.\n\n")
	p("```sh\nmake bench   # or: bin/caskg-bench -sizes 1000,10000,100000 -curve '' -reuse\n```\n\n")

	p("## WebAssembly against native Go, full task texts and 12 words\n\n")
	p("The same hosts and passes as above on two kinds of query: the full task texts, and the same texts cut to\n")
	p("their first %d words, as agents' short queries. Median (p95) of one query, k = 10; after each WASM\n", ShortWords)
	p("cell, its median over native's.\n\n")
	b.WriteString(r.WasmTable())
	p("\n```sh\nmake bench-wasm   # the Go benchmarks and wasm/js/bench.mjs on the 859 skills\n```\n\n")

	if len(r.Peers) > 0 {
		peers(&b, r, c)
	}

	p("## Build time and memory against library size\n\n")
	p("Each build runs in a process of its own; peak RSS is that process's maximum resident set (VmHWM in `/proc/self/status`).\n")
	p("`candidates s` is candidate induction alone: each skill scores only the %d skills sharing the most\n", 400)
	p("IDF mass of not-too-common tokens with it (blocking plus a bounded pool), so its time grows linearly with\n")
	p("the library, not quadratically. Bytes per edge count the CSR sections (offsets, targets, weights,\n")
	p("association, state and type).\n\n")
	b.WriteString(r.BuildTable())
	p("\n%s\n", r.SectionTable())
	p("```sh\nbin/caskg-bench build-one -n 100000 -base %s -o /tmp/synth-100000.skg   # one row, as JSON\n```\n\n", c.base)

	if len(r.Updates) > 0 {
		update(&b, r, c)
	}
	if r.Memory != nil {
		var m strings.Builder
		memorySection(&m, r, c)
		p("%s\n\n", bench.WithMemorySection("", m.String()))
	}

	p("## Forward push against power iteration (%s skills)\n\n", mdspan.Count(r.PushSize))
	p("Forward push keeps an estimate p and a residual r with ppr(π) = p + Σ_u r(u)·ppr(e_u); each ppr(e_u)\n")
	p("sums to 1, so the L1 error of p is exactly the residual left, which the engine reports as\n")
	p("`Response.Residual`: the stated error bound. The reference is power iteration run to an L1 change below\n")
	p("1e-10, from the seeds each of %d task texts gives. The engine uses ε = %g.\n\n", min(c.pushQueries, 87), engine.PushEpsilon)
	b.WriteString(r.PushTable())
	p("\n## Semantic prefilter (%s skills)\n\n", mdspan.Count(r.PushSize))
	p("Comparing the query vector with every skill vector is N×dim multiply-adds. From %s skills the engine\n", mdspan.Count(engine.LargeLibrary))
	p("computes exact cosines for a pool of candidates only. The artifact's vector clusters (format 2.2: 3√N\n")
	p("centroids from spherical k-means at build time, each skill in the nearest) give the members of the clusters\n")
	p("nearest the query until there are %s; an artifact without them falls back to a one-bit sketch of every\n", mdspan.Count(engine.ClusterPool))
	p("skill — how the signs of its components agree with the query's, each agreement weighted by |q_j| rounded\n")
	p("to eight levels, in integers (XOR and popcount; 16 bytes a skill) — and its best %s. Recall is the share\n", mdspan.Count(engine.SemanticPool))
	p("of the exact scan's top 50 (top 5) the index keeps; the times are natively, per query.\n\n")
	b.WriteString(r.SemanticTable())
	p("\nThe other candidate indexes are exact, recall 100%% by construction, which tests hold to a scan: the name\n")
	p("index's bigram counts keep every name within the similarity bound (`TestNameMatchMatchesBruteForce`), and\n")
	p("the memory of past tasks reads only its query terms' postings, and of the common words' long lists (an eighth\n")
	p("of the tool sets or more) only the tool sets that can still reach the nearest, MaxScore's pruning, with the\n")
	p("votes bit for bit those of a score over every tool set (`TestRecallExhaustive`, `TestRecallLongListDecides`).\n")
	p("\n## WebAssembly module\n\n%s The Go runtime alone (an empty reactor built the same way) is about 530 KB gzip.\n\n", r.WasmLine())
	p("```sh\nmake wasm\n```\n\n")
	p("Raw results: `%s/results.json`.\n\n", c.dir)
	p("How the module's size and the query's speed got here, and what was tried and left out: the\n")
	p("[lab notes](../native/lab/NOTES.md) (written by hand; `make bench` does not rewrite them).\n")
	return b.String()
}

// peers is the side-by-side section.
func peers(b *strings.Builder, r *bench.Report, c *config) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	run := r.Peers[0]
	p("## caskg beside the JavaScript search libraries\n\n")
	p("One Node process per library ([wasm/js/bench-peers.mjs](../wasm/js/bench-peers.mjs)) loads caskg's artifact\n")
	p("through `wasm/js/caskg.js` and indexes the same skills into FlexSearch, MiniSearch and Orama (exact\n")
	p("versions, installed by `make peers` from npm into `.cache/peers`, not committed), then runs the same\n")
	p("queries through each: the %d SkillsBench task texts, and the same texts cut to their first %d words.\n", run.Tasks, ShortWords)
	p("Every peer indexes the same text per skill, what the BM25 reference of `../shared/tools/score.py` indexes:\n")
	p("name, description, parameters (inputs and outputs), tags and body, cut to 4,000 characters\n")
	p("(`PeerText` in [native/lab/cmd/caskg-bench](../native/lab/cmd/caskg-bench/main.go)). Each answers top 10 with its\n")
	p("defaults but for one setting: FlexSearch (one `Index`) searches with `suggest: true`, without which a\n")
	p("many-word query matches only the skills holding every word. caskg answers with its graph and with\n")
	p("`no_graph` (its seed ranking alone, no graph step) from one loaded engine.\n\n")
	p("Load / index is caskg compiling the module, instantiating it and loading the artifact (the artifact is\n")
	p("built offline: its build time is in the build table), and for a peer indexing the texts. JS heap is what\n")
	p("the heap grew by loading or indexing, after garbage collection; caskg's engine lives in WebAssembly\n")
	p("memory, shown beside it. Code is the module graph Node loads (every relative import from the package's\n")
	p("entry; caskg: caskg.js and the module), each file gzip -9. R@10 and COMP@10 are score.py's: mean share\n")
	p("of a task's gold skills in the top 10, and share of tasks with all of them there. On the synthetic\n")
	p("libraries the gold skills are the variant-0 copies among reworded ones: read that quality as stress.\n")
	p("A variant keeps only its base's first paragraph, so it is shorter than the gold base skill, and a\n")
	p("ranker that favors short documents (BM25's length normalization) can fill the top 10 with variants; the\n")
	p("12-word queries show it most.\n\n")
	p("Each system and query kind first answers every task once (the answers scored), then, after a garbage\n")
	p("collection, %d timed passes, or more until %g seconds of them have gone by, while %.0f seconds have not\n", run.Rounds, run.MinTimeS, run.BudgetS)
	p("run out (at least one). A system whose first pass alone outruns the\n")
	p("%.0f seconds stops there: its latencies are that pass's and its quality counts only the tasks it\n", run.BudgetS)
	p("answered, as its cells say.\n\n")
	b.WriteString(r.PeerTable())
	p("\n```sh\nmake peers && bin/caskg-bench -reuse -curve '' -peer-sizes %s\n```\n\n", peerSizes(r))
}

// update is the incremental-update section: caskg update against a full build.
func update(b *strings.Builder, r *bench.Report, c *config) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	u := r.Updates[0]
	p("## Incremental update\n\n")
	p("`caskg update OLD.skg --traces NEW.jsonl -o NEW.skg` makes the artifact a full build makes from the library and\n")
	p("every run, starting from the old artifact, its build state (`OLD.skg.state`, written by `caskg build --state`)\n")
	p("and the new runs alone. The stage grows the %s-skill `synth` library, makes %s runs with\n", mdspan.Count(u.Skills), mdspan.Count(u.OldRuns))
	p("[synth.Runs](../native/internal/lab/synth/runs.go) (each 3 to 5 distinct skills of one variant group, drawn by a fixed\n")
	p("generator) and builds with them, keeping the state. Then it makes %s new runs (%.0f%%) and times %s of:\n",
		mdspan.Count(u.NewRuns), 100*float64(u.NewRuns)/float64(max(u.OldRuns, 1)), rounds(len(u.Full.Rounds)))
	p("a full build with all %s runs (learning the builtin embedder and building, as `caskg build` does; growing\n", mdspan.Count(u.OldRuns+u.NewRuns))
	p("the library and reading the runs not timed), then the update by the %s new runs (reading the old artifact\n", mdspan.Count(u.NewRuns))
	p("and its state, decoding the state, updating and encoding the new state, as `caskg update` does; writing\n")
	p("the files not timed), each in a process of its own. The times are each side's median round, its range in\n")
	p("parentheses. Every round, the two artifacts must be byte-identical, or the run fails (their SHA-256 is in\n")
	p("`results.json`). Peak RSS is the median round's maximum resident set (VmHWM in `/proc/self/status`); probes are the\n")
	p("prober's answers (three probes a candidate pair; abstentions left out), `reused` those the update took\n")
	p("from the state instead of asking the prober; state MB is the old build's state file.\n\n")
	b.WriteString(r.UpdateTable())
	p("\n```sh\nbin/caskg-bench -update-only -update-skills %d -update-runs %d -update-new %d -update-rounds %d   # this section alone (make bench runs it; -update=false skips it)\n```\n\n",
		u.Skills, u.OldRuns, u.NewRuns, max(len(u.Full.Rounds), 1))
}

// rounds is "1 round" or "N rounds".
func rounds(n int) string {
	if n <= 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// peerSizes is the -peer-sizes value of the run.
func peerSizes(r *bench.Report) string {
	var s []string
	for _, run := range r.Peers {
		if run.Label == "real" {
			s = append(s, "real")
		} else {
			s = append(s, fmt.Sprint(run.Skills))
		}
	}
	return strings.Join(s, ",")
}
