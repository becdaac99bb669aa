// Package bench holds the results of `make bench` (caskg-bench) and renders them: the table
// printed on the terminal, BENCHMARKS.md, and the README section between the markers
// <!-- bench:begin --> and <!-- bench:end --> (rewritten by package mdspan, like the
// evaluation's section). Measuring is caskg-bench's job; this package only models, formats and
// writes, so that the formatting is tested without running a benchmark.
package bench

import (
	"fmt"
	"sort"
	"strings"
)

// README markers: make bench rewrites only what lies between them.
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

// Semantic is the sign-sketch prefilter against the exact vector scan.
type Semantic struct {
	Skills   int     `json:"skills"`
	Pool     int     `json:"pool"`
	Recall50 float64 `json:"recall50"` // share of the exact top 50 the prefilter keeps
	Recall5  float64 `json:"recall5"`
	ExactMs  float64 `json:"exact_ms"`
	SketchMs float64 `json:"sketch_ms"`
}

// Sizes are a WebAssembly module's bytes.
type Sizes struct {
	Raw, Gzip, Brotli int
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

// QueryTable is the latency table: one row per artifact, median (p95) per host and load time.
func (r *Report) QueryTable() string {
	type key struct {
		label  string
		skills int
	}
	var keys []key
	seen := map[key]bool{}
	for _, q := range r.Queries {
		if k := (key{q.Label, q.Skills}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].skills < keys[j].skills })
	return table(keys, func(k key) string {
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
		return fmt.Sprintf("%s | %s | %s | %s | %s | %s | %s", k.label, count(k.skills), nat, wz, nd, ratio, load)
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
	return fmt.Sprintf("%s | %s | %.1f | %.1f | %.0f | %s | %s | %.1f | %s | %s", x.Label, count(x.Skills),
		x.Seconds, x.Stages["candidates"], x.PeakRSSMB, count(x.Candidates), count(x.Edges),
		float64(x.Bytes)/1e6, count(x.Bytes/max(x.Skills, 1)), perEdge)
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
		return fmt.Sprintf("`%s` | %s | %.1f%% | %.1f", t, count(n), 100*float64(n)/float64(max(big.Bytes, 1)),
			float64(n)/float64(max(big.Skills, 1)))
	}, "section ("+count(big.Skills)+" skills)", "bytes", "share", "per skill")
}

// PushTable is forward push's accuracy per threshold.
func (r *Report) PushTable() string {
	return table(r.Push, Push.cells, "ε", "pushes", "ms", "L1 bound (residual)", "L1 measured",
		"same top 10, same order", "top-10 overlap")
}

// cells is the threshold's row of PushTable.
func (p Push) cells() string {
	return fmt.Sprintf("%g | %s | %.2f | %.2e | %.2e | %.0f%% | %.1f%%", p.Eps, count(int(p.Pushes+0.5)), p.Ms,
		p.Residual, p.L1, 100*p.SameTop10, 100*p.Top10)
}

// SemanticTable is the prefilter's recall and cost.
func (r *Report) SemanticTable() string {
	return table(r.Semantic, Semantic.cells, "skills", "pool", "recall of the exact top 50", "of the top 5",
		"exact scan ms", "prefilter ms")
}

// cells is the size's row of SemanticTable.
func (s Semantic) cells() string {
	return fmt.Sprintf("%s | %s | %.1f%% | %.1f%% | %.2f | %.2f", count(s.Skills), count(s.Pool),
		100*s.Recall50, 100*s.Recall5, s.ExactMs, s.SketchMs)
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

// WasmLine states the module's sizes.
func (r *Report) WasmLine() string {
	w := r.Wasm
	return fmt.Sprintf("`bin/caskg.wasm`: %s bytes raw, %s gzip -9, %s brotli -q 11.", count(w.Raw), count(w.Gzip), count(w.Brotli))
}

// Terminal is what make bench prints: the tables without the prose.
func (r *Report) Terminal() string {
	return "Query latency (median, k = 10)\n" + r.QueryTable() + "\nBuild\n" + r.BuildTable() +
		"\nForward push vs power iteration\n" + r.PushTable() + "\nSemantic prefilter\n" + r.SemanticTable() +
		"\n" + r.WasmLine() + "\n"
}

// README is the section make bench writes between the README markers.
func (r *Report) README() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by `make bench` from [BENCHMARKS.md](BENCHMARKS.md) (%s; %s tasks, k = 10):\n\n", r.Machine, r.Tasks)
	b.WriteString(r.QueryTable())
	b.WriteString("\n")
	b.WriteString(r.BuildTable())
	b.WriteString("\n" + r.WasmLine() + " Forward push (from 20,000 skills) and the semantic prefilter: see BENCHMARKS.md.\n")
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

// count writes n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
