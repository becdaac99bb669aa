package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/google/go-cmp/cmp"
)

// synopsis is the usage line that follows a usage error of the command name.
func synopsis(t *testing.T, name string) string {
	t.Helper()
	for _, c := range commands {
		if c.name == name {
			return "usage: caskg " + c.name + " " + c.args
		}
	}
	t.Fatalf("no command %s", name)
	return ""
}

// TestUsageErrors checks the habits of a command line that is wrong: exit 2, nothing on stdout,
// the error and then the usage on stderr, and a "did you mean" for a slip of the keyboard in a
// command or flag name. A value out of range is a usage error naming the flag and the range.
func TestUsageErrors(t *testing.T) {
	art := buildSample(t)
	tests := []struct {
		name string
		args []string
		want string // the first line of stderr
		cmd  string // the command whose usage line follows; "" for the list of commands
	}{
		{"no command", nil, "caskg: no command given", ""},
		{"mistyped command", []string{"querry", art, "task"}, `caskg: unknown command "querry"; did you mean query?`, ""},
		{"swapped letters", []string{"qeury"}, `caskg: unknown command "qeury"; did you mean query?`, ""},
		{"mistyped version", []string{"verison"}, `caskg: unknown command "verison"; did you mean version?`, ""},
		{"unknown command", []string{"frobnicate"}, `caskg: unknown command "frobnicate"`, ""},
		{"flag --kk", []string{"query", art, "--kk", "3", "task"}, "caskg query: flag provided but not defined: -kk; did you mean -k?", "query"},
		{"flag --jsn", []string{"query", art, "--jsn", "task"}, "caskg query: flag provided but not defined: -jsn; did you mean -json?", "query"},
		{"flag --no-grap", []string{"query", art, "--no-grap", "task"}, "caskg query: flag provided but not defined: -no-grap; did you mean -no-graph?", "query"},
		{"flag -x", []string{"query", art, "-x", "task"}, "caskg query: flag provided but not defined: -x", "query"},
		{"flag --fromat", []string{"export", art, "--fromat", "dot"}, "caskg export: flag provided but not defined: -fromat; did you mean -format?", "export"},
		{"flag --stirct", []string{"build", sampleLib, "-o", "x.skg", "--stirct"}, "caskg build: flag provided but not defined: -stirct; did you mean -strict?", "build"},
		{"flag --taks", []string{"eval", art, "--taks", "t.jsonl"}, "caskg eval: flag provided but not defined: -taks; did you mean -tasks?", "eval"},
		{"flag --jsno inspect", []string{"inspect", art, "--jsno"}, "caskg inspect: flag provided but not defined: -jsno; did you mean -json?", "inspect"},
		{"k 0", []string{"query", art, "-k", "0", "task"}, "caskg query: flag -k: 0 is outside [1, 100]", "query"},
		{"k over", []string{"query", art, "-k", "101", "task"}, "caskg query: flag -k: 101 is outside [1, 100]", "query"},
		{"seeds 0", []string{"query", art, "--seeds", "0", "task"}, "caskg query: flag -seeds: 0 is outside [1, 100]", "query"},
		{"gamma 0", []string{"query", art, "--gamma", "0", "task"}, "caskg query: flag -gamma: 0 is outside (0, 1]", "query"},
		{"gamma over", []string{"query", art, "--gamma", "1.5", "task"}, "caskg query: flag -gamma: 1.5 is outside (0, 1]", "query"},
		{"batch k 0", []string{"query", art, "--batch", "t.jsonl", "-k", "0"}, "caskg query: flag -k: 0 is outside [1, 100]", "query"},
		{"eval k 0", []string{"eval", art, "--tasks", "t.jsonl", "-k", "0"}, "caskg eval: flag -k: 0 is outside [1, 1000]", "eval"},
		{"eval k over", []string{"eval", art, "--tasks", "t.jsonl", "-k", "1001"}, "caskg eval: flag -k: 1001 is outside [1, 1000]", "eval"},
		{"eval seeds 0", []string{"eval", art, "--tasks", "t.jsonl", "--seeds", "0"}, "caskg eval: flag -seeds: 0 is outside [1, 100]", "eval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			first, rest, _ := strings.Cut(r.stderr, "\n")
			c := &checks{t: t}
			if r.code != 2 || r.stdout != "" {
				c.errorf("exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
			}
			if first != tt.want {
				c.errorf("stderr starts %q, want %q", first, tt.want)
			}
			if tt.cmd != "" {
				if want := synopsis(t, tt.cmd) + "\n"; rest != want {
					c.errorf("after the error, stderr has %q, want %q", rest, want)
				}
			} else if !strings.Contains(rest, "usage: caskg COMMAND") || !strings.Contains(rest, "  query    ") {
				c.errorf("after the error, stderr has no list of commands:\n%s", rest)
			}
			c.done()
		})
	}
}

