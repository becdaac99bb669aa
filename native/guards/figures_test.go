package guards

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// The documentation's numbers that a measurement produces must each be written by the job that
// measures it or held to it by a test. These are the places that are so; a measured-looking
// number anywhere else on a page is a figure that will go stale.
var (
	// generatedSpans are the <!-- NAME:begin --> … <!-- NAME:end --> spans a make target
	// rewrites whole (native/lab/internal/mdspan).
	generatedSpans = map[string]string{
		"eval":  "make eval (caskg-lab report)",
		"bench": "make bench (caskg-bench)",
	}
	// figureKinds are the one-line spans <!-- KIND:NAME -->VALUE<!-- /KIND -->.
	figureKinds = map[string]string{
		"size": "make wasm, make worker, make bench-worker; TestDocFigures in native/lab/cmd/caskg-sizes",
		"fig":  "the test its name's prefix names (checkers)",
	}
	// checkers: the prefix of a fig: figure's name, and the test that holds it.
	checkers = map[string]checker{
		"eval":     {"native/guards", "TestRecordFigures"}, // against docs/evaluation-results.md
		"alias":    {"native/internal/builder", "TestAliasRealLibrary"},
		"semantic": {"native/internal/builder", "TestSemanticBar"},
	}
	// outputMarkers tie the fenced block on the next line to what a test runs.
	outputMarkers = map[string]checker{
		"caskg-output":   {"native/internal/cli", "TestDocOutputs"},
		"gateway-output": {"native/internal/gateway", "TestDocSearchTools"},
	}
)

// A checker is the test that holds a kind of figure: its package's folder and its name.
type checker struct{ dir, test string }

