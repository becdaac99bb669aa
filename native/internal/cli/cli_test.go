package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/internal/cli/export"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/google/go-cmp/cmp"
)

// The sample library and its tasks (testlib's), and a query it answers.
const (
	sampleLib   = fixture.SampleLib
	sampleTasks = fixture.SampleTasks
	sampleCount = fixture.SampleCount
	sampleQuery = "heat some egg and put it in the garbage can"
)

// result is what one Run gave.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the caskg command line args in-process.
func run(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// mustRun runs args and fails the test unless they exit 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := run(t, args...)
	if r.code != 0 {
		t.Fatalf("caskg %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// failCase is a command line that must fail: its exit code and a piece of its standard error.
type failCase struct {
	name string
	args []string
	code int
	want string
}

// checkFails runs each case as a subtest: it must exit with code, print want on standard error
// and nothing on standard output.
func checkFails(t *testing.T, tests []failCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("caskg %s: exit %d, stdout %q, stderr %q; want exit %d and %q on stderr",
					strings.Join(tt.args, " "), r.code, r.stdout, r.stderr, tt.code, tt.want)
			}
		})
	}
}

// buildSample builds the sample library into a fresh artifact and returns its path.
func buildSample(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sample.skg")
	mustRun(t, "build", sampleLib, "-o", out)
	return out
}

// files and skillMD are testlib's, under short names for the tables.
type files = fixture.Files

var skillMD = fixture.SkillMD

// checks collects failed expectations of one test and reports them together.
type checks struct {
	t    *testing.T
	fail []string
}

func (c *checks) errorf(format string, a ...any) {
	c.fail = append(c.fail, strings.TrimSpace(fmt.Sprintf(format, a...)))
}

func (c *checks) done() {
	c.t.Helper()
	if len(c.fail) == 0 {
		return
	}
	c.t.Error(strings.Join(c.fail, "\n"))
}

// queryResult is one result of query --json.
type queryResult struct {
	Name     string  `json:"name"`
	Score    float64 `json:"score"`
	SeedRank int     `json:"seed_rank"`
	Graph    bool    `json:"graph"`
	Via      []struct {
		From    string  `json:"from"`
		State   string  `json:"state"`
		Weight  float64 `json:"weight"`
		Type    string  `json:"type"`
		Reverse bool    `json:"reverse"`
	} `json:"via"`
}

// decodeJSON decodes one JSON document, failing the test on an error.
func decodeJSON(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("output is not the JSON expected: %v\n%s", err, data)
	}
}

func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func stateNames() []string {
	return names(graphs.States(), func(s graphs.State) string { return s.String() })
}

func relationNames() []string {
	return names(graphs.Relations(), func(r graphs.Relation) string { return r.String() })
}

// checkResults checks the invariants of a ranked bundle: k results at most, unique names,
// scores not increasing, seed ranks unique, via edges well formed.
func checkResults(t *testing.T, res []queryResult) {
	t.Helper()
	seen := map[string]bool{}
	ranks := map[int]bool{}
	for i, r := range res {
		if r.Name == "" || seen[r.Name] {
			t.Errorf("result %d: empty or repeated name %q", i, r.Name)
		}
		seen[r.Name] = true
		if i > 0 && r.Score > res[i-1].Score {
			t.Errorf("result %d (%s): score %v above the previous %v", i, r.Name, r.Score, res[i-1].Score)
		}
		if r.SeedRank < 0 || (r.SeedRank > 0 && ranks[r.SeedRank]) {
			t.Errorf("result %d (%s): bad or repeated seed_rank %d", i, r.Name, r.SeedRank)
		}
		ranks[r.SeedRank] = r.SeedRank > 0
		for _, v := range r.Via {
			if v.From == "" || v.From == r.Name || !slices.Contains(stateNames(), v.State) ||
				!slices.Contains(relationNames(), v.Type) || v.Weight <= 0 || v.Weight > 1 {
				t.Errorf("result %d (%s): bad via %+v", i, r.Name, v)
			}
		}
	}
}