// TestJSONErrors checks that with --json every error, a usage error too, is one JSON object on
// stderr, with the exit status of its kind and nothing on stdout.
func TestJSONErrors(t *testing.T) {
	art := buildSample(t)
	nope := filepath.Join(t.TempDir(), "nope.skg")
	querySyn := strings.TrimPrefix(synopsis(t, "query"), "usage: ")
	tests := []struct {
		name string
		args []string
		code int
		want map[string]string
	}{
		{"k 0", []string{"query", art, "-k", "0", "--json", "task"}, 2,
			map[string]string{"error": "caskg query: flag -k: 0 is outside [1, 100]", "usage": querySyn}},
		{"mistyped flag", []string{"query", art, "--kk", "3", "--json", "task"}, 2,
			map[string]string{"error": "caskg query: flag provided but not defined: -kk; did you mean -k?", "usage": querySyn}},
		{"no task", []string{"query", art, "--json"}, 2,
			map[string]string{"error": "caskg query: no task text given", "usage": querySyn}},
		{"json=true", []string{"query", art, "--json=true"}, 2,
			map[string]string{"error": "caskg query: no task text given", "usage": querySyn}},
		{"mistyped command", []string{"querry", "--json"}, 2,
			map[string]string{"error": `caskg: unknown command "querry"; did you mean query?`, "usage": "caskg COMMAND [flags]; 'caskg help' lists the commands"}},
		{"missing artifact", []string{"query", nope, "task", "--json"}, 1,
			map[string]string{"error": "caskg query: open " + nope + ": no such file or directory"}},
		{"inspect missing artifact", []string{"inspect", "--json", nope}, 1,
			map[string]string{"error": "caskg inspect: open " + nope + ": no such file or directory"}},
		{"build without -o", []string{"build", sampleLib, "--json"}, 2,
			map[string]string{"error": "caskg build: flag -o OUT.skg is required", "usage": strings.TrimPrefix(synopsis(t, "build"), "usage: ")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, nothing and one line", r.code, r.stdout, r.stderr, tt.code)
			}
			var got map[string]string
			decodeJSON(t, r.stderr, &got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
	// "--json" after "--" is task text, not a flag: errors stay text.
	if r := run(t, "query", nope, "--", "--json"); r.code != 1 || !strings.HasPrefix(r.stderr, "caskg query: open ") {
		t.Errorf("query ARTIFACT -- --json: exit %d, stderr %q; want 1 and a text error", r.code, r.stderr)
	}
}

// TestBatchBadLines checks that --batch answers every good line, reports every bad one by its
// number (as a JSON line among the answers with --json, on stderr in text) and fails at the end.
func TestBatchBadLines(t *testing.T) {
	art := buildSample(t)
	long := strings.Repeat("egg ", 2100)
	input := strings.Join([]string{
		`{"id": "a", "query": "heat an egg"}`,
		`{"id": "broken", "query": `,
		``,
		`{"id": "b"}`,
		`{"query": "no id"}`,
		`{"id": 7, "query": "find a living thing"}`,
		`{"id": 8, "query": "` + long + `"}`,
		`oops`,
	}, "\n") + "\n"
	p := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(p, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		line int
		id   string // raw JSON; "" for none
		err  string
	}{
		{2, "", "not a JSON task: unexpected end of JSON input"},
		{4, `"b"`, `field "query" missing or empty`},
		{5, "", `field "id" missing`},
		{7, "8", `service: field "query": ` + strconv.Itoa(len(long)) + " bytes, at most 8192"},
		{8, "", "not a JSON task: invalid character 'o' looking for beginning of value"},
	}
	const total, failed = 7, 5

	t.Run("json", func(t *testing.T) {
		r := run(t, "query", art, "--batch", p, "--json")
		wantErr := `{"error":"caskg query: --batch ` + p + `: 5 of 7 tasks failed"}` + "\n"
		if r.code != 1 || r.stderr != wantErr {
			t.Errorf("exit %d, stderr %q; want 1, %q", r.code, r.stderr, wantErr)
		}
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != total {
			t.Fatalf("%d lines, want one per task (%d):\n%s", len(lines), total, r.stdout)
		}
		var good []string
		bi := 0
		for i, l := range lines {
			var out struct {
				ID      json.RawMessage `json:"id"`
				Results []queryResult   `json:"results"`
				Line    int             `json:"line"`
				Error   string          `json:"error"`
			}
			decodeJSON(t, l, &out)
			if out.Error == "" {
				good = append(good, string(out.ID))
				if len(out.Results) == 0 {
					t.Errorf("line %d: no results: %s", i+1, l)
				}
				continue
			}
			b := bad[bi]
			bi++
			id := b.id
			if id == "" {
				id = "null"
			}
			want := `{"id":` + id + `,"results":[],"line":` + strconv.Itoa(b.line) + `,"error":` + strconv.Quote(b.err) + `}`
			var wantV, gotV any
			json.Unmarshal([]byte(want), &wantV)
			json.Unmarshal([]byte(l), &gotV)
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("output line %d (-want +got):\n%s", i+1, diff)
			}
		}
		if want := []string{`"a"`, "7"}; !cmp.Equal(good, want) || bi != failed {
			t.Errorf("answered ids %v and %d errors, want %v and %d", good, bi, want, failed)
		}
	})

	t.Run("text", func(t *testing.T) {
		r := run(t, "query", art, "--batch", p)
		var want []string
		for _, b := range bad {
			id := ""
			if b.id != "" {
				id = " (id " + b.id + ")"
			}
			want = append(want, "caskg query: "+p+":"+strconv.Itoa(b.line)+id+": "+b.err)
		}
		want = append(want, "caskg query: --batch "+p+": 5 of 7 tasks failed")
		if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")); r.code != 1 || diff != "" {
			t.Errorf("exit %d, stderr (-want +got):\n%s", r.code, diff)
		}
		if got := regexp.MustCompile(`(?m)^== (.*)$`).FindAllStringSubmatch(r.stdout, -1); len(got) != 2 || got[0][1] != "a" || got[1][1] != "7" {
			t.Errorf("text headings %q, want a and 7:\n%s", got, r.stdout)
		}
	})

	t.Run("stdin", func(t *testing.T) {
		old := stdin
		t.Cleanup(func() { stdin = old })
		stdin = strings.NewReader(`{"id": "a", "query": "heat an egg"}` + "\n" + "oops\n")
		r := run(t, "query", art, "--batch", "-")
		want := "caskg query: stdin:2: not a JSON task: invalid character 'o' looking for beginning of value\n" +
			"caskg query: --batch stdin: 1 of 2 tasks failed\n"
		if r.code != 1 || r.stderr != want || !strings.HasPrefix(r.stdout, "== a\n") {
			t.Errorf("exit %d, stdout %.40q, stderr %q; want 1, the answer to a, %q", r.code, r.stdout, r.stderr, want)
		}
	})

	t.Run("no tasks", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty.jsonl")
		os.WriteFile(empty, []byte("\n\n"), 0o644)
		r := run(t, "query", art, "--batch", empty)
		if want := "caskg query: --batch " + empty + ": no tasks\n"; r.code != 1 || r.stderr != want || r.stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, want)
		}
	})
}