// TestFigureCheckers fails when a test the figure check counts on is gone, which would leave
// its figures checked by nothing.
func TestFigureCheckers(t *testing.T) {
	for _, c := range append(slices.Collect(maps.Values(checkers)), slices.Collect(maps.Values(outputMarkers))...) {
		files, err := filepath.Glob(filepath.Join(root, c.dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || bytes.Contains(b, []byte("\nfunc "+c.test+"(t *testing.T) {"))
		}
		if !found {
			t.Errorf("%s has no %s, which the figure check counts on", c.dir, c.test)
		}
	}
}

var (
	spanMarker   = regexp.MustCompile(`^<!-- ([a-z0-9-]+):(begin|end) -->$`)
	outputMarker = regexp.MustCompile(`^<!-- ([a-z0-9-]+): .+ -->$`)
	figureSpan   = regexp.MustCompile(`<!-- ([a-z]+):([a-z0-9-]+) -->[^<\n]*<!-- /([a-z]+) -->`)
	comment      = regexp.MustCompile(`<!--.*?-->`)
	codeSpan     = regexp.MustCompile("(`+)[^`]*?(`+)")
	linkTarget   = regexp.MustCompile(`\]\([^)]*\)`)
	fence        = regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^`\\s]*)")
)

// A measured-looking number is one a person would have to re-measure to keep true. Set
// apart from the numbers that are what they are by definition (defaults, limits, counts,
// versions, flag values in code), they are:
//   - a decimal with a unit of time, size, share or speed-up: 0.8 s, 3.36 MB, 6.4×, 12.5%
//     (a whole number with a unit is a limit or a default: 4 MiB, 30s, 150 ms);
//   - any number of kilo-, mega- or gigabytes in the decimal units: 530 KB (limits are written
//     in KiB, MiB; measured sizes in KB, MB);
//   - a range with a unit: 2–16 ms, 0.38–0.59 s (the spread of runs);
//   - a decimal with three or more places: 0.060, .944, 0.9061 (scores);
//   - a before → after pair of decimals: .52 → .94;
//   - a rank: #3;
//   - an approximation: about 11 s, about 112,000, about two minutes.
var (
	unit       = `(?:µs|ns|ms|s|sec|seconds?|min|minutes?|h|hours?|B|bytes|KB|MB|GB|KiB|MiB|GiB|%|×|x)`
	decimalU   = regexp.MustCompile(`(?:^|[^\w.])(\d*\.\d+ ?` + unit + `)(?:$|[^\w])`)
	siSize     = regexp.MustCompile(`(?:^|[^\w.])([\d,.]+ ?[KMG]B)\b`)
	rangeU     = regexp.MustCompile(`(?:^|[^\w.])(\d[\d.,]* ?[–-] ?\d[\d.,]* ?` + unit + `)(?:$|[^\w])`)
	threePlace = regexp.MustCompile(`(?:^|[^\w.])(\d*\.\d{3,})(?:$|[^\w.]|\.(?:\D|$))`)
	arrow      = regexp.MustCompile(`(\d*\.\d+ ?(?:→|->) ?\d*\.\d+)`)
	rank       = regexp.MustCompile(`(?:^|[^\w&])(#\d+)\b`)
	reference  = regexp.MustCompile(`(?i)\b(?:issue|issues|pr|pull request)s? #\d+`) // a number, not a rank
	about      = regexp.MustCompile(`(?i)\b((?:about|around|roughly|nearly|approximately|~) ?(?:\d[\d.,]*|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|a (?:few|couple)|half)\b[^\s,;.)]*(?: ` + unit + `\b)?)`)
)

// anyDecimal is a decimal that is not part of a version or an address (1.24.1, 127.0.0.1).
var anyDecimal = regexp.MustCompile(`(?:^|[^\w.])(\d*\.\d+)(?:$|[^\w.]|\.(?:\D|$))`)

// measuredInOutput returns the measured-looking numbers of a line of a program's output, where
// every decimal is one (a score, a weight, a time) besides what prose counts.
func measuredInOutput(line string) []string {
	found := measuredLooking(line)
	for _, m := range anyDecimal.FindAllStringSubmatch(line, -1) {
		if !slices.ContainsFunc(found, func(f string) bool { return strings.Contains(f, m[1]) }) {
			found = append(found, m[1])
		}
	}
	return found
}

// measuredLooking returns the measured-looking numbers of one line of prose, from which code
// spans, comments and link targets are already gone.
func measuredLooking(prose string) []string {
	var found []string
	prose = reference.ReplaceAllString(prose, " ")
	for _, re := range []*regexp.Regexp{decimalU, siSize, rangeU, threePlace, arrow, rank, about} {
		for _, m := range re.FindAllStringSubmatch(prose, -1) {
			if f := strings.TrimSpace(m[1]); !slices.Contains(found, f) {
				found = append(found, f)
			}
		}
	}
	// One figure, one report: "0.59 s" is part of "0.38–0.59 s".
	return slices.DeleteFunc(slices.Clone(found), func(f string) bool {
		return slices.ContainsFunc(found, func(g string) bool { return g != f && strings.Contains(g, f) })
	})
}

// uncheckedFigures reads one documentation page and returns, as "file:line: …" problems, the
// measured-looking numbers outside every checked place (a generated span, a figure span, a
// block under an output marker), and the checked places no job or test claims. Fenced blocks
// with a language (commands, configuration, code) hold inputs, not measurements, and are not
// read; blocks without one (or "text") are output and must be under an output marker when
// they show a measured-looking number.
func uncheckedFigures(rel string, doc []byte) []string {
	var problems []string
	report := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", rel, line)+fmt.Sprintf(format, args...))
	}
	var (
		span                   string // the generated span the line is in
		inFence                bool
		fenceMark              string
		readFence, markedFence bool
		marker                 string // the output marker of the line before
	)
	for i, line := range strings.Split(string(doc), "\n") {
		n := i + 1
		prevMarker := marker
		marker = ""
		if inFence {
			if strings.HasPrefix(strings.TrimSpace(line), fenceMark) && strings.Trim(strings.TrimSpace(line), fenceMark[:1]) == "" {
				inFence = false
				continue
			}
			if readFence && !markedFence && span == "" {
				for _, f := range measuredInOutput(line) {
					report(n, "%q in an output block that no test runs: put an output marker (%s) above the block, or leave the figure out", f, strings.Join(sortedKeys(outputMarkers), ", "))
				}
			}
			continue
		}
		if m := fence.FindStringSubmatch(line); m != nil {
			inFence, fenceMark = true, m[1]
			readFence = m[2] == "" || m[2] == "text"
			markedFence = prevMarker != ""
			continue
		}
		if m := spanMarker.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if _, ok := generatedSpans[m[1]]; !ok {
				report(n, "span %s is written by no make target this check knows (%s)", m[1], strings.Join(sortedKeys(generatedSpans), ", "))
			}
			switch {
			case m[2] == "begin" && span == "":
				span = m[1]
			case m[2] == "end" && span == m[1]:
				span = ""
			default:
				report(n, "span marker %s:%s out of order", m[1], m[2])
			}
			continue
		}
		if m := outputMarker.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if _, ok := outputMarkers[m[1]]; ok {
				marker = m[1]
				continue
			}
		}
		if span != "" {
			continue
		}
		for _, m := range figureSpan.FindAllStringSubmatch(line, -1) {
			kind, name, closer := m[1], m[2], m[3]
			if _, ok := figureKinds[kind]; !ok || closer != "/"+kind && closer != kind {
				report(n, "figure span %s:%s is not one of %s closed by its /KIND", kind, name, strings.Join(sortedKeys(figureKinds), ", "))
				continue
			}
			if kind == "fig" {
				prefix, _, _ := strings.Cut(name, "-")
				if _, ok := checkers[prefix]; !ok {
					report(n, "figure %s: no test checks the prefix %q (known: %s)", name, prefix, strings.Join(sortedKeys(checkers), ", "))
				}
			}
		}
		prose := figureSpan.ReplaceAllString(line, " ")
		prose = comment.ReplaceAllString(prose, " ")
		prose = codeSpan.ReplaceAllString(prose, " ")
		prose = linkTarget.ReplaceAllString(prose, "]")
		for _, f := range measuredLooking(prose) {
			report(n, "%q looks measured but no job writes it and no test checks it: generate it, wrap it in <!-- fig:NAME --> for a test that checks it, or leave it out", f)
		}
	}
	if span != "" {
		report(0, "span %s is never closed", span)
	}
	return problems
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// recordPages are the pages of docs/ that are records, not pages of a surface: the reports
// make eval and make bench write (docs/evaluation-results.md, docs/benchmarks.md) are the
// measured record itself, and docs/rationale.md, like the lab notes, is history, each number
// dated by the decision it took. Neither the figure check nor the table of contents holds them.
var recordPages = map[string]bool{
	"docs/benchmarks.md":         true,
	"docs/evaluation-results.md": true,
	"docs/rationale.md":          true,
}