func TestBuildSample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sample.skg")
	r := mustRun(t, "build", sampleLib, "-o", out)
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.stderr != "" {
		t.Errorf("stderr = %q, want nothing", r.stderr)
	}
	number := func(re string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("summary does not match %q:\n%s", re, r.stdout)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := number(`(?m)^read\s+(\d+) skills from ` + regexp.QuoteMeta(sampleLib) + `$`); n != sampleCount {
		t.Errorf("summary reads %d skills, want %d", n, sampleCount)
	}
	cands := number(`(?m)^candidates (\d+) \(`)
	pub := number(`(?m)^published (\d+) edges \(`)
	if cands == 0 || pub == 0 || pub > cands {
		t.Errorf("summary: %d candidates, %d published; want 0 < published <= candidates", cands, pub)
	}
	if n := number(`(?m)^wrote\s+` + regexp.QuoteMeta(out) + `, (\d+) bytes`); int64(n) != fi.Size() {
		t.Errorf("summary says %d bytes, file has %d", n, fi.Size())
	}
	if strings.Contains(r.stdout, "skipped") {
		t.Errorf("sample library reports skipped skills:\n%s", r.stdout)
	}

	// --json and --report give the same numbers for machines.
	rep := filepath.Join(t.TempDir(), "report.json")
	r = mustRun(t, "build", sampleLib, "-o", out, "--json", "--report", rep)
	type summary struct {
		Skills     int      `json:"skills"`
		Candidates int      `json:"candidates"`
		Published  int      `json:"published"`
		Bytes      int      `json:"bytes"`
		Output     string   `json:"output"`
		Skipped    []string `json:"skipped"`
	}
	var js, fromFile summary
	decodeJSON(t, r.stdout, &js)
	want := summary{Skills: sampleCount, Candidates: cands, Published: pub, Bytes: int(fi.Size()), Output: out, Skipped: []string{}}
	if diff := cmp.Diff(want, js); diff != "" {
		t.Errorf("build --json summary (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatalf("--report: %v", err)
	}
	decodeJSON(t, string(data), &fromFile)
	if diff := cmp.Diff(want, fromFile); diff != "" {
		t.Errorf("build --report file (-want +got):\n%s", diff)
	}
}

func TestQuery(t *testing.T) {
	art := buildSample(t)
	numbered := regexp.MustCompile(`(?m)^ ?\d+\. (\S+)`)

	t.Run("text", func(t *testing.T) {
		r := mustRun(t, "query", art, sampleQuery)
		if !strings.HasPrefix(r.stdout, "8 skills for \""+sampleQuery+"\" (match 0.") {
			t.Errorf("text output does not start with the count and the task:\n%s", r.stdout)
		}
		m := numbered.FindAllStringSubmatch(r.stdout, -1)
		if len(m) != 8 {
			t.Fatalf("got %d ranked lines, want the default 8:\n%s", len(m), r.stdout)
		}
		// The task's main skill (sample-tasks.jsonl t01) comes first, as the top seed.
		if m[0][1] != "heat-object-in-microwave" || !strings.Contains(r.stdout, "seed #1") {
			t.Errorf("first result %q, want heat-object-in-microwave as seed #1:\n%s", m[0][1], r.stdout)
		}
		if !strings.Contains(r.stdout, "↳ ") {
			t.Errorf("no result shows the edge it came through:\n%s", r.stdout)
		}
	})

	t.Run("json", func(t *testing.T) {
		r := mustRun(t, "query", art, sampleQuery, "--json")
		var resp struct{ Results []queryResult }
		decodeJSON(t, r.stdout, &resp)
		if len(resp.Results) != 8 {
			t.Fatalf("got %d results, want 8", len(resp.Results))
		}
		checkResults(t, resp.Results)
		if resp.Results[0].Name != "heat-object-in-microwave" || resp.Results[0].SeedRank != 1 {
			t.Errorf("first result %+v, want heat-object-in-microwave with seed_rank 1", resp.Results[0])
		}
		var seeds, graph, via int
		for _, res := range resp.Results {
			if res.SeedRank > 0 {
				seeds++
			} else {
				graph++
			}
			via += len(res.Via)
		}
		if seeds == 0 || graph == 0 || via == 0 {
			t.Errorf("want seeds, skills reached through the graph and via edges; got %d, %d, %d", seeds, graph, via)
		}
	})

	t.Run("k", func(t *testing.T) {
		for _, k := range []int{1, 3, 20} {
			r := mustRun(t, "query", art, "-k", strconv.Itoa(k), sampleQuery, "--json")
			var resp struct{ Results []queryResult }
			decodeJSON(t, r.stdout, &resp)
			if len(resp.Results) != k {
				t.Errorf("-k %d: got %d results", k, len(resp.Results))
			}
			checkResults(t, resp.Results)
		}
		r := mustRun(t, "query", art, sampleQuery, "-k", "3")
		if n := len(numbered.FindAllString(r.stdout, -1)); n != 3 {
			t.Errorf("-k 3 text: %d ranked lines, want 3:\n%s", n, r.stdout)
		}
	})

	t.Run("flags anywhere", func(t *testing.T) {
		want := mustRun(t, "query", "-k", "4", "--json", art, sampleQuery).stdout
		for _, args := range [][]string{
			{"query", art, sampleQuery, "-k", "4", "--json"},
			{"query", art, "-k", "4", sampleQuery, "--json"},
			{"query", "--json", art, "-k=4", sampleQuery},
		} {
			if got := mustRun(t, args...).stdout; got != want {
				t.Errorf("caskg %q:\n%s\nwant, as with the flags first:\n%s", args, got, want)
			}
		}
		// Words of the task given as separate arguments are joined.
		words := append([]string{"query", art, "-k", "4", "--json"}, strings.Fields(sampleQuery)...)
		if got := mustRun(t, words...).stdout; got != want {
			t.Errorf("task as separate words:\n%s\nwant:\n%s", got, want)
		}
		// "--" ends the flags: "-k" after it is task text.
		r := mustRun(t, "query", art, "--json", "--", "-k", "heat")
		var resp struct{ Results []queryResult }
		decodeJSON(t, r.stdout, &resp)
		if len(resp.Results) != 8 {
			t.Errorf("after --: %d results, want the default 8 (-k must be text)", len(resp.Results))
		}
	})

	t.Run("no-graph", func(t *testing.T) {
		graphOut := mustRun(t, "query", art, sampleQuery, "--json", "-k", "10").stdout
		r := mustRun(t, "query", art, sampleQuery, "--json", "-k", "10", "--no-graph")
		if r.stdout == graphOut {
			t.Fatal("--no-graph gives the same answer as graph retrieval")
		}
		var resp struct{ Results []queryResult }
		decodeJSON(t, r.stdout, &resp)
		if len(resp.Results) != 10 {
			t.Fatalf("got %d results, want 10", len(resp.Results))
		}
		checkResults(t, resp.Results)
		for i, res := range resp.Results {
			if len(res.Via) > 0 {
				t.Errorf("--no-graph result %d (%s) came through edges %+v", i, res.Name, res.Via)
			}
			if i < 5 && res.SeedRank != i+1 {
				t.Errorf("--no-graph result %d (%s): seed_rank %d, want %d", i, res.Name, res.SeedRank, i+1)
			}
		}
	})

	t.Run("labels tell the truth", func(t *testing.T) {
		// Past the seeds, a result is "via graph" when the graph raised its score and a
		// "match" when it scores as it does without the graph; both kinds are in this answer.
		var with, without struct{ Results []queryResult }
		decodeJSON(t, mustRun(t, "query", art, sampleQuery, "-k", "12", "--json").stdout, &with)
		decodeJSON(t, mustRun(t, "query", art, sampleQuery, "-k", "12", "--json", "--no-graph").stdout, &without)
		text := mustRun(t, "query", art, sampleQuery, "-k", "12").stdout
		plain := map[string]float64{}
		for _, r := range without.Results {
			plain[r.Name] = r.Score
		}
		line := regexp.MustCompile(`(?m)^ ?\d+\. (\S+) +[0-9.]+  (.+)$`)
		tags := map[string]string{}
		for _, m := range line.FindAllStringSubmatch(text, -1) {
			tags[m[1]] = m[2]
		}
		kinds := map[string]int{}
		for _, r := range with.Results {
			want := "match"
			switch {
			case r.SeedRank > 0:
				want = fmt.Sprintf("seed #%d", r.SeedRank)
			case r.Graph:
				want = "via graph"
				if own, ok := plain[r.Name]; ok && r.Score <= own {
					t.Errorf("%s marked graph, but scores %v, %v without the graph", r.Name, r.Score, own)
				}
			default:
				if own, ok := plain[r.Name]; !ok || r.Score != own {
					t.Errorf("%s not marked graph, but scores %v, %v without the graph", r.Name, r.Score, own)
				}
			}
			kinds[strings.Fields(want)[0]]++
			if tags[r.Name] != want {
				t.Errorf("%s: text says %q, want %q:\n%s", r.Name, tags[r.Name], want, text)
			}
		}
		if kinds["via"] == 0 || kinds["match"] == 0 {
			t.Errorf("answer kinds %v: the test needs results via graph and matches past the seeds", kinds)
		}
	})

	t.Run("no-graph text", func(t *testing.T) {
		// More results than seeds: the ones past the seeds were not reached through the graph,
		// so the text must not say they were.
		r := mustRun(t, "query", art, sampleQuery, "-k", "10", "--no-graph")
		c := &checks{t: t}
		if strings.Contains(r.stdout, "via graph") || strings.Contains(r.stdout, "↳") {
			c.errorf("--no-graph text output claims graph evidence:\n%s", r.stdout)
		}
		c.done()
	})
}

// batchInput is the sample tasks with an extra field on every line, and their ids.
func batchInput(t *testing.T) (data []byte, ids []string) {
	t.Helper()
	raw, err := os.ReadFile(sampleTasks)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		m["x-extra"] = map[string]any{"ignored": []int{1, 2}}
		line, _ := json.Marshal(m)
		b.Write(append(line, '\n'))
		b.WriteString("\n") // blank lines are skipped
		ids = append(ids, m["id"].(string))
	}
	return b.Bytes(), ids
}

