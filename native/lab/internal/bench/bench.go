// Package bench holds the results of `make bench` (caskg-bench) and renders them: the table
// printed on the terminal, docs/benchmarks.md, and the summary section (docs/evaluation.md) between the markers
// <!-- bench:begin --> and <!-- bench:end --> (rewritten by package mdspan, like the
// evaluation's section). Measuring is caskg-bench's job; this package only models, formats and
// writes, so that the formatting is tested without running a benchmark.
package bench

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
)

// Summary markers: make bench rewrites only what lies between them.
const (
	BeginMarker = "<!-- bench:begin -->"
	EndMarker   = "<!-- bench:end -->"
)

// Build is one library built by caskg-bench in a process of its own.
type Build struct {
	Label      string             `json:"label"` // "real" or "synth"
	Skills     int                `json:"skills"`
	Seconds    float64            `json:"seconds"`     // wall time of the whole build, embedding included
	Stages     map[string]float64 `json:"stages"`      // the build report's seconds per stage
	PeakRSSMB  float64            `json:"peak_rss_mb"` // the building process's peak resident set
	Candidates int                `json:"candidates"`
	Edges      int                `json:"edges"`
	Bytes      int                `json:"bytes"`
	Sections   map[string]int     `json:"sections"` // artifact bytes per section
}

// Query is the latency of one host on one artifact, k = 10, over the task texts.
type Query struct {
	Label    string  `json:"label"`
	Skills   int     `json:"skills"`
	Host     string  `json:"host"` // native, wazero or node
	Queries  int     `json:"queries"`
	MedianMs float64 `json:"median_ms"`
	P95Ms    float64 `json:"p95_ms"`
	LoadMs   float64 `json:"load_ms"` // artifact bytes to an engine ready to answer
	// Words12 is the same host on the same tasks cut to their first 12 words (agents' short
	// queries); nil when not measured.
	Words12 *Latency `json:"words12,omitempty"`
}

// Latency is one query kind's median and 95th percentile over its timed queries.
type Latency struct {
	Queries  int     `json:"queries"`
	MedianMs float64 `json:"median_ms"`
	P95Ms    float64 `json:"p95_ms"`
}

// PeerKind is one system's answers to one kind of query on one library: latency, and quality
// against the tasks' gold as ../shared/tools/score.py computes it.
type PeerKind struct {
	Queries  int     `json:"queries"` // timed queries
	MedianMs float64 `json:"median"`
	P95Ms    float64 `json:"p95"`
	Tasks    int     `json:"tasks"` // tasks with gold answered and scored
	R10      float64 `json:"r10"`
	COMP10   float64 `json:"comp10"`
}

// Code is the JavaScript (and WebAssembly) a system ships: the files of its module graph.
type Code struct {
	Raw   int `json:"raw"`
	Gzip  int `json:"gzip"` // each file gzip -9 on its own, summed
	Files int `json:"files"`
}

// PeerSystem is one system in the side-by-side run (wasm/js/bench-peers.mjs).
type PeerSystem struct {
	System    string              `json:"system"`  // caskg, FlexSearch, MiniSearch, Orama
	Variant   string              `json:"variant"` // caskg: graph or no_graph
	Version   string              `json:"version"`
	LoadMs    float64             `json:"load_ms"`    // caskg: module and artifact to an engine; peers: indexing the texts
	CompileMs float64             `json:"compile_ms"` // caskg: the part of LoadMs compiling the module
	HeapBytes float64             `json:"heap_bytes"` // JS heap grown by loading or indexing, after GC
	WasmBytes float64             `json:"wasm_bytes"` // WebAssembly linear memory (caskg)
	Code      Code                `json:"code"`
	Kinds     map[string]PeerKind `json:"kinds"` // "full" and "words12"
}

// PeerRun is the side-by-side run on one library, in one Node process.
type PeerRun struct {
	Label    string       `json:"label"`
	Skills   int          `json:"skills"`
	Tasks    int          `json:"tasks"`      // tasks with gold
	BudgetS  float64      `json:"budget_s"`   // seconds per system and query kind before a slow system stops
	MinTimeS float64      `json:"min_time_s"` // seconds of timed passes each system gets at least (within the budget)
	Rounds   int          `json:"rounds"`
	Systems  []PeerSystem `json:"systems"`
}

