package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
)

// Markers of the gateway's section of docs/benchmarks.md: make bench-gateway rewrites only what lies
// between them, and caskg-bench keeps it when it rewrites the rest of the file.
const (
	GatewayBegin = "<!-- gateway-bench:begin -->"
	GatewayEnd   = "<!-- gateway-bench:end -->"
)

// Targets of the gateway, in microseconds. It stands between an agent and every tool call, so
// what it adds is paid on each one.
const (
	targetAddedP50us  = 1000 // a proxied call's p50 over a direct one's
	targetSearchP50us = 2000 // search_tools at 4,076 tools, in process
)

// GoBench is one result line of `go test -bench`.
type GoBench struct {
	Name    string             // without "Benchmark" and the -GOMAXPROCS suffix
	N       int                // iterations
	Metrics map[string]float64 // by unit: ns/op, B/op, allocs/op and the benchmark's own
}

// ParseGoBench reads the result lines of `go test -bench` output; every other line (headers,
// logs, PASS, ok) is skipped. A line that starts like a result (a Benchmark name and an
// iteration count) but whose metrics are not value-unit pairs is an error naming its line.
func ParseGoBench(r io.Reader) ([]GoBench, error) {
	var out []GoBench
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n <= 0 {
			continue
		}
		if len(f)%2 != 0 || len(f) == 2 {
			return nil, fmt.Errorf("bench: line %d: %s: want value-unit pairs after the iteration count", line, f[0])
		}
		b := GoBench{Name: benchName(f[0]), N: n, Metrics: map[string]float64{}}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bench: line %d: %s: %q is not a number", line, f[0], f[i])
			}
			b.Metrics[f[i+1]] = v
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return out, nil
}

// benchName drops the "Benchmark" prefix and the "-N" GOMAXPROCS suffix.
func benchName(s string) string {
	s = strings.TrimPrefix(s, "Benchmark")
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		if _, err := strconv.Atoi(s[i+1:]); err == nil {
			s = s[:i]
		}
	}
	return s
}