type batchOut struct {
	ID      any           `json:"id"`
	Results []queryResult `json:"results"`
	Error   string        `json:"error"`
}

func parseBatch(t *testing.T, out string) []batchOut {
	t.Helper()
	var lines []batchOut
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var b batchOut
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			t.Fatalf("batch line %d is not JSON: %v\n%s", i+1, err, l)
		}
		lines = append(lines, b)
	}
	return lines
}

func TestQueryBatch(t *testing.T) {
	art := buildSample(t)
	input, ids := batchInput(t)
	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(tasks, input, 0o644); err != nil {
		t.Fatal(err)
	}

	r := mustRun(t, "query", art, "--batch", tasks, "--json")
	lines := parseBatch(t, r.stdout)
	if got := names(lines, func(b batchOut) string { s, _ := b.ID.(string); return s }); !slices.Equal(got, ids) {
		t.Fatalf("batch ids %q, want one line per task in order %q", got, ids)
	}
	for _, l := range lines {
		if len(l.Results) == 0 || l.Error != "" {
			t.Errorf("task %v: %d results, error %q", l.ID, len(l.Results), l.Error)
		}
		checkResults(t, l.Results)
	}
	// A batch line answers exactly like a single query.
	var single struct{ Results []queryResult }
	decodeJSON(t, mustRun(t, "query", art, sampleQuery, "--json").stdout, &single)
	if diff := cmp.Diff(single.Results, lines[0].Results); diff != "" {
		t.Errorf("batch t01 differs from query of the same text (-single +batch):\n%s", diff)
	}

	t.Run("stdin", func(t *testing.T) {
		old := stdin
		t.Cleanup(func() { stdin = old })
		stdin = bytes.NewReader(input)
		got := mustRun(t, "query", art, "--batch", "-", "--json")
		if got.stdout != r.stdout {
			t.Errorf("--batch - differs from --batch FILE:\n%s\nwant:\n%s", got.stdout, r.stdout)
		}
	})

	t.Run("text", func(t *testing.T) {
		out := mustRun(t, "query", "--batch", tasks, art).stdout
		heads := regexp.MustCompile(`(?m)^== (\S+)$`).FindAllStringSubmatch(out, -1)
		if got := names(heads, func(m []string) string { return m[1] }); !slices.Equal(got, ids) {
			t.Errorf("text batch headings %q, want %q", got, ids)
		}
	})

	t.Run("numeric id", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "num.jsonl")
		fixture.WriteFiles(t, filepath.Dir(p), files{"num.jsonl": `{"id": 7, "query": "heat an egg"}` + "\n"})
		out := mustRun(t, "query", art, "--batch", p, "--json", "-k", "2").stdout
		c := &checks{t: t}
		if !strings.HasPrefix(out, `{"id":7,`) {
			c.errorf("numeric id not preserved: %s", out)
		}
		c.done()
	})
}