// Push is forward push at one threshold against power iteration run to convergence.
type Push struct {
	Eps       float64 `json:"eps"`
	Pushes    float64 `json:"pushes"` // mean per query
	Ms        float64 `json:"ms"`     // mean per query
	Residual  float64 `json:"residual"`
	L1        float64 `json:"l1"`         // measured L1 distance to the converged scores
	SameTop10 float64 `json:"same_top10"` // share of queries with the same top 10 in the same order
	Top10     float64 `json:"top10"`      // mean overlap of the top 10 sets
}

// Semantic is one candidate index of the semantic seeds (the vector clusters or the sign-sketch
// prefilter) against the exact vector scan.
type Semantic struct {
	Index    string  `json:"index"` // "clusters" or "sign sketch" ("" in results before the clusters: the sketch)
	Skills   int     `json:"skills"`
	Pool     int     `json:"pool"`
	Recall50 float64 `json:"recall50"` // share of the exact top 50 the prefilter keeps
	Recall5  float64 `json:"recall5"`
	ExactMs  float64 `json:"exact_ms"`
	SketchMs float64 `json:"sketch_ms"`
}

// UpdateSide is one side of the incremental-update stage: its median round, each round measured
// in a process of its own.
type UpdateSide struct {
	Seconds      float64            `json:"seconds"`               // wall time of the timed part (caskg-bench's update stage says which)
	CPUSeconds   float64            `json:"cpu_seconds,omitempty"` // user and system time of the timed part, on every core
	Rounds       []float64          `json:"rounds"`                // every round's Seconds, in the order run
	PeakRSSMB    float64            `json:"peak_rss_mb"`           // the process's peak resident set
	Stages       map[string]float64 `json:"stages"`                // the build report's seconds per stage
	ProbesRun    int                `json:"probes_run"`
	ProbesCached int                `json:"probes_cached"`  // probe answers reused from the old build's state
	Mode         string             `json:"mode,omitempty"` // the update's: "incremental" (a full fallback fails the stage)
}

// Update is the incremental-update stage on one library: a full build with the old runs and
// the new ones against caskg update of the old build (artifact and build state) by the new runs
// alone. The stage fails unless the two artifacts are byte-identical, so a saved row always
// describes two equal artifacts, of SHA256.
type Update struct {
	Skills     int        `json:"skills"`
	OldRuns    int        `json:"old_runs"`
	NewRuns    int        `json:"new_runs"`
	Full       UpdateSide `json:"full"`
	Update     UpdateSide `json:"update"`
	StateBytes int        `json:"state_bytes"` // the old build's state file
	Bytes      int        `json:"bytes"`       // the artifact
	SHA256     string     `json:"sha256"`      // the artifact's, both sides
}

// Ratio is the update's time over the full build's.
func (u Update) Ratio() float64 {
	if u.Full.Seconds <= 0 {
		return 0
	}
	return u.Update.Seconds / u.Full.Seconds
}

// seconds is the side's median time in format, and the range of its rounds when there were more
// than one.
func (x UpdateSide) seconds(format string) string {
	s := fmt.Sprintf(format, x.Seconds)
	if len(x.Rounds) > 1 {
		s += fmt.Sprintf(" ("+format+"–"+format+")", slices.Min(x.Rounds), slices.Max(x.Rounds))
	}
	return s
}

// Memory is the memory-of-past-tasks stage: a library built with many runs that carry task text
// against the same library built without runs — query latency, artifact bytes — and caskg update
// of the build with those runs by 1% more against a full build.
type Memory struct {
	Skills    int `json:"skills"`
	Runs      int `json:"runs"` // the runs of the memory artifact (old and new)
	Workflows int `json:"workflows"`
	// Bytes of the artifact without runs, of the one with the runs stripped of their task text
	// (edges, no memory), of the one with the runs (the full build's) and of its memory's
	// sections alone.
	PlainBytes  int     `json:"plain_bytes"`
	NoTaskBytes int     `json:"notask_bytes"`
	Bytes       int     `json:"bytes"`
	MemoryBytes int     `json:"memory_bytes"`
	Docs        int     `json:"docs"` // the memory's documents (tool sets) and terms
	Terms       int     `json:"terms"`
	Weight      float64 `json:"weight"` // the calibrated fusion weight
	// Latency has a row per host and kind of query: the artifact without runs beside the one
	// with the memory.
	Latency []MemoryLatency `json:"latency"`
	Update  Update          `json:"update"`
}