// TestEvidenceWords checks the words of a query's evidence lines: directed edges say which
// way they point, symmetric ones (semantic, alternative) say nothing about direction.
func TestEvidenceWords(t *testing.T) {
	want := map[graphs.Relation][2]string{ // forward, reverse
		graphs.Dependency:  {"after", "needed by"},
		graphs.Workflow:    {"after", "before"},
		graphs.Semantic:    {"similar to", "similar to"},
		graphs.Alternative: {"alternative to", "alternative to"},
	}
	for _, rel := range graphs.Relations() {
		for i, rev := range []bool{false, true} {
			if got := relationWords(rel.String(), rev); got != want[rel][i] {
				t.Errorf("relationWords(%s, reverse %v) = %q, want %q", rel, rev, got, want[rel][i])
			}
		}
	}

	// In the sample's answer every evidence line agrees with its edge type, and a semantic
	// edge is among them.
	art := buildSample(t)
	out := mustRun(t, "query", art, "heat an egg", "-k", "20").stdout
	lines := regexp.MustCompile(`(?m)^    ↳ (.+) \S+ \(\S+ (\S+) edge, w=`).FindAllStringSubmatch(out, -1)
	semantic := false
	for _, m := range lines {
		words, typ := m[1], m[2]
		switch typ {
		case "semantic":
			semantic = true
			if words != "similar to" {
				t.Errorf("semantic edge reads %q", m[0])
			}
		case "alternative":
			if words != "alternative to" {
				t.Errorf("alternative edge reads %q", m[0])
			}
		case "dependency":
			if words != "after" && words != "needed by" {
				t.Errorf("dependency edge reads %q", m[0])
			}
		case "workflow":
			if words != "after" && words != "before" {
				t.Errorf("workflow edge reads %q", m[0])
			}
		}
	}
	if len(lines) == 0 || !semantic {
		t.Errorf("no semantic evidence line in the sample answer:\n%s", out)
	}
}