// GatewaySection is the gateway's part of docs/benchmarks.md (between GatewayBegin and GatewayEnd)
// from the results of its benchmarks: proxied calls, search_tools and the learning loop's
// update-and-swap. A benchmark missing from results (skipped without the shared data) is said
// to be so.
func GatewaySection(results []GoBench, machine string) string {
	by := map[string]GoBench{}
	for _, r := range results {
		by[r.Name] = r
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Gateway\n\n")
	p("Written by `make bench-gateway` (part of `make bench`) from the Go benchmarks of [native/internal/gateway](../native/internal/gateway/bench_test.go)\n")
	p("and [native/internal/gateway/learn](../native/internal/gateway/learn/bench_test.go); machine: %s. Percentiles are over\n", machine)
	p("every timed iteration; the machine is shared, so p99 moves a lot from run to run.\n\n")

	p("### What a proxied call adds\n\n")
	p("One `tools/call` of a Seal-Tools tool (16 tools with output schemas in turn, their example arguments) on the\n")
	p("catalog server ([native/lab/cmd/catalog-server](../native/lab/cmd/catalog-server/main.go)) straight from a client,\n")
	p("and the same call through the gateway's `call_tool`, interleaved. stdio: the catalog server is a child process\n")
	p("of the client and of the gateway, whose front is served over OS pipes. HTTP: the catalog server on streamable\n")
	p("HTTP on loopback, the gateway's front too. Added is the gateway's percentile minus the direct one's (at p99,\n")
	p("two independent tails: it can come out negative).\n")
	p("Target: added p50 ≤ 1 ms.\n\n")
	writeTable(&b, picked(by, "ProxiedCall/", "stdio", "http"), func(r GoBench) string {
		return fmt.Sprintf("%s | %s | %s | **%s** | %s | %s | %s | %s | %s", r.Name,
			usCell(r, "direct-p50-us"), usCell(r, "gateway-p50-us"), usCell(r, "added-p50-us"),
			usCell(r, "direct-p99-us"), usCell(r, "gateway-p99-us"), usCell(r, "added-p99-us"),
			mdspan.Count(r.N), met(r, "added-p50-us", targetAddedP50us))
	}, "transport", "direct p50", "gateway p50", "added p50", "direct p99", "gateway p99", "added p99", "calls", "target")

	p("### search_tools on Seal-Tools (4,076 tools, in process)\n\n")
	p("`search_tools` with the default k on the 4,076 tools of Seal-Tools served by the catalog server in process,\n")
	p("from a client of the front over in-memory transports: the whole request, the result with every tool's input\n")
	p("schema encoded, and decoded by the client. The queries are the data set's %s task texts in turn. `graph`\n", mdspan.Count(1354))
	p("ranks over the learning loop's first full build; `lexical` is the fallback before the first graph (its BM25\n")
	p("index is built at a catalog's first lexical search, before the timed ones).\n")
	p("Target: graph p50 ≤ 2 ms.\n\n")
	writeTable(&b, picked(by, "SearchTools/", "graph", "lexical"), func(r GoBench) string {
		target := "—"
		if r.Name == "graph" {
			target = met(r, "p50-us", targetSearchP50us)
		}
		return fmt.Sprintf("%s | **%s** | %s | %s | %s | %s | %s", r.Name, usCell(r, "p50-us"), usCell(r, "p99-us"),
			bytesCell(r.Metrics["B/op"]), mdspan.Count(int(r.Metrics["allocs/op"])), mdspan.Count(r.N), target)
	}, "ranking", "p50", "p99", "allocated / search", "allocs / search", "searches", "target")

	p("### Update and swap as traces accumulate (ToolLinkOS)\n\n")
	p("The learning loop on ToolLinkOS served as one server: `full` is the first full build (the catalog handed\n")
	p("over until the graph is swapped in); `learned=L/new=N` is the incremental update that N new traces start on\n")
	p("a graph that has learned L, from the first Record of the batch until the new graph and engine answer\n")
	p("(the batch's fsynced appends included). Queries never wait for it. Mean of the timed runs.\n\n")
	var updates []GoBench
	for _, r := range results {
		if name, ok := strings.CutPrefix(r.Name, "UpdateSwap/"); ok {
			r.Name = name
			updates = append(updates, r)
		}
	}
	writeTable(&b, updates, func(r GoBench) string {
		return fmt.Sprintf("%s | %s | %d", r.Name, dur(r.Metrics["ns/op"]/1e6), r.N)
	}, "case", "update and swap", "runs")
	p("```sh\nmake bench-gateway   # or: go test -run '^$' -bench 'ProxiedCall|SearchTools' ./native/internal/gateway; go test -run '^$' -bench UpdateSwap ./native/internal/gateway/learn\n```\n")
	return b.String()
}

// picked returns by[prefix+name] for each name that was measured, named name.
func picked(by map[string]GoBench, prefix string, names ...string) []GoBench {
	var rows []GoBench
	for _, name := range names {
		if r, ok := by[prefix+name]; ok {
			r.Name = name
			rows = append(rows, r)
		}
	}
	return rows
}

// writeTable writes the table of rows to b, or a line saying nothing was measured.
func writeTable(b *strings.Builder, rows []GoBench, cells func(GoBench) string, columns ...string) {
	if len(rows) == 0 {
		b.WriteString("Not measured (the shared data was missing).\n\n")
		return
	}
	b.WriteString(table(rows, cells, columns...))
	b.WriteString("\n")
}

func usCell(r GoBench, unit string) string {
	v, ok := r.Metrics[unit]
	if !ok {
		return "—"
	}
	return dur(v / 1000)
}

func bytesCell(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.0f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// met says whether the metric unit of r is within the target.
func met(r GoBench, unit string, target float64) string {
	v, ok := r.Metrics[unit]
	switch {
	case !ok:
		return "—"
	case v <= target:
		return "met (≤ " + dur(target/1000) + ")"
	}
	return "**missed** (≤ " + dur(target/1000) + ")"
}

// KeepGatewaySection returns doc, a docs/benchmarks.md caskg-bench has just rendered, with the gateway
// section of old (the file it replaces) appended, markers included, so that rewriting the rest
// does not drop what make bench-gateway wrote. Without a whole section in old (each marker
// once, begin first), doc is returned as is.
func KeepGatewaySection(doc, old string) string {
	i, j := strings.Index(old, GatewayBegin), strings.Index(old, GatewayEnd)
	if i < 0 || j < i || strings.Count(old, GatewayBegin) != 1 || strings.Count(old, GatewayEnd) != 1 ||
		strings.Contains(doc, GatewayBegin) || strings.Contains(doc, GatewayEnd) {
		return doc
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + old[i:j+len(GatewayEnd)] + "\n"
}

// WithGatewayMarkers returns doc with an empty gateway section appended when it has neither
// marker, so that the section can be written into a docs/benchmarks.md that never had one.
func WithGatewayMarkers(doc string) string {
	if strings.Contains(doc, GatewayBegin) || strings.Contains(doc, GatewayEnd) {
		return doc
	}
	if doc = strings.TrimRight(doc, "\n"); doc != "" {
		doc += "\n\n"
	}
	return doc + GatewayBegin + "\n" + GatewayEnd + "\n"
}