// MemoryLatency is one host on one kind of query, on the three artifacts.
type MemoryLatency struct {
	Host   string  `json:"host"`    // native or wazero
	Kind   string  `json:"queries"` // what was asked
	Plain  Latency `json:"plain"`   // without runs
	NoTask Latency `json:"notask"`  // the runs without task text: their edges, no memory
	Memory Latency `json:"memory"`
}

// Markers of the memory stage's section of docs/benchmarks.md: caskg-bench -memory-only without an
// earlier run's results rewrites only what lies between them.
const (
	MemoryBegin = "<!-- memory-bench:begin -->"
	MemoryEnd   = "<!-- memory-bench:end -->"
)

// WithMemorySection returns doc with section (wrapped in the memory markers) in place of the
// span between them, or, when doc has neither, inserted before the gateway section (appended
// when there is none).
func WithMemorySection(doc, section string) string {
	body := MemoryBegin + "\n" + strings.TrimRight(section, "\n") + "\n" + MemoryEnd
	i, j := strings.Index(doc, MemoryBegin), strings.Index(doc, MemoryEnd)
	switch {
	case i >= 0 && j > i:
		return doc[:i] + body + doc[j+len(MemoryEnd):]
	case strings.Contains(doc, GatewayBegin):
		k := strings.Index(doc, GatewayBegin)
		return doc[:k] + body + "\n\n" + doc[k:]
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + body + "\n"
}

// Memory-stage targets, so that remembering past tasks stays cheap: query p50 with the memory
// at most 1.5 times without it (the same runs without task text), the artifact at most 8 MB
// larger than without runs, the update by 1% new runs at most 0.2 of a full build.
const (
	MemoryLatencyTarget = 1.5
	MemoryGrowthTarget  = 8e6
	MemoryUpdateTarget  = 0.2
)

// Growth is how many bytes the runs added to the artifact.
func (m *Memory) Growth() int { return m.Bytes - m.PlainBytes }

// MemoryTable is the memory stage's latency: one row per host and kind of query.
func (r *Report) MemoryTable() string {
	if r.Memory == nil {
		return ""
	}
	return table(r.Memory.Latency, func(l MemoryLatency) string {
		ratio := func(x, y Latency) float64 {
			if y.MedianMs <= 0 {
				return 0
			}
			return x.MedianMs / y.MedianMs
		}
		mem := ratio(l.Memory, l.NoTask)
		return fmt.Sprintf("%s | %s | %s | %s | %s | %.2f× %s | %.2f×", l.Host, l.Kind, latencyCell(l.Plain, l.Plain.MedianMs > 0),
			latencyCell(l.NoTask, l.NoTask.MedianMs > 0), latencyCell(l.Memory, l.Memory.MedianMs > 0),
			mem, verdict(mem > 0 && mem <= MemoryLatencyTarget), ratio(l.Memory, l.Plain))
	}, "host", "queries", "no runs: median (p95)", "runs, no task text", "runs with task text (memory)",
		fmt.Sprintf("memory ÷ no task text (target ≤ %.1f×)", MemoryLatencyTarget), "memory ÷ no runs")
}

// MemorySizeTable is the memory stage's artifact bytes and update time against their targets.
func (r *Report) MemorySizeTable() string {
	m := r.Memory
	if m == nil {
		return ""
	}
	u := m.Update
	rows := []string{
		fmt.Sprintf("artifact without runs | %.2f MB | ", float64(m.PlainBytes)/1e6),
		fmt.Sprintf("artifact with %s runs without task text | %.2f MB | ", mdspan.Count(m.Runs), float64(m.NoTaskBytes)/1e6),
		fmt.Sprintf("artifact with %s runs with task text | %.2f MB | ", mdspan.Count(m.Runs), float64(m.Bytes)/1e6),
		fmt.Sprintf("growth (memory sections %.2f MB: %s tool sets, %s terms, weight %g) | %.2f MB | ≤ %.0f MB %s",
			float64(m.MemoryBytes)/1e6, mdspan.Count(m.Docs), mdspan.Count(m.Terms), m.Weight,
			float64(m.Growth())/1e6, MemoryGrowthTarget/1e6, verdict(m.Growth() <= MemoryGrowthTarget)),
		fmt.Sprintf("full build, %s runs | %s s | ", mdspan.Count(u.OldRuns+u.NewRuns), u.Full.seconds("%.1f")),
		fmt.Sprintf("update by %s new runs | %s s | ", mdspan.Count(u.NewRuns), u.Update.seconds("%.2f")),
		fmt.Sprintf("update ÷ full | %.3f | ≤ %.1f %s", u.Ratio(), MemoryUpdateTarget, verdict(u.Ratio() <= MemoryUpdateTarget)),
	}
	if u.Full.CPUSeconds > 0 && u.Update.CPUSeconds > 0 {
		// Wall time on a shared machine moves with the load; CPU time says what the work costs.
		rows = append(rows, fmt.Sprintf("CPU time of the same rounds: full %.2f s, update %.2f s | %.3f | ",
			u.Full.CPUSeconds, u.Update.CPUSeconds, u.Update.CPUSeconds/u.Full.CPUSeconds))
	}
	return table(rows, func(s string) string { return s }, "measure", "value", "target")
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "**missed**"
}

// Sizes are a WebAssembly module's bytes: raw and gzipped as wasm/modbuild.Gzip counts.
type Sizes struct {
	Raw, Gzip int
}

// Report is everything one run measured.
type Report struct {
	Machine  string     `json:"machine"`
	Go       string     `json:"go"`
	Node     string     `json:"node"`
	Tasks    string     `json:"tasks"`
	Builds   []Build    `json:"builds"`
	Queries  []Query    `json:"queries"`
	Push     []Push     `json:"push"`
	PushSize int        `json:"push_skills"`
	Semantic []Semantic `json:"semantic"`
	Wasm     Sizes      `json:"wasm"`
	Peers    []PeerRun  `json:"peers,omitempty"`
	Updates  []Update   `json:"updates,omitempty"`
	Memory   *Memory    `json:"memory,omitempty"`
	Command  string     `json:"command"`
}

// latency returns the row of a host at a size.
func (r *Report) latency(label string, skills int, host string) (Query, bool) {
	for _, q := range r.Queries {
		if q.Label == label && q.Skills == skills && q.Host == host {
			return q, true
		}
	}
	return Query{}, false
}

// library is one artifact the latency rows are for.
type library struct {
	label  string
	skills int
}

// libraries lists the artifacts of the latency rows in the order they first appear, only those
// measured on host when host is not "".
func (r *Report) libraries(host string) []library {
	var keys []library
	seen := map[library]bool{}
	for _, q := range r.Queries {
		if k := (library{q.Label, q.Skills}); (host == "" || q.Host == host) && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// QueryTable is the latency table: one row per artifact, median (p95) per host and load time.
func (r *Report) QueryTable() string {
	keys := r.libraries("")
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].skills < keys[j].skills })
	return table(keys, func(k library) string {
		cell := func(host string) (string, Query) {
			q, ok := r.latency(k.label, k.skills, host)
			if !ok {
				return "—", q
			}
			return fmt.Sprintf("%s ms (p95 %s)", ms(q.MedianMs), ms(q.P95Ms)), q
		}
		nat, nq := cell("native")
		wz, wq := cell("wazero")
		nd, dq := cell("node")
		ratio := "—"
		if nq.MedianMs > 0 && (wq.MedianMs > 0 || dq.MedianMs > 0) {
			var parts []string
			if wq.MedianMs > 0 {
				parts = append(parts, fmt.Sprintf("%.1f×", wq.MedianMs/nq.MedianMs))
			}
			if dq.MedianMs > 0 {
				parts = append(parts, fmt.Sprintf("%.1f×", dq.MedianMs/nq.MedianMs))
			}
			ratio = strings.Join(parts, " / ")
		}
		load := fmt.Sprintf("%s / %s / %s ms", msOr(nq.LoadMs), msOr(wq.LoadMs), msOr(dq.LoadMs))
		return fmt.Sprintf("%s | %s | %s | %s | %s | %s | %s", k.label, mdspan.Count(k.skills), nat, wz, nd, ratio, load)
	}, "library", "skills", "native", "wazero", "Node", "WASM ÷ native", "load: native / wazero / Node")
}