// TestQueryBatchLineOptions holds a --batch line's own "k" and its refusals: a request option
// the line may not set and a known field in another case are errors naming the field, on that
// line only; data-set fields are ignored.
func TestQueryBatchLineOptions(t *testing.T) {
	art := buildSample(t)
	tests := []struct {
		name, line string
		results    int    // when err is ""
		err        string // the line's error
	}{
		{"own k", `{"id": "a", "query": "heat an egg", "k": 2}`, 2, ""},
		{"k as Python writes it", `{"id": "a", "query": "heat an egg", "k": 3.0}`, 3, ""},
		{"null k", `{"id": "a", "query": "heat an egg", "k": null}`, 5, ""},
		{"data-set fields", `{"id": "a", "query": "heat an egg", "gold": ["x"], "split": "test", "n_calls": 2}`, 5, ""},
		{"fraction", `{"id": "a", "query": "heat an egg", "k": 2.5}`, 0, `field "k": 2.5 is not a whole number`},
		{"k over the limit", `{"id": "a", "query": "heat an egg", "k": 101}`, 0, `field "k": 101 is outside [1, 100]`},
		{"k a string", `{"id": "a", "query": "heat an egg", "k": "3"}`, 0, `field "k": "3" is not a whole number`},
		{"seeds", `{"id": "a", "query": "heat an egg", "seeds": 2}`, 0, `field "seeds": not taken per line; give it to the whole run as a flag (--seeds)`},
		{"no_graph", `{"id": "a", "query": "heat an egg", "no_graph": true}`, 0, `(--no-graph)`},
		{"vector", `{"id": "a", "query": "heat an egg", "vector": [1]}`, 0, `field "vector": caskg query does not take it`},
		{"K", `{"id": "a", "query": "heat an egg", "K": 2}`, 0, `field "K": unknown; the fields are spelt in lower case`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tasks.jsonl")
			// The line under test is line 2, after a good one.
			if err := os.WriteFile(p, []byte(`{"id": "ok", "query": "heat an egg"}`+"\n"+tt.line+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := run(t, "query", art, "--batch", p, "--json", "-k", "5")
			out := parseBatch(t, r.stdout)
			if len(out) != 2 || len(out[0].Results) != 5 {
				t.Fatalf("%d lines, the first with %d results; want 2, 5:\n%s%s", len(out), len(out[0].Results), r.stdout, r.stderr)
			}
			if tt.err == "" {
				if r.code != 0 || len(out[1].Results) != tt.results || out[1].Error != "" {
					t.Errorf("exit %d, %d results, error %q; want 0, %d, none", r.code, len(out[1].Results), out[1].Error, tt.results)
				}
				return
			}
			if r.code != 1 || !strings.Contains(out[1].Error, tt.err) || !strings.Contains(r.stdout, `"line":2`) {
				t.Errorf("exit %d, line 2: %s; want 1 and an error containing %q on line 2", r.code, r.stdout, tt.err)
			}
		})
	}
	t.Run("text", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "tasks.jsonl")
		if err := os.WriteFile(p, []byte(`{"id": "ok", "query": "heat an egg", "k": 1}`+"\n"+`{"id": "b", "query": "x", "gamma": 0.2}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, "query", art, "--batch", p)
		if r.code != 1 || !strings.Contains(r.stderr, `tasks.jsonl:2 (id "b"): field "gamma": not taken per line`) ||
			strings.Count(r.stdout, "\n 2. ") != 0 {
			t.Errorf("exit %d\nstdout %s\nstderr %s\nwant 1, one result for ok and line 2 refused", r.code, r.stdout, r.stderr)
		}
	})
}

// inspected is inspect --json as the tests read it: its params decoded.
type inspected struct {
	inspection
	Params map[string]any `json:"params"`
}

// inspectJSON runs inspect --json on art. It holds the output's field names to the lists here,
// not to inspection's tags, so that renaming, adding or dropping one fails a test.
func inspectJSON(t *testing.T, art string) inspected {
	t.Helper()
	out := mustRun(t, "inspect", art, "--json").stdout
	var in inspected
	decodeJSON(t, out, &in)
	var top, degree map[string]json.RawMessage
	var sections []map[string]json.RawMessage
	decodeJSON(t, out, &top)
	decodeJSON(t, string(top["out_degree"]), &degree)
	decodeJSON(t, string(top["sections"]), &sections)
	if len(sections) == 0 {
		t.Fatal("inspect --json: no sections")
	}
	for _, k := range []struct {
		what string
		got  map[string]json.RawMessage
		want string
	}{
		{"inspect --json", top, "by_state by_type bytes edges file in_degree isolated learning out_degree params sections skills terms version"},
		{"out_degree", degree, "max mean median min p95 zero"},
		{"a section", sections[0], "length offset tag"},
	} {
		if got := strings.Join(slices.Sorted(maps.Keys(k.got)), " "); got != k.want {
			t.Errorf("%s has the fields %s, want %s", k.what, got, k.want)
		}
	}
	return in
}

func TestInspect(t *testing.T) {
	art := buildSample(t)
	fi, err := os.Stat(art)
	if err != nil {
		t.Fatal(err)
	}

	in := inspectJSON(t, art)
	if in.File != art || in.Bytes != int(fi.Size()) || in.Skills != sampleCount || in.Edges == 0 || in.Terms == 0 {
		t.Errorf("inspect --json: file %q, %d bytes, %d skills, %d edges, %d terms; want %q, %d bytes, %d skills, some edges and terms",
			in.File, in.Bytes, in.Skills, in.Edges, in.Terms, art, fi.Size(), sampleCount)
	}
	sum := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	if got := slices.Sorted(maps.Keys(in.ByState)); !slices.Equal(got, slices.Sorted(slices.Values(stateNames()))) {
		t.Errorf("by_state keys %q, want every state %q", got, stateNames())
	}
	if got := slices.Sorted(maps.Keys(in.ByType)); !slices.Equal(got, slices.Sorted(slices.Values(relationNames()))) {
		t.Errorf("by_type keys %q, want every relation %q", got, relationNames())
	}
	if sum(in.ByState) != in.Edges || sum(in.ByType) != in.Edges {
		t.Errorf("by_state sums to %d, by_type to %d; want the %d edges", sum(in.ByState), sum(in.ByType), in.Edges)
	}
	mean := float64(in.Edges) / float64(in.Skills)
	for name, d := range map[string]degreeStats{"out": in.OutDegree, "in": in.InDegree} {
		if d.Mean < mean-1e-9 || d.Mean > mean+1e-9 || !(d.Min <= d.Median && d.Median <= d.P95 && d.P95 <= d.Max) || d.Max == 0 {
			t.Errorf("%s degree %+v: want mean %v and min <= median <= p95 <= max > 0", name, d, mean)
		}
	}
	if len(in.Sections) == 0 {
		t.Fatal("no sections")
	}
	for i, s := range in.Sections {
		if s.Offset+s.Length > in.Bytes || (i > 0 && s.Offset < in.Sections[i-1].Offset+in.Sections[i-1].Length) {
			t.Errorf("section %s [%d, +%d) outside the file or overlapping", s.Tag, s.Offset, s.Length)
		}
	}
	if in.Params["variant"] == nil {
		t.Errorf("params %v do not name the variant", in.Params)
	}

	r := mustRun(t, "inspect", art)
	for _, re := range []string{
		`(?m)^artifact\s+` + regexp.QuoteMeta(art) + ` \(format ` + regexp.QuoteMeta(in.Version) + `, ` + strconv.Itoa(in.Bytes) + ` bytes\)$`,
		`(?m)^skills\s+` + strconv.Itoa(sampleCount) + ` \(\d+ isolated\)$`,
		`(?m)^edges\s+` + strconv.Itoa(in.Edges) + `$`,
		`(?m)^lexicon\s+` + strconv.Itoa(in.Terms) + ` terms$`,
		`(?m)^by state`, `(?m)^by relation`,
		`(?m)^degree\s+min\s+median\s+mean\s+p95\s+max\s+zero$`,
		`(?m)^  out\s+` + strconv.Itoa(in.OutDegree.Min) + `\s`,
		`(?m)^  in\s+` + strconv.Itoa(in.InDegree.Min) + `\s`,
		`(?m)^section\s+offset\s+bytes$`,
		`(?m)^params\s+\{`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("inspect text does not match %q:\n%s", re, r.stdout)
		}
	}
	for st, n := range in.ByState {
		if !regexp.MustCompile(`(?m)^  ` + st + `\s+` + strconv.Itoa(n) + `$`).MatchString(r.stdout) {
			t.Errorf("inspect text does not show state %s with %d edges", st, n)
		}
	}
	for ty, n := range in.ByType {
		if !regexp.MustCompile(`(?m)^  ` + ty + `\s+` + strconv.Itoa(n) + `$`).MatchString(r.stdout) {
			t.Errorf("inspect text does not show relation %s with %d edges", ty, n)
		}
	}
	for _, s := range in.Sections {
		if !regexp.MustCompile(`(?m)^  ` + s.Tag + `\s+` + strconv.Itoa(s.Offset) + `\s+` + strconv.Itoa(s.Length) + `$`).MatchString(r.stdout) {
			t.Errorf("inspect text does not list section %s", s.Tag)
		}
	}
}

func TestExport(t *testing.T) {
	art := buildSample(t)
	in := inspectJSON(t, art)

	t.Run("json", func(t *testing.T) {
		for _, args := range [][]string{{"export", art}, {"export", art, "--format", "json"}} {
			var doc export.Document
			decodeJSON(t, mustRun(t, args...).stdout, &doc)
			if len(doc.Nodes) != in.Skills || len(doc.Edges) != in.Edges {
				t.Errorf("%q: %d nodes, %d edges; inspect says %d and %d", args, len(doc.Nodes), len(doc.Edges), in.Skills, in.Edges)
			}
			node := map[string]bool{}
			for _, n := range doc.Nodes {
				node[n.Name] = true
			}
			for _, e := range doc.Edges {
				if !node[e.Source] || !node[e.Target] || !slices.Contains(stateNames(), e.State) || !slices.Contains(relationNames(), e.Type) {
					t.Errorf("edge %+v: unknown endpoint, state or type", e)
					break
				}
			}
		}
	})

	t.Run("dot", func(t *testing.T) {
		out := mustRun(t, "export", art, "--format", "dot").stdout
		if !strings.HasPrefix(out, "digraph") || !strings.HasSuffix(out, "}\n") {
			t.Errorf("dot output is not a digraph:\n%.200s", out)
		}
		if n := strings.Count(out, " -> "); n != in.Edges {
			t.Errorf("dot has %d edges, inspect says %d", n, in.Edges)
		}
		// The drawing holds the skills with an edge; a comment counts those left out.
		ends := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^  (n\d+) -> (n\d+) `).FindAllStringSubmatch(out, -1) {
			ends[m[1]], ends[m[2]] = true, true
		}
		declared := regexp.MustCompile(`(?m)^  (n\d+) \[label=`).FindAllStringSubmatch(out, -1)
		for _, m := range declared {
			if !ends[m[1]] {
				t.Errorf("dot draws %s, which has no edge", m[1])
			}
		}
		if left := in.Skills - len(ends); left == 0 || len(declared) != len(ends) ||
			!strings.Contains(out, fmt.Sprintf("  // %d of %d skills have no published edge and are left out;", left, in.Skills)) {
			t.Errorf("dot declares %d nodes for %d skills with edges of %d, or lacks the count of those left out:\n%.300s", len(declared), len(ends), in.Skills, out)
		}
	})

	t.Run("graphml", func(t *testing.T) {
		out := mustRun(t, "export", "--format=graphml", art).stdout
		var doc struct {
			XMLName xml.Name `xml:"graphml"`
			Graph   struct {
				Nodes []struct {
					ID string `xml:"id,attr"`
				} `xml:"node"`
				Edges []struct {
					Source string `xml:"source,attr"`
					Target string `xml:"target,attr"`
				} `xml:"edge"`
			} `xml:"graph"`
		}
		if err := xml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("graphml does not parse: %v", err)
		}
		if len(doc.Graph.Nodes) != in.Skills || len(doc.Graph.Edges) != in.Edges {
			t.Errorf("graphml: %d nodes, %d edges; inspect says %d and %d", len(doc.Graph.Nodes), len(doc.Graph.Edges), in.Skills, in.Edges)
		}
	})

	t.Run("-o", func(t *testing.T) {
		for _, format := range export.Formats {
			dir := t.TempDir()
			p := filepath.Join(dir, "graph."+format)
			r := mustRun(t, "export", art, "--format", format, "-o", p)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("export -o: %v", err)
			}
			if r.stdout != "" {
				t.Errorf("export -o also wrote to stdout: %.100q", r.stdout)
			}
			if want := mustRun(t, "export", art, "--format", format).stdout; string(data) != want {
				t.Errorf("%s: file written by -o differs from standard output", format)
			}
			if !strings.Contains(r.stderr, "wrote "+p) {
				t.Errorf("stderr %q does not say which file was written", r.stderr)
			}
			assertOnlyFiles(t, dir, "graph."+format)
		}
	})
}

