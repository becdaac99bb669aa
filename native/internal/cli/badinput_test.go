package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/internal/cli/export"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// goodSkill is a SKILL.md every bad-input library also holds, so that the library is not
// empty once the bad entry is skipped.
var goodSkill = skillMD("## Steps\n1. Do the thing.\n", "name: good-skill", "description: A skill that is fine.")

// makeUnreadable removes every permission from path and skips the test when the process can
// still read it (running as root).
func makeUnreadable(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(path, 0o644) })
	if _, err := os.ReadFile(path); err == nil {
		t.Skip("this process reads files with mode 000 (running as root)")
	}
}

// exportNodes returns the skills of an artifact by name, with their source files.
func exportNodes(t *testing.T, art string) map[string]string {
	t.Helper()
	var doc export.Document
	decodeJSON(t, mustRun(t, "export", art, "--format", "json").stdout, &doc)
	out := map[string]string{}
	for _, n := range doc.Nodes {
		out[n.Name] = n.Source
	}
	return out
}

// assertNoTemp fails if dir holds a leftover temporary file of an atomic write.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind in %s", e.Name(), dir)
		}
	}
}

// TestBuildSkipsBadSkills runs every kind of bad library entry twice: without --strict the
// build succeeds, reports the entry with its file, line and reason, and keeps the good skills;
// with --strict the same message fails the build and nothing is written.
func TestBuildSkipsBadSkills(t *testing.T) {
	cases := []struct {
		name  string
		lib   files // under lib/, which is given to build with the extra files after it
		extra files // files outside lib/, each given to build as a path
		setup func(t *testing.T, dir string)
		want  string            // the problem, as "path under the test directory:line: rest"
		nodes map[string]string // skills the artifact holds, by name, with their source under the test directory
	}{
		{
			name:  "no front matter",
			lib:   files{"bad/SKILL.md": "# Heat an egg\n\nJust markdown.\n"},
			want:  `lib/bad/SKILL.md:1: field "front matter": missing front matter`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "front matter not closed",
			lib:   files{"bad/SKILL.md": "---\nname: bad-skill\ndescription: Never closed.\n"},
			want:  `lib/bad/SKILL.md:1: field "front matter": front matter not closed`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "broken YAML",
			lib:   files{"bad/SKILL.md": skillMD("body\n", "name: bad-skill", "description: Fine.", "foo: bar: baz")},
			want:  `lib/bad/SKILL.md:4: field "front matter": broken yaml: line 4: mapping values are not allowed`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "broken YAML unclosed list",
			lib:   files{"bad/SKILL.md": skillMD("body\n", "name: bad-skill", "description: Fine.", "tags: [x")},
			want:  `lib/bad/SKILL.md:4: field "front matter": broken yaml: line 4: `,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "broken YAML tab indentation",
			lib:   files{"bad/SKILL.md": skillMD("body\n", "name: bad-skill", "description: Fine.", "\tx: y")},
			want:  `lib/bad/SKILL.md:4: field "front matter": broken yaml: line 4: found a tab character`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name: "duplicate names across files",
			lib: files{
				"twin/SKILL.md":   skillMD("", "name: twin", "description: The first twin."),
				"x/twin/SKILL.md": skillMD("", "name: twin", "description: The second twin."),
			},
			want:  `lib/x/twin/SKILL.md:2: field "name": duplicate name "twin": already defined in {dir}/lib/twin/SKILL.md`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md", "twin": "lib/twin/SKILL.md"},
		},
		{
			name:  "empty name",
			lib:   files{"bad/SKILL.md": skillMD("", `name: ""`, "description: Has no name.")},
			want:  `lib/bad/SKILL.md:2: field "name": empty name`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "missing name",
			lib:   files{"bad/SKILL.md": skillMD("", "description: Has no name.")},
			want:  `lib/bad/SKILL.md:1: field "name": missing name`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "empty description",
			lib:   files{"bad/SKILL.md": skillMD("", "name: bad-skill", `description: "   "`)},
			want:  `lib/bad/SKILL.md:3: field "description": empty description`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name:  "tools JSON syntax error",
			extra: files{"tools.json": `{"tools": [{"name": "tool-a",` + "\n" + `"description": }]}` + "\n"},
			want:  `tools.json:2: invalid json at column 16`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
		{
			name: "tools JSONL bad line",
			extra: files{"tools.jsonl": `{"name": "tool-a", "description": "A fine tool."}` + "\n" +
				`{"name": "tool-b", "description": ` + "\n"},
			want:  `tools.jsonl:2: invalid json`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md", "tool-a": "tools.jsonl"},
		},
		{
			name:  "unreadable SKILL.md",
			lib:   files{"bad/SKILL.md": skillMD("", "name: bad-skill", "description: Locked away.")},
			setup: func(t *testing.T, dir string) { makeUnreadable(t, filepath.Join(dir, "lib", "bad", "SKILL.md")) },
			want:  `lib/bad/SKILL.md: cannot read: permission denied`,
			nodes: map[string]string{"good-skill": "lib/good-skill/SKILL.md"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lib := files{"good-skill/SKILL.md": goodSkill}
			for k, v := range tc.lib {
				lib[k] = v
			}
			fixture.WriteFiles(t, filepath.Join(dir, "lib"), lib)
			fixture.WriteFiles(t, dir, tc.extra)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			libs := []string{filepath.Join(dir, "lib")}
			for _, name := range slices.Sorted(maps.Keys(tc.extra)) {
				libs = append(libs, filepath.Join(dir, name))
			}
			slashDir := filepath.ToSlash(dir)
			want := slashDir + "/" + strings.ReplaceAll(tc.want, "{dir}", slashDir)
			c := &checks{t: t}

			out := filepath.Join(dir, "out.skg")
			r := run(t, append(append([]string{"build"}, libs...), "-o", out)...)
			if r.code != 0 {
				t.Fatalf("build without --strict: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "\nskipped   1:\n") {
				c.errorf("summary does not report one skipped entry:\n%s", r.stdout)
			}
			if !strings.Contains(r.stdout, "\n          "+want) {
				c.errorf("summary does not report %q:\n%s", want, r.stdout)
			}
			gotNodes := exportNodes(t, out)
			wantNodes := map[string]string{}
			for name, src := range tc.nodes {
				// Sources are relative to the folder holding every library given, named
				// first: lib alone, or the test's folder when files beside lib are given too.
				if len(libs) > 1 {
					src = filepath.Base(dir) + "/" + src
				}
				wantNodes[name] = src
			}
			if !mapsEqual(gotNodes, wantNodes) {
				c.errorf("artifact holds %v, want %v", gotNodes, wantNodes)
			}

			strictOut := filepath.Join(dir, "strict.skg")
			r = run(t, append(append([]string{"build", "--strict"}, libs...), "-o", strictOut)...)
			if r.code != 1 {
				c.errorf("build --strict: exit %d, want 1", r.code)
			}
			if r.stdout != "" {
				c.errorf("build --strict printed a summary:\n%s", r.stdout)
			}
			if !strings.HasPrefix(r.stderr, "caskg build: ") || !strings.Contains(r.stderr, want) {
				c.errorf("build --strict stderr does not report %q:\n%s", want, r.stderr)
			}
			if _, err := os.Stat(strictOut); !errors.Is(err, fs.ErrNotExist) {
				c.errorf("build --strict failed but wrote %s (stat: %v)", strictOut, err)
			}
			assertNoTemp(t, dir)
			c.done()
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// env is what a bad-input case works with: a scratch directory and a good artifact.
type env struct {
	dir, art string
}

func (e *env) path(name string) string { return filepath.Join(e.dir, filepath.FromSlash(name)) }

// TestBadInput checks that every bad command line or input file fails with the right exit
// status (1 for a failure, 2 for a usage error), prints nothing on stdout and says on stderr
// which file (and line or field) is wrong.
func TestBadInput(t *testing.T) {
	art := buildSample(t)
	artBytes, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Clone(artBytes)
	corrupt[len(corrupt)/2] ^= 0xff
	tasksOK := `{"id": "a", "query": "heat an egg", "gold": ["heat-object-in-microwave"]}` + "\n"

	type tcase struct {
		name  string
		files files                      // written under the scratch directory first
		setup func(t *testing.T, e *env) // after files
		args  func(e *env) []string      // the command line
		code  int                        // exit status
		want  func(e *env) []string      // substrings of stderr
	}
	cases := []tcase{
		// Libraries.
		{
			name:  "empty library directory",
			setup: func(t *testing.T, e *env) { os.Mkdir(e.path("empty"), 0o755) },
			args:  func(e *env) []string { return []string{"build", e.path("empty"), "-o", e.path("out.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{"empty library", "no skills found in " + e.path("empty")} },
		},
		{
			name:  "library of bad skills only",
			files: files{"lib/bad/SKILL.md": "no front matter\n"},
			args:  func(e *env) []string { return []string{"build", e.path("lib"), "-o", e.path("out.skg")} },
			code:  1,
			want: func(e *env) []string {
				return []string{"empty library", "no skills found in " + e.path("lib"),
					filepath.ToSlash(e.path("lib/bad/SKILL.md")) + `:1: field "front matter": missing front matter`}
			},
		},
		{
			name: "path does not exist",
			args: func(e *env) []string { return []string{"build", e.path("nope"), "-o", e.path("out.skg")} },
			code: 1,
			want: func(e *env) []string { return []string{e.path("nope"), "no such file or directory"} },
		},
		{
			name:  "unsupported file type",
			files: files{"notes.txt": "name: x\n"},
			args:  func(e *env) []string { return []string{"build", e.path("notes.txt"), "-o", e.path("out.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("notes.txt") + ": unsupported file type"} },
		},
		{
			name:  "unreadable library file",
			files: files{"lib/SKILL.md": goodSkill},
			setup: func(t *testing.T, e *env) { makeUnreadable(t, e.path("lib/SKILL.md")) },
			args:  func(e *env) []string { return []string{"build", e.path("lib/SKILL.md"), "-o", e.path("out.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("lib/SKILL.md"), "permission denied"} },
		},

		// Build flags.
		{
			name: "build without -o",
			args: func(e *env) []string { return []string{"build", sampleLib} },
			code: 2,
			want: func(e *env) []string {
				return []string{"caskg build: flag -o OUT.skg is required", "usage: caskg build"}
			},
		},
		{
			name: "build without a library",
			args: func(e *env) []string { return []string{"build", "-o", e.path("out.skg")} },
			code: 2,
			want: func(e *env) []string { return []string{"caskg build: no LIBRARY given", "usage: caskg build"} },
		},
		{
			name: "build flag out of range",
			args: func(e *env) []string {
				return []string{"build", sampleLib, "-o", e.path("out.skg"), "--tau-str", "1.5"}
			},
			code: 2,
			want: func(e *env) []string { return []string{"flag -tau-str: 1.5 is outside [0, 1]"} },
		},
		{
			name: "build -o in a missing directory",
			args: func(e *env) []string { return []string{"build", sampleLib, "-o", e.path("missing/out.skg")} },
			code: 1,
			want: func(e *env) []string {
				return []string{"caskg build: -o " + e.path("missing/out.skg") + ": folder " + e.path("missing") + " does not exist; create it first"}
			},
		},
		{
			name: "build --report in a missing directory",
			args: func(e *env) []string {
				return []string{"build", sampleLib, "-o", e.path("out.skg"), "--report", e.path("missing/report.json")}
			},
			code: 1,
			want: func(e *env) []string {
				return []string{"caskg build: --report " + e.path("missing/report.json") + ": folder " + e.path("missing") + " does not exist; create it first"}
			},
		},
		{
			name: "export -o in a missing directory",
			args: func(e *env) []string { return []string{"export", art, "-o", e.path("missing/graph.json")} },
			code: 1,
			want: func(e *env) []string {
				return []string{"writing " + e.path("missing/graph.json") + ": ", "no such file or directory"}
			},
		},
		{
			name:  "build -o is a directory",
			setup: func(t *testing.T, e *env) { os.Mkdir(e.path("adir"), 0o755) },
			args:  func(e *env) []string { return []string{"build", sampleLib, "-o", e.path("adir")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("adir"), "is a directory"} },
		},

		// Unknown commands, flags and formats.
		{
			name: "unknown command",
			args: func(e *env) []string { return []string{"frobnicate", art} },
			code: 2,
			want: func(e *env) []string { return []string{`caskg: unknown command "frobnicate"`, "usage: caskg COMMAND"} },
		},
		{
			name: "unknown flag build",
			args: func(e *env) []string { return []string{"build", sampleLib, "-o", e.path("out.skg"), "--bogus"} },
			code: 2,
			want: func(e *env) []string {
				return []string{"caskg build: flag provided but not defined: -bogus", "usage: caskg build"}
			},
		},
		{
			name: "unknown flag query",
			args: func(e *env) []string { return []string{"query", art, "--bogus", "task"} },
			code: 2,
			want: func(e *env) []string {
				return []string{"caskg query: flag provided but not defined: -bogus", "usage: caskg query"}
			},
		},
		{
			name: "unknown export format",
			args: func(e *env) []string { return []string{"export", art, "--format", "svg"} },
			code: 2,
			want: func(e *env) []string {
				return []string{`caskg export: flag -format: unknown format "svg"`, "json, dot or graphml"}
			},
		},
		{
			name: "bad -k value",
			args: func(e *env) []string { return []string{"query", art, "-k", "many", "task"} },
			code: 2,
			want: func(e *env) []string { return []string{`invalid value "many" for flag -k`} },
		},

		// Artifacts.
		{
			name:  "empty file as artifact",
			files: files{"empty.skg": ""},
			args:  func(e *env) []string { return []string{"inspect", e.path("empty.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("empty.skg") + ": not a caskg artifact"} },
		},
		{
			name:  "truncated artifact header",
			files: files{"short.skg": string(artBytes[:100])},
			args:  func(e *env) []string { return []string{"query", e.path("short.skg"), "task"} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("short.skg") + ": ", "truncated"} },
		},
		{
			name:  "truncated artifact body",
			files: files{"half.skg": string(artBytes[:len(artBytes)/2])},
			args:  func(e *env) []string { return []string{"inspect", e.path("half.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("half.skg") + ": ", "truncated"} },
		},
		{
			name:  "corrupt artifact",
			files: files{"bad.skg": string(corrupt)},
			args:  func(e *env) []string { return []string{"export", e.path("bad.skg")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("bad.skg") + ": ", "checksum"} },
		},
		{
			name: "artifact does not exist",
			args: func(e *env) []string { return []string{"query", e.path("nope.skg"), "task"} },
			code: 1,
			want: func(e *env) []string { return []string{e.path("nope.skg"), "no such file or directory"} },
		},
		{
			name: "inspect two artifacts",
			args: func(e *env) []string { return []string{"inspect", art, art} },
			code: 2,
			want: func(e *env) []string { return []string{"want exactly one ARTIFACT, got 2"} },
		},

		// Queries.
		{
			name: "empty query",
			args: func(e *env) []string { return []string{"query", art, ""} },
			code: 2,
			want: func(e *env) []string { return []string{"caskg query: ", "the task text is empty"} },
		},
		{
			name: "blank query",
			args: func(e *env) []string { return []string{"query", art, "   "} },
			code: 2,
			want: func(e *env) []string { return []string{"caskg query: ", "the task text is empty"} },
		},
		{
			name: "query without task",
			args: func(e *env) []string { return []string{"query", art} },
			code: 2,
			want: func(e *env) []string { return []string{"no task text given", "usage: caskg query"} },
		},
		{
			name:  "query with task and batch",
			files: files{"tasks.jsonl": tasksOK},
			args:  func(e *env) []string { return []string{"query", art, "task", "--batch", e.path("tasks.jsonl")} },
			code:  2,
			want:  func(e *env) []string { return []string{"either a task text or --batch"} },
		},
		{
			name:  "batch file task without query",
			files: files{"tasks.jsonl": `{"id": "a"}` + "\n"},
			args:  func(e *env) []string { return []string{"query", art, "--batch", e.path("tasks.jsonl")} },
			code:  1,
			want: func(e *env) []string {
				return []string{e.path("tasks.jsonl") + `:1 (id "a"): field "query" missing or empty`, "1 of 1 tasks failed"}
			},
		},
		{
			name: "batch file does not exist",
			args: func(e *env) []string { return []string{"query", art, "--batch", e.path("nope.jsonl")} },
			code: 1,
			want: func(e *env) []string { return []string{e.path("nope.jsonl"), "no such file or directory"} },
		},

		// Eval.
		{
			name:  "eval tasks bad JSON line",
			files: files{"tasks.jsonl": tasksOK + "not json\n"},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("tasks.jsonl") + ":2: not a JSON task"} },
		},
		{
			name:  "eval task without gold",
			files: files{"tasks.jsonl": `{"id": "a", "query": "heat an egg"}` + "\n"},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("tasks.jsonl") + `:1: field "gold" missing or empty`} },
		},
		{
			name:  "eval empty tasks file",
			files: files{"tasks.jsonl": "\n\n"},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl")} },
			code:  1,
			want:  func(e *env) []string { return []string{e.path("tasks.jsonl") + ": no tasks"} },
		},
		{
			name:  "eval gold edges bad line",
			files: files{"tasks.jsonl": tasksOK, "edges.jsonl": `{"source": "a"}` + "\n"},
			args: func(e *env) []string {
				return []string{"eval", art, "--tasks", e.path("tasks.jsonl"), "--gold-edges", e.path("edges.jsonl")}
			},
			code: 1,
			want: func(e *env) []string {
				return []string{e.path("edges.jsonl") + `:1: fields "source" and "target" are required`}
			},
		},
		{
			name: "eval without tasks",
			args: func(e *env) []string { return []string{"eval", art} },
			code: 2,
			want: func(e *env) []string { return []string{"flag -tasks is required", "usage: caskg eval"} },
		},
		{
			name:  "eval bad -ks word",
			files: files{"tasks.jsonl": tasksOK},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl"), "--ks", "5,x"} },
			code:  2,
			want:  func(e *env) []string { return []string{`flag -ks: "x" is not a cutoff in [1, `} },
		},
		{
			name:  "eval bad -ks zero",
			files: files{"tasks.jsonl": tasksOK},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl"), "--ks", "0"} },
			code:  2,
			want:  func(e *env) []string { return []string{`flag -ks: "0" is not a cutoff`} },
		},
		{
			name:  "eval bad -ks too large",
			files: files{"tasks.jsonl": tasksOK},
			args: func(e *env) []string {
				return []string{"eval", art, "--tasks", e.path("tasks.jsonl"), "--ks", "10,100000"}
			},
			code: 2,
			want: func(e *env) []string { return []string{`flag -ks: "100000" is not a cutoff`} },
		},
		{
			name:  "eval bad -ks empty",
			files: files{"tasks.jsonl": tasksOK},
			args:  func(e *env) []string { return []string{"eval", art, "--tasks", e.path("tasks.jsonl"), "--ks", ""} },
			code:  2,
			want:  func(e *env) []string { return []string{`flag -ks: "" is not a cutoff`} },
		},
	}
	// Every command that reads an artifact names a file that is not one.
	for _, cmd := range [][]string{{"query", "task"}, {"inspect"}, {"export", "--format", "dot"}, {"eval", "--tasks", "tasks.jsonl"}} {
		cases = append(cases, tcase{
			name:  "not an artifact " + cmd[0],
			files: files{"notes.skg": "# just some notes\n", "tasks.jsonl": tasksOK},
			args: func(e *env) []string {
				args := []string{cmd[0], e.path("notes.skg")}
				for _, a := range cmd[1:] {
					if strings.HasSuffix(a, ".jsonl") {
						a = e.path(a)
					}
					args = append(args, a)
				}
				return args
			},
			code: 1,
			want: func(e *env) []string { return []string{e.path("notes.skg") + ": not a caskg artifact"} },
		})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{dir: t.TempDir(), art: art}
			fixture.WriteFiles(t, e.dir, tc.files)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			args := tc.args(e)
			r := run(t, args...)
			c := &checks{t: t}
			if r.code != tc.code {
				c.errorf("caskg %q: exit %d, want %d", args, r.code, tc.code)
			}
			if r.stdout != "" {
				c.errorf("caskg %q printed on stdout:\n%s", args, r.stdout)
			}
			for _, w := range tc.want(e) {
				if !strings.Contains(r.stderr, w) {
					c.errorf("caskg %q: stderr does not contain %q:\n%s", args, w, r.stderr)
				}
			}
			if !strings.HasPrefix(r.stderr, "caskg") {
				c.errorf("caskg %q: stderr does not start with the command name:\n%s", args, r.stderr)
			}
			assertNoTemp(t, e.dir)
			c.done()
		})
	}
}

// TestStrictBuild checks --strict against the same library as a lenient build: one bad skill
// among good ones is skipped and reported without --strict, and fails the build with it.
func TestStrictBuild(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{
		"lib/alpha/SKILL.md": skillMD("", "name: alpha", "description: The first good skill."),
		"lib/beta/SKILL.md":  skillMD("", "name: beta", "description: The second good skill, after alpha.", "depends_on: [alpha]"),
		"lib/gamma/SKILL.md": skillMD("", "name: gamma", `description: ""`),
	})
	lib := filepath.Join(dir, "lib")
	problem := filepath.ToSlash(filepath.Join(lib, "gamma", "SKILL.md")) + `:3: field "description": empty description`

	out := filepath.Join(dir, "lenient.skg")
	r := mustRun(t, "build", lib, "-o", out, "--json")
	var summary struct {
		Skills  int      `json:"skills"`
		Skipped []string `json:"skipped"`
	}
	decodeJSON(t, r.stdout, &summary)
	if summary.Skills != 2 || !slices.Equal(summary.Skipped, []string{problem}) {
		t.Errorf("lenient build --json: %d skills, skipped %q; want 2 and [%q]", summary.Skills, summary.Skipped, problem)
	}
	if got := slices.Sorted(maps.Keys(exportNodes(t, out))); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("lenient artifact holds %q, want alpha and beta", got)
	}

	strictOut := filepath.Join(dir, "strict.skg")
	r = run(t, "build", "--strict", lib, "-o", strictOut)
	if r.code != 1 || r.stdout != "" || r.stderr != "caskg build: ingest: "+problem+"\n" {
		t.Errorf("build --strict: exit %d, stdout %q, stderr %q; want 1, nothing, the problem", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(strictOut); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed strict build wrote %s (stat: %v)", strictOut, err)
	}
	assertOnlyFiles(t, dir, "lib", "lenient.skg")
}

// TestAtomicWrite checks that a failed build leaves an artifact already at -o alone, that a
// good build replaces it, and that no temporary file is left behind either way.
func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{
		"good/one/SKILL.md": skillMD("", "name: one", "description: A good skill."),
		"good/two/SKILL.md": skillMD("", "name: two", "description: Another good skill."),
		"bad/SKILL.md":      "no front matter\n",
	})
	art := filepath.Join(dir, "graph.skg")
	mustRun(t, "build", filepath.Join(dir, "good"), "-o", art)
	before, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}

	failing := [][]string{
		{"build", "--strict", filepath.Join(dir, "good"), filepath.Join(dir, "bad", "SKILL.md"), "-o", art},
		{"build", filepath.Join(dir, "bad"), "-o", art},                // empty library
		{"build", filepath.Join(dir, "missing"), "-o", art},            // no such path
		{"build", filepath.Join(dir, "good"), "-o", art, "--cap", "0"}, // build rejects its options
	}
	for _, args := range failing {
		r := run(t, args...)
		if r.code == 0 {
			t.Errorf("caskg %q succeeded, want a failure", args)
		}
		after, err := os.ReadFile(art)
		if err != nil || !bytes.Equal(after, before) {
			t.Errorf("caskg %q failed but changed %s (err %v)", args, art, err)
		}
	}
	assertOnlyFiles(t, dir, "good", "bad", "graph.skg")

	// A good build over it replaces it in one piece.
	r := mustRun(t, "build", filepath.Join(dir, "good"), filepath.Join(dir, "bad"), "-o", art, "--json")
	var summary struct{ Bytes int }
	if err := json.Unmarshal([]byte(r.stdout), &summary); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != summary.Bytes {
		t.Errorf("%s has %d bytes, the build says it wrote %d", art, len(after), summary.Bytes)
	}
	if fi, err := os.Stat(art); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o644 {
		t.Errorf("artifact mode %v, want 0644", fi.Mode().Perm())
	}
	assertOnlyFiles(t, dir, "good", "bad", "graph.skg")
}

// runWithin runs caskg with args and fails the test, instead of hanging it, when the command
// does not return within a few seconds.
func runWithin(t *testing.T, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := Run(args, &stdout, &stderr)
		done <- result{code, stdout.String(), stderr.String()}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("caskg %s still running after 20s: it hangs on the named pipe", strings.Join(args, " "))
		return result{}
	}
}

// TestNamedPipeInLibrary puts a named pipe where a SKILL.md and a tool catalog should be (read,
// it would block forever for want of a writer). build skips both, names them in its summary and
// finishes; build --strict fails on the first; mcp --library starts and names it.
func TestNamedPipeInLibrary(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{"lib/good-skill/SKILL.md": goodSkill})
	if err := os.Mkdir(filepath.Join(dir, "lib", "pipe"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "lib", "pipe", "SKILL.md"))
	mkfifo(t, filepath.Join(dir, "tools.json"))
	lib, catalog := filepath.Join(dir, "lib"), filepath.Join(dir, "tools.json")
	slashDir := filepath.ToSlash(dir)
	pipeSkill := slashDir + "/lib/pipe/SKILL.md: not a regular file: named pipe; skipped"
	pipeCatalog := slashDir + "/tools.json: not a regular file: named pipe; skipped"

	out := filepath.Join(dir, "out.skg")
	r := runWithin(t, "build", lib, catalog, "-o", out)
	if r.code != 0 {
		t.Fatalf("build: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if want := "\nskipped   2:\n          " + pipeSkill + "\n          " + pipeCatalog + "\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("build summary does not name both pipes (want %q):\n%s", want, r.stdout)
	}
	if got := exportNodes(t, out); !mapsEqual(got, map[string]string{"good-skill": filepath.Base(dir) + "/lib/good-skill/SKILL.md"}) {
		t.Errorf("artifact holds %v, want only good-skill", got)
	}

	r = runWithin(t, "build", "--strict", lib, catalog, "-o", filepath.Join(dir, "strict.skg"))
	if r.code != 1 || r.stdout != "" || r.stderr != "caskg build: ingest: "+pipeSkill+"\n" {
		t.Errorf("build --strict: exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, pipeSkill)
	}

	old := stdin
	t.Cleanup(func() { stdin = old })
	stdin = strings.NewReader("") // the client hangs up at once
	r = runWithin(t, "mcp", out, "--library", lib)
	if r.code != 0 || !strings.Contains(r.stderr, "first: "+pipeSkill) {
		t.Errorf("mcp --library: exit %d, stderr %q; want 0 and the pipe named", r.code, r.stderr)
	}
}

// TestBuildWarnings checks that a problem whose entry was kept — a SKILL.md name that breaks
// the Agent Skills convention — is listed under warnings, not skipped, and that --strict fails
// on it as on any problem.
func TestBuildWarnings(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{
		"lib/good-skill/SKILL.md": goodSkill,
		"lib/title/SKILL.md":      skillMD("", "name: Title Case", "description: Kept, with a warning."),
	})
	lib := filepath.Join(dir, "lib")
	warning := filepath.ToSlash(lib) + `/title/SKILL.md:2: field "name": name "Title Case" breaks the Agent Skills convention ` +
		`(lowercase letters, digits and single hyphens inside, at most 64 characters); kept`
	r := mustRun(t, "build", lib, "-o", filepath.Join(dir, "out.skg"), "--json")
	var summary struct {
		Skills   int      `json:"skills"`
		Skipped  []string `json:"skipped"`
		Warnings []string `json:"warnings"`
	}
	decodeJSON(t, r.stdout, &summary)
	if summary.Skills != 2 || len(summary.Skipped) != 0 || !slices.Equal(summary.Warnings, []string{warning}) {
		t.Errorf("build --json: %d skills, skipped %q, warnings %q; want 2, none, [%q]", summary.Skills, summary.Skipped, summary.Warnings, warning)
	}
	r = mustRun(t, "build", lib, "-o", filepath.Join(dir, "out.skg"))
	if want := "\nwarnings  1:\n          " + warning + "\n"; !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "skipped") {
		t.Errorf("build summary does not list the warning alone (want %q):\n%s", want, r.stdout)
	}
	r = run(t, "build", "--strict", lib, "-o", filepath.Join(dir, "strict.skg"))
	if r.code != 1 || r.stderr != "caskg build: ingest: "+warning+"\n" {
		t.Errorf("build --strict: exit %d, stderr %q; want 1 and the warning", r.code, r.stderr)
	}

	// Many warnings: the summary lists the first few and counts the rest; --quiet only counts.
	many := files{}
	for i := range 7 {
		many[fmt.Sprintf("many/t%d/SKILL.md", i)] = skillMD("", fmt.Sprintf("name: Title %d", i), "description: Kept, with a warning.")
	}
	fixture.WriteFiles(t, dir, many)
	lib = filepath.Join(dir, "many")
	report := filepath.Join(dir, "report.json")
	for _, tc := range []struct {
		quiet  bool
		header string
		listed int
	}{{false, "\nwarnings  7 (5 listed; --report FILE or --json lists every one):\n", 5}, {true, "\nwarnings  7 (0 listed; --report FILE or --json lists every one):\n", 0}} {
		args := []string{"build", lib, "-o", filepath.Join(dir, "many.skg"), "--report", report}
		if tc.quiet {
			args = append(args, "--quiet")
		}
		r := mustRun(t, args...)
		if !strings.Contains(r.stdout, tc.header) || strings.Count(r.stdout, "breaks the Agent Skills convention") != tc.listed {
			t.Errorf("quiet %v: want %q and %d warnings listed:\n%s", tc.quiet, tc.header, tc.listed, r.stdout)
		}
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "breaks the Agent Skills convention"); n != 7 {
			t.Errorf("quiet %v: the report lists %d warnings, want 7", tc.quiet, n)
		}
	}
}