// BuildTable is the build curve: time, peak memory, stages and artifact bytes per size.
func (r *Report) BuildTable() string {
	builds := append([]Build(nil), r.Builds...)
	sort.SliceStable(builds, func(i, j int) bool { return builds[i].Skills < builds[j].Skills })
	return table(builds, Build.cells, "library", "skills", "build s", "candidates s", "peak RSS MB", "candidates",
		"edges", "artifact MB", "bytes/skill", "bytes/edge (CSR)")
}

// cells is the build's row of BuildTable.
func (x Build) cells() string {
	perEdge := "—"
	if x.Edges > 0 {
		perEdge = fmt.Sprintf("%.1f", float64(x.Sections["EOFF"]+x.Sections["ETGT"]+x.Sections["EWGT"]+
			x.Sections["EASC"]+x.Sections["EATR"])/float64(x.Edges))
	}
	return fmt.Sprintf("%s | %s | %.1f | %.1f | %.0f | %s | %s | %.1f | %s | %s", x.Label, mdspan.Count(x.Skills),
		x.Seconds, x.Stages["candidates"], x.PeakRSSMB, mdspan.Count(x.Candidates), mdspan.Count(x.Edges),
		float64(x.Bytes)/1e6, mdspan.Count(x.Bytes/max(x.Skills, 1)), perEdge)
}