// TestBuildSummaryHabits checks the build summary's time and its edge line: the time covers the
// whole build, the embedder fit included, and a build without edges says so plainly.
func TestBuildSummaryHabits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.skg")
	r := mustRun(t, "build", sampleLib, "-o", out, "--json")
	var rep struct {
		Seconds float64            `json:"seconds"`
		Stages  map[string]float64 `json:"stage_seconds"`
	}
	decodeJSON(t, r.stdout, &rep)
	sum := 0.0
	for _, s := range rep.Stages {
		sum += s
	}
	if _, ok := rep.Stages["fit"]; !ok || rep.Seconds < sum {
		t.Errorf("seconds %v, stages %v (sum %v); want a fit stage and a total no less than the stages", rep.Seconds, rep.Stages, sum)
	}
	if r := mustRun(t, "build", sampleLib, "-o", out); !regexp.MustCompile(`(?m)^wrote .* \(fit \d+\.\d\ds, features `).MatchString(r.stdout) {
		t.Errorf("the summary's times do not start with the fit:\n%s", r.stdout)
	}

	fixture.WriteFiles(t, dir, files{"lib/good-skill/SKILL.md": goodSkill})
	r = mustRun(t, "build", filepath.Join(dir, "lib"), "-o", out)
	m := regexp.MustCompile(`(?m)^published .*$`).FindString(r.stdout)
	if m != "published 0 edges — variant full" {
		t.Errorf("a build without edges says %q, want %q:\n%s", m, "published 0 edges — variant full", r.stdout)
	}
}