// assertOnlyFiles fails unless dir holds exactly the named entries (no temporary files).
func assertOnlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := names(ents, os.DirEntry.Name)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want exactly %q", got, want)
	}
}

// evalOut is eval --json.
type evalOut struct {
	Artifact string `json:"artifact"`
	Tasks    string `json:"tasks"`
	Mode     string `json:"mode"`
	Summary  struct {
		Tasks    int                `json:"tasks"`
		Recall   map[string]float64 `json:"recall"`
		Complete map[string]float64 `json:"complete"`
		NDCG10   float64            `json:"ndcg10"`
	} `json:"summary"`
	Unknown int `json:"unknown_gold"`
	Edges   map[string]struct {
		Published, Gold, Hits int
	} `json:"edges"`
}

func TestEval(t *testing.T) {
	art := buildSample(t)
	evalJSON := func(t *testing.T, extra ...string) evalOut {
		t.Helper()
		var e evalOut
		decodeJSON(t, mustRun(t, append([]string{"eval", art, "--tasks", sampleTasks, "--json"}, extra...)...).stdout, &e)
		return e
	}

	graph, base := evalJSON(t), evalJSON(t, "--no-graph")
	for _, e := range []evalOut{graph, base} {
		if e.Artifact != art || e.Tasks != sampleTasks || e.Summary.Tasks != 40 || e.Unknown != 0 {
			t.Errorf("eval --json (%s): artifact %q, tasks %q, %d tasks, %d unknown gold; want %q, %q, 40, 0",
				e.Mode, e.Artifact, e.Tasks, e.Summary.Tasks, e.Unknown, art, sampleTasks)
		}
		for _, k := range []string{"5", "10"} {
			for _, v := range []float64{e.Summary.Recall[k], e.Summary.Complete[k]} {
				if v <= 0 || v > 1 {
					t.Errorf("eval %s @%s: metric %v outside (0, 1]", e.Mode, k, v)
				}
			}
		}
	}
	if graph.Mode != "graph" || base.Mode != "no-graph" {
		t.Errorf("modes %q and %q, want graph and no-graph", graph.Mode, base.Mode)
	}
	// The point of the graph: it completes bundles the lexical seeds alone miss.
	if g, b := graph.Summary.Recall["10"], base.Summary.Recall["10"]; g <= b {
		t.Errorf("R@10: graph %.4f does not beat no-graph %.4f", g, b)
	}
	if g, b := graph.Summary.Complete["10"], base.Summary.Complete["10"]; g <= b {
		t.Errorf("COMP@10: graph %.4f does not beat no-graph %.4f", g, b)
	}

	t.Run("text", func(t *testing.T) {
		out := mustRun(t, "eval", "--tasks", sampleTasks, art).stdout
		for _, re := range []string{
			`^` + regexp.QuoteMeta(art+" on "+sampleTasks) + ` \(40 tasks, graph\)\n`,
			`(?m)^R@5\s+0\.\d{4}$`, `(?m)^R@10\s+` + strconv.FormatFloat(graph.Summary.Recall["10"], 'f', 4, 64) + `$`,
			`(?m)^COMP@5\s+0\.\d{4}$`, `(?m)^COMP@10\s+` + strconv.FormatFloat(graph.Summary.Complete["10"], 'f', 4, 64) + `$`,
			`(?m)^nDCG@10\s+0\.\d{4}$`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("eval text does not match %q:\n%s", re, out)
			}
		}
		if out := mustRun(t, "eval", art, "--tasks", sampleTasks, "--no-graph").stdout; !strings.Contains(out, "(40 tasks, no-graph)") {
			t.Errorf("eval --no-graph text does not name the mode:\n%s", out)
		}
	})

	t.Run("ks", func(t *testing.T) {
		e := evalJSON(t, "--ks", "3, 1")
		if got := slices.Sorted(maps.Keys(e.Summary.Recall)); !slices.Equal(got, []string{"1", "3"}) {
			t.Errorf("--ks '3, 1': recall cutoffs %q, want 1 and 3", got)
		}
		if e.Summary.Recall["1"] >= e.Summary.Recall["3"] {
			t.Errorf("R@1 %v not below R@3 %v", e.Summary.Recall["1"], e.Summary.Recall["3"])
		}
		// Cutoffs in any order give the same scores, and -k defaults to the largest.
		if sorted := evalJSON(t, "--ks", "1,3"); !cmp.Equal(sorted.Summary, e.Summary) {
			t.Errorf("--ks '3, 1' and --ks 1,3 disagree: %+v vs %+v", e.Summary, sorted.Summary)
		}
	})

	t.Run("gold edges", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "edges.jsonl")
		fixture.WriteFiles(t, filepath.Dir(p), files{"edges.jsonl": `{"source":"find-object","target":"pick-up-object"}` + "\n" +
			`{"source":"no-such-skill","target":"pick-up-object"}` + "\n"})
		e := evalJSON(t, "--gold-edges", p)
		in := inspectJSON(t, art)
		if all := e.Edges["all"]; all.Published != in.Edges || all.Gold != 1 {
			t.Errorf("edges.all = %+v, want %d published and 1 gold edge (the unknown one left out)", all, in.Edges)
		}
	})
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := run(t, args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "usage: caskg COMMAND") {
			t.Errorf("caskg %q: exit %d, stderr %q, stdout:\n%s", args, r.code, r.stderr, r.stdout)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(?m)^  ` + c.name + `\s+\S`).MatchString(r.stdout) {
				t.Errorf("caskg %q does not list %s", args, c.name)
			}
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if r := run(t, args...); r.code != 0 || r.stdout != "caskg "+engine.Version+"\n" || r.stderr != "" {
			t.Errorf("caskg %q = exit %d, %q, %q; want 0, %q", args, r.code, r.stdout, r.stderr, "caskg "+engine.Version+"\n")
		}
	}

	flags := map[string][]string{
		"build":   {"-o", "-strict", "-json", "-report", "-variant", "-cap", "-body-head"},
		"update":  {"-o", "-traces", "-state", "-json", "-report"},
		"query":   {"-k", "-batch", "-json", "-no-graph", "-seeds", "-gamma", "-render", "-skill-budget", "-total-budget", "-allow", "-deny", "-namespace"},
		"inspect": {"-json"},
		"export":  {"-format", "-o"},
		"eval":    {"-tasks", "-ks", "-gold-edges", "-no-graph", "-json", "-k"},
		"mcp":     {"-library"},
		"traces":  {"-artifact", "-o", "-json"},
		"serve":   {"-addr", "-root", "-playground", "-js", "-wasm", "-tasks"},
		"gateway": {"-config", "-state-dir", "-http", "-learn-every", "-expose", "-idle"},
	}
	for _, c := range commands {
		for _, h := range []string{"-h", "--help"} {
			r := run(t, c.name, h)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: caskg "+c.name+" ") {
				t.Errorf("caskg %s %s: exit %d, stderr %q, stdout:\n%s", c.name, h, r.code, r.stderr, r.stdout)
			}
			want, ok := flags[c.name]
			if !ok {
				t.Errorf("command %s has no flag list in this test", c.name)
			}
			for _, f := range want {
				if !regexp.MustCompile(`(?m)^  ` + f + `\b`).MatchString(r.stdout) {
					t.Errorf("caskg %s %s does not describe flag %s:\n%s", c.name, h, f, r.stdout)
				}
			}
		}
	}
	// -h after other arguments still asks for help.
	if r := run(t, "query", "x.skg", "some task", "-h"); r.code != 0 || !strings.HasPrefix(r.stdout, "usage: caskg query") {
		t.Errorf("caskg query ARTIFACT TASK -h: exit %d, stdout %q", r.code, r.stdout)
	}
}