// SectionTable is where an artifact's bytes go, for the largest build.
func (r *Report) SectionTable() string {
	if len(r.Builds) == 0 {
		return ""
	}
	big := r.Builds[0]
	for _, x := range r.Builds {
		if x.Skills > big.Skills {
			big = x
		}
	}
	var tags []string
	for t := range big.Sections {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool {
		if big.Sections[tags[i]] != big.Sections[tags[j]] {
			return big.Sections[tags[i]] > big.Sections[tags[j]]
		}
		return tags[i] < tags[j]
	})
	return table(tags, func(t string) string {
		n := big.Sections[t]
		return fmt.Sprintf("`%s` | %s | %.1f%% | %.1f", t, mdspan.Count(n), 100*float64(n)/float64(max(big.Bytes, 1)),
			float64(n)/float64(max(big.Skills, 1)))
	}, "section ("+mdspan.Count(big.Skills)+" skills)", "bytes", "share", "per skill")
}

// PushTable is forward push's accuracy per threshold.
func (r *Report) PushTable() string {
	return table(r.Push, Push.cells, "ε", "pushes", "ms", "L1 bound (residual)", "L1 measured",
		"same top 10, same order", "top-10 overlap")
}

// cells is the threshold's row of PushTable.
func (p Push) cells() string {
	return fmt.Sprintf("%g | %s | %.2f | %.2e | %.2e | %.0f%% | %.1f%%", p.Eps, mdspan.Count(int(p.Pushes+0.5)), p.Ms,
		p.Residual, p.L1, 100*p.SameTop10, 100*p.Top10)
}

// SemanticTable is the prefilter's recall and cost.
func (r *Report) SemanticTable() string {
	return table(r.Semantic, Semantic.cells, "index", "skills", "pool", "recall of the exact top 50", "of the top 5",
		"exact scan ms", "index ms")
}

// cells is the index's row of SemanticTable.
func (s Semantic) cells() string {
	index := s.Index
	if index == "" {
		index = "sign sketch"
	}
	return fmt.Sprintf("%s | %s | %s | %.1f%% | %.1f%% | %.2f | %.2f", index, mdspan.Count(s.Skills), mdspan.Count(s.Pool),
		100*s.Recall50, 100*s.Recall5, s.ExactMs, s.SketchMs)
}