// figurePages are the pages whose numbers are held: the README and docs/ but its recordPages.
func figurePages(t *testing.T) []string {
	var pages []string
	for _, rel := range fixture.MarkdownFiles(t, root) {
		if recordPages[rel] {
			continue
		}
		if rel == "README.md" || strings.HasPrefix(rel, "docs/") {
			pages = append(pages, rel)
		}
	}
	return pages
}

// TestDocFiguresChecked fails on a measured-looking number of the README or a docs/ page that no
// job writes and no test checks.
func TestDocFiguresChecked(t *testing.T) {
	pages := figurePages(t)
	if len(pages) < 10 {
		t.Fatalf("pages %v: want the README and every page of docs/", pages)
	}
	for _, rel := range pages {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range uncheckedFigures(rel, b) {
			t.Error(p)
		}
	}
}

// TestMeasuredLooking shows what the check takes for a measurement and what it leaves alone.
func TestMeasuredLooking(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// measurements
		{"about 0.8 s cold, 80 ms warm", []string{"about 0.8 s"}},
		{"The Go runtime alone is 530 KB gzip.", []string{"530 KB"}},
		{"the artifact is 3.36 MB", []string{"3.36 MB"}},
		{"| 0.38–0.59 s (5 runs) |", []string{"0.38–0.59 s"}},
		{"one answer takes 2–16 ms", []string{"2–16 ms"}},
		{"COMP@10 from 0.060 to 0.861", []string{"0.060", "0.861"}},
		{"(MetaTool COMP@10 .52 → .94)", []string{".52 → .94"}},
		{"finds xlsx at #3", []string{"#3"}},
		{"it takes about 11 s after the module is built", []string{"about 11 s"}},
		{"about two minutes on two cores", []string{"about two minutes"}},
		{"6.4× slower, 12.5% of the time", []string{"6.4×", "12.5%"}},
		{"a score of 0.9061 and w=0.28", []string{"0.9061"}},
		// definitions: defaults, limits, versions, counts, parameters
		{"Go 1.26 (tested with 1.26.8), ONNX Runtime ≥ 1.24, format 2.1", nil},
		{"a file over 4 MiB, 64 KiB of query, 25 MiB limit", nil},
		{"waits up to 3 s; --trace-gap (30s); 150 ms after the last key; buckets 1 ms to 60 s", nil},
		{"A ≥ .05; ρ = 1 confirmed, .75 uncertain; γ = 0.2; error 0.1", nil},
		{"10% and 30% error; 1% more runs; 859 skills, 1,000 runs, 12,000 characters", nil},
		{"workerd 1.20261117.1, server-filesystem 2026.8.31, v0.159.0", nil},
		{"the 40 sample tasks; 1 to 128 characters", nil},
		{"as issue #34 asked, and PR #12; &#8212;", nil},
	} {
		if got := measuredLooking(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestUncheckedFigures shows where a measured-looking number may stand and where it may not.
func TestUncheckedFigures(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"clean", "# x\n\nThe module is <!-- size:module-gzip -->723,697<!-- /size --> gzip, " +
			"learning takes it from <!-- fig:eval-gateway-toollinkos-before -->0.060<!-- /fig -->.\n\n" +
			"<!-- bench:begin -->\n| real | 0.12 ms |\n<!-- bench:end -->\n\n" +
			"<!-- caskg-output: query bin/sample.skg \"egg\" -->\n```text\n 2. go-to-location 0.9061 via graph\n```\n\n" +
			"```sh\ncaskg build --oracle-error 0.125 lib\n```\n\nIn code: `0.9061`, a [link](rationale.md#the-700-kb-budget).\n", nil},
		{"prose", "# x\n\nIt loads in 0.38 s.\n", []string{`p.md:3: "0.38 s" looks measured`}},
		{"output block without a marker", "# x\n\n```\n1. shop__cancel_order (w=0.283)\n```\n",
			[]string{`p.md:4: "0.283" in an output block that no test runs`}},
		{"a weight in an output block", "# x\n\n```text\n- after shop__list_orders (uncertain workflow, w=0.28)\nserving on 127.0.0.1:8080, caskg 0.1.0\n```\n",
			[]string{`p.md:4: "0.28" in an output block that no test runs`}},
		{"a marker no test knows", "# x\n\n<!-- my-output: query x -->\n```\n0.283\n```\n",
			[]string{`p.md:5: "0.283" in an output block`}},
		{"a span no job writes", "# x\n\n<!-- mine:begin -->\n0.283\n<!-- mine:end -->\n",
			[]string{"p.md:3: span mine is written by no make target", "p.md:5: span mine is written by no make target"}},
		{"a figure no test checks", "# x\n\nIt is <!-- fig:hand-made -->0.283<!-- /fig -->.\n",
			[]string{`p.md:3: figure hand-made: no test checks the prefix "hand"`}},
		{"a figure kind nobody writes", "# x\n\nIt is <!-- speed:x -->0.283<!-- /speed -->.\n",
			[]string{"p.md:3: figure span speed:x is not one of"}},
		{"an unclosed span", "# x\n\n<!-- eval:begin -->\n0.283\n", []string{"p.md:0: span eval is never closed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := uncheckedFigures("p.md", []byte(tc.doc))
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d problems %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d: %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
}

// FuzzUncheckedFigures: any page, however broken, gives problems that name it, never a panic.
func FuzzUncheckedFigures(f *testing.F) {
	for _, s := range []string{
		"# x\n\nIt loads in 0.38 s, <!-- fig:eval-a -->0.060<!-- /fig -->.\n",
		"<!-- bench:begin -->\n| 0.12 ms |\n<!-- bench:end -->\n<!-- caskg-output: q -->\n```text\nw=0.28\n```\n",
		"```\n#1 0.30\n", "<!-- eval:end -->\n<!-- x:begin -->", "<!-- fig:a --><!-- /size -->`0.1` about ~",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		for _, p := range uncheckedFigures("p.md", []byte(doc)) {
			if !strings.HasPrefix(p, "p.md:") {
				t.Fatalf("problem %q does not name the page", p)
			}
		}
	})
}