// UpdateTable is the incremental-update stage: one row per library, the full build beside the
// update.
func (r *Report) UpdateTable() string {
	return table(r.Updates, Update.cells, "skills", "runs", "full build s (range)", "update s (range)", "update ÷ full",
		"peak RSS MB: full / update", "probes: full / update (reused)", "state MB", "artifact MB")
}

// cells is the library's row of UpdateTable.
func (u Update) cells() string {
	ratio := "—"
	if x := u.Ratio(); x > 0 {
		ratio = fmt.Sprintf("%.3f (%.1f× faster)", x, 1/x)
	}
	return fmt.Sprintf("%s | %s + %s | %s | %s | %s | %.0f / %.0f | %s / %s (%s) | %.1f | %.1f",
		mdspan.Count(u.Skills), mdspan.Count(u.OldRuns), mdspan.Count(u.NewRuns), u.Full.seconds("%.1f"), u.Update.seconds("%.2f"), ratio,
		u.Full.PeakRSSMB, u.Update.PeakRSSMB, mdspan.Count(u.Full.ProbesRun), mdspan.Count(u.Update.ProbesRun),
		mdspan.Count(u.Update.ProbesCached), float64(u.StateBytes)/1e6, float64(u.Bytes)/1e6)
}

// WasmTable is wazero and Node against native Go per library, for the full task texts and the
// same cut to 12 words: median (p95) and the ratio of the medians.
func (r *Report) WasmTable() string {
	keys := r.libraries("native")
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].skills < keys[j].skills })
	return table(keys, func(k library) string {
		nat, _ := r.latency(k.label, k.skills, "native")
		cells := []string{k.label, mdspan.Count(k.skills)}
		for _, words := range []bool{false, true} {
			n, okN := kind(nat, words)
			cells = append(cells, latencyCell(n, okN))
			for _, host := range []string{"wazero", "node"} {
				q, ok := r.latency(k.label, k.skills, host)
				l, okL := kind(q, words)
				c := latencyCell(l, ok && okL)
				if ok && okL && okN && n.MedianMs > 0 {
					c += fmt.Sprintf(" · %.1f×", l.MedianMs/n.MedianMs)
				}
				cells = append(cells, c)
			}
		}
		return strings.Join(cells, " | ")
	}, "library", "skills", "native: full text", "wazero", "Node", "native: 12 words", "wazero", "Node")
}

// kind is a query row's latency for the full texts or the 12-word cuts.
func kind(q Query, words bool) (Latency, bool) {
	if words {
		if q.Words12 == nil {
			return Latency{}, false
		}
		return *q.Words12, true
	}
	return Latency{Queries: q.Queries, MedianMs: q.MedianMs, P95Ms: q.P95Ms}, q.MedianMs > 0
}

func latencyCell(l Latency, ok bool) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%s (p95 %s)", dur(l.MedianMs), dur(l.P95Ms))
}

// peerKinds are the query kinds of the side-by-side run, in table order, with their column names.
var peerKinds = []struct{ Key, Name string }{{"full", "full text"}, {"words12", "12 words"}}

// PeerTable is the side-by-side run: one row per library and system.
func (r *Report) PeerTable() string {
	type row struct {
		run PeerRun
		sys PeerSystem
	}
	var rows []row
	runs := append([]PeerRun(nil), r.Peers...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Skills < runs[j].Skills })
	for _, run := range runs {
		for _, s := range run.Systems {
			rows = append(rows, row{run, s})
		}
	}
	cols := []string{"library", "system", "load / index"}
	for _, k := range peerKinds {
		cols = append(cols, k.Name+": median (p95)", "R@10 / COMP@10")
	}
	cols = append(cols, "JS heap MB", "JS + WASM KB gzip (raw)")
	return table(rows, func(x row) string {
		name := x.sys.System
		if x.sys.Variant != "" {
			name += " `" + x.sys.Variant + "`"
		} else if x.sys.Version != "" {
			name += " " + x.sys.Version
		}
		load := dur(x.sys.LoadMs)
		if x.sys.CompileMs > 0 {
			load += " (compile " + dur(x.sys.CompileMs) + ")"
		}
		cells := []string{x.run.Label + " " + mdspan.Count(x.run.Skills), name, load}
		for _, k := range peerKinds {
			pk, ok := x.sys.Kinds[k.Key]
			if !ok || pk.Queries == 0 {
				cells = append(cells, "—", "—")
				continue
			}
			lat := fmt.Sprintf("%s (p95 %s)", dur(pk.MedianMs), dur(pk.P95Ms))
			q := fmt.Sprintf("%.3f / %.3f", pk.R10, pk.COMP10)
			if pk.Tasks < x.run.Tasks {
				lat += fmt.Sprintf(", %d queries", pk.Queries)
				q += fmt.Sprintf(" (%d of %d tasks)", pk.Tasks, x.run.Tasks)
			}
			cells = append(cells, lat, q)
		}
		heap := fmt.Sprintf("%.1f", x.sys.HeapBytes/1e6)
		if x.sys.WasmBytes > 0 {
			heap += fmt.Sprintf(" + WASM %.0f", x.sys.WasmBytes/1e6)
		}
		code := fmt.Sprintf("%s (%s)", mdspan.Count((x.sys.Code.Gzip+500)/1000), mdspan.Count((x.sys.Code.Raw+500)/1000))
		cells = append(cells, heap, code)
		return strings.Join(cells, " | ")
	}, cols...)
}

// dur writes a time given in milliseconds in the unit that suits it: µs below 1 ms, ms below
// 1 s, s above.
func dur(msec float64) string {
	switch {
	case msec < 1:
		return fmt.Sprintf("%.0f µs", msec*1000)
	case msec < 1000:
		return ms(msec) + " ms"
	default:
		return fmt.Sprintf("%.2f s", msec/1000)
	}
}

// table is a Markdown table: the header row of columns and its rule, then a row for each of
// rows, the cells between its outer bars written by cells.
func table[T any](rows []T, cells func(T) string, columns ...string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(columns)) + "|\n")
	for _, x := range rows {
		b.WriteString("| " + cells(x) + " |\n")
	}
	return b.String()
}

// WasmLine states the module's sizes as figures (mdspan.Span), which make wasm keeps current
// between runs of make bench.
func (r *Report) WasmLine() string {
	w := r.Wasm
	return fmt.Sprintf("`bin/caskg.wasm`: %s bytes raw, %s gzip (level 9).",
		mdspan.Span("module-raw", mdspan.Count(w.Raw)), mdspan.Span("module-gzip", mdspan.Count(w.Gzip)))
}

// Terminal is what make bench prints: the tables without the prose.
func (r *Report) Terminal() string {
	return "Query latency (median, k = 10)\n" + r.QueryTable() + "\nBuild\n" + r.BuildTable() +
		"\nwazero and Node against native Go\n" + r.WasmTable() + "\nPeers side by side (Node)\n" + r.PeerTable() +
		"\nForward push vs power iteration\n" + r.PushTable() + "\nSemantic prefilter\n" + r.SemanticTable() +
		"\nIncremental update\n" + r.UpdateTable() + memoryTerminal(r) + "\n" + r.WasmLine() + "\n"
}

// memoryTerminal is the memory stage's tables for the terminal, "" when not measured.
func memoryTerminal(r *Report) string {
	if r.Memory == nil {
		return ""
	}
	return "\nMemory of past tasks\n" + r.MemoryTable() + "\n" + r.MemorySizeTable()
}

// Summary is the section make bench writes between the markers of docs/evaluation.md;
// benchmarks is the link to docs/benchmarks.md from that page.
func (r *Report) Summary(benchmarks string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by `make bench` from [benchmarks.md](%s) (%s; %s tasks, k = 10):\n\n", benchmarks, r.Machine, r.Tasks)
	b.WriteString(r.QueryTable())
	b.WriteString("\n")
	b.WriteString(r.BuildTable())
	b.WriteString("\n" + r.WasmLine() + " Forward push (from 20,000 skills), the semantic prefilter")
	if len(r.Peers) > 0 {
		b.WriteString(", 12-word queries and caskg beside MiniSearch, Orama and FlexSearch")
	}
	b.WriteString(": see benchmarks.md.\n")
	return b.String()
}

func ms(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func msOr(x float64) string {
	if x == 0 {
		return "—"
	}
	return ms(x)
}
