package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/native/testlib/table"
)

// files and skillMD are testlib's, under short names for the tables.
type files = fixture.Files

var skillMD = fixture.SkillMD

const fullSkill = `---
name: extract-tables
title: Extract tables
description: >
  Pull every table out of a PDF
  as CSV.
tags: [pdf, tables, pdf]
inputs:
  - name: pdf
    type: path
    description: the PDF to read
    required: true
  - pages
outputs:
  tables: one CSV file per table
  count:
    type: integer
    description: number of tables
depends_on: ocr
requires: [ocr, " pdf-info "]
license: MIT
metadata:
  anything: goes
---

# Extract tables

Run it.
`

// The same kind of skill written on Windows: BOM and CRLF line endings.
const crlfSkill = "\ufeff---\r\nname: ocr\r\ndescription: Read text from scanned pages.\r\ntags: scan, text , ,image\r\ninputs: [image, lang]\r\n---\r\nLine one.\r\nLine two.\r\n"

var mcpList = `{
  "tools": [
    {
      "name": "search_files",
      "title": "Search files",
      "description": "Find files whose content matches a pattern.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "pattern": {"type": "string", "description": "regular\n expression"},
          "options": {
            "type": "object",
            "description": "search options",
            "properties": {"caseSensitive": {"type": "boolean", "description": "match case"}}
          },
          "paths": {"type": "array", "items": {"type": "string", "description": "a root folder"}},
          "limit": {"type": ["integer", "null"]}
        },
        "required": ["pattern", "nope"]
      },
      "outputSchema": {"type": "object", "properties": {"matches": {"type": "array", "description": "hits"}}},
      "annotations": {"readOnlyHint": true}
    },
    {"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object", "properties": {}}}
  ]
}
`

var searchFiles = Skill{
	Name: "search_files", Title: "Search files", Description: "Find files whose content matches a pattern.",
	Source: "tools.json", Path: "tools.json", Line: 3, Kind: KindTool,
	Inputs: []Field{
		{Name: "limit", Type: "integer|null"},
		{Name: "options", Type: "object", Description: "search options"},
		{Name: "paths", Type: "array"},
		{Name: "pattern", Type: "string", Description: "regular expression", Required: true},
	},
	Outputs: []Field{{Name: "matches", Type: "array", Description: "hits"}},
	SchemaText: strings.Join([]string{
		"limit", "options: search options", "caseSensitive: match case", "paths", "a root folder",
		"pattern: regular expression", "matches: hits",
	}, "\n"),
}

var readFileTool = Skill{Name: "read_file", Description: "Read a file.", Source: "tools.json", Path: "tools.json", Line: 24, Kind: KindTool}

// wantProblem is what a test checks of a Problem.
type wantProblem struct {
	File  string
	Line  int
	Field string
	Msg   string // a substring of Problem.Msg
}

type loadCase struct {
	name   string
	in     files
	args   []string // paths given to Load; default "lib"
	strict bool
	want   []string // skill names, in order
	probs  []wantProblem
	fatal  string // a substring of the fatal error; "" when Load must succeed
}

var loadCases = []loadCase{
	{
		name: "skill tree",
		in: files{
			"lib/pdf/extract/SKILL.md":         fullSkill,
			"lib/image/ocr/SKILL.md":           crlfSkill,
			"lib/a-first/SKILL.md":             skillMD("", "name: first", "description: comes first"),
			"lib/.hidden/secret/SKILL.md":      skillMD("", "name: hidden", "description: never read"),
			"lib/node_modules/pkg/SKILL.md":    skillMD("", "name: vendored", "description: never read"),
			"lib/pdf/extract/README.md":        "not a skill",
			"lib/pdf/extract/scripts/skill.md": "case matters: not a skill",
		},
		want: []string{"first", "ocr", "extract-tables"},
		probs: []wantProblem{
			{"lib/a-first/SKILL.md", 2, "name", `name "first" differs from its folder "a-first" (the Agent Skills spec wants them equal); kept`},
			{"lib/pdf/extract/SKILL.md", 2, "name", `name "extract-tables" differs from its folder "extract"`},
		},
	},
	{name: "mcp tools/list", in: files{"tools.json": mcpList}, args: []string{"tools.json"}, want: []string{"search_files", "read_file"}},
	{
		name: "bare array",
		in:   files{"tools.json": `[{"name":"a","description":"A."},` + "\n" + `{"name":"b","description":"B.","inputSchema":null}]`},
		args: []string{"tools.json"}, want: []string{"a", "b"},
	},
	{
		name: "json-rpc shape",
		in:   files{"rpc.json": `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"A."}],"nextCursor":"x"}}`},
		args: []string{"rpc.json"}, want: []string{"a"},
	},
	{
		name: "jsonl",
		in:   files{"tools.jsonl": "{\"name\":\"a\",\"description\":\"A.\"}\n\n   \n{\"name\":\"b\",\"description\":\"B.\"}\r\n"},
		args: []string{"tools.jsonl"}, want: []string{"a", "b"},
	},
	{
		name: "ndjson and md files given directly, in argument order",
		in: files{
			"t.ndjson":     `{"name":"tool","description":"T."}`,
			"notes/x.md":   skillMD("", "name: md", "description: a .md file"),
			"lib/SKILL.md": skillMD("", "name: root", "description: the root is a skill too"),
		},
		args: []string{"t.ndjson", "notes/x.md", "lib"}, want: []string{"tool", "md", "root"},
		probs: []wantProblem{{"lib/SKILL.md", 2, "name", `name "root" differs from its folder "lib"`}},
	},
	{
		name: "the same file reached twice is read once",
		in:   files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.")},
		args: []string{"lib", "lib/a/SKILL.md", "./lib/a"}, want: []string{"a"},
	},
	{
		name:  "no front matter",
		in:    files{"lib/a/SKILL.md": "# A skill\n\nname: a\n", "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 1, "front matter", "missing front matter"}},
	},
	{
		name:  "front matter not closed",
		in:    files{"lib/a/SKILL.md": "---\nname: a\ndescription: A.\n# body\n", "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 1, "front matter", "not closed"}},
	},
	{
		name:  "broken yaml",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.", "tags: [x]", "license: a: b"), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 5, "front matter", "broken yaml: line 5: mapping values are not allowed"}},
	},
	{
		name:  "broken yaml with BOM and CRLF",
		in:    files{"lib/a/SKILL.md": "\ufeff---\r\nname: a\r\n\tdescription: A.\r\n---\r\n", "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 3, "front matter", "line 3: found a tab character"}},
	},
	{
		name: "duplicate names in two files",
		in: files{
			"lib/a/SKILL.md": skillMD("", "name: same", "description: first"),
			"lib/b/SKILL.md": skillMD("", "description: second", "name: same"),
		},
		want: []string{"same"},
		probs: []wantProblem{
			{"lib/a/SKILL.md", 2, "name", `name "same" differs from its folder "a"`},
			{"lib/b/SKILL.md", 3, "name", `duplicate name "same": already defined in lib/a/SKILL.md`},
		},
	},
	{
		name:  "duplicate tool names name the first file and line",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A."), "t.jsonl": "{\"name\":\"b\",\"description\":\"B.\"}\n{\"name\":\"a\",\"description\":\"A again.\"}\n{\"name\":\"b\",\"description\":\"B again.\"}\n"},
		args:  []string{"lib", "t.jsonl"},
		want:  []string{"a", "b"},
		probs: []wantProblem{{"t.jsonl", 2, "name", "already defined in lib/a/SKILL.md;"}, {"t.jsonl", 3, "name", "already defined in t.jsonl:1;"}},
	},
	{
		// A catalog on one line: the line says nothing, so each problem names the tool's place.
		name: "one-line catalog",
		in:   files{"t.json": `[{"name":"a","description":"A."},{"name":"b"},{"name":"","description":"C."},{"name":"a","description":"A again."}]`},
		args: []string{"t.json"},
		want: []string{"a"},
		probs: []wantProblem{{"t.json", 1, "[1].description", "missing description"}, {"t.json", 1, "[2].name", "empty name"},
			{"t.json", 1, "[3].name", `duplicate name "a": already defined in t.json:1`}},
	},
	{
		// Invalid UTF-8 is named where it is, in every kind of input, never read as U+FFFD.
		name: "invalid UTF-8",
		in: files{"lib/a/SKILL.md": skillMD("", "name: a", "description: caf\xe9 au lait"), "lib/b/SKILL.md": skillMD("", "name: b", "description: B."),
			"t.json": "[{\"name\":\"c\",\"description\":\"\xff\"}]", "t.jsonl": "{\"name\":\"d\",\"description\":\"D.\"}\n{\"name\":\"e\",\"description\":\"\xfe\"}\n"},
		args: []string{"lib", "t.json", "t.jsonl"},
		want: []string{"b", "d"},
		probs: []wantProblem{{"lib/a/SKILL.md", 3, "", "not valid UTF-8: byte 0xe9 at column 17"}, {"t.json", 1, "", "not valid UTF-8: byte 0xff at column 29"},
			{"t.jsonl", 2, "", "not valid UTF-8: byte 0xfe at column 28"}},
	},
	{
		name:  "one-line tools/list result",
		in:    files{"t.json": `{"tools":[{"name":"a","description":"A."},{"name":"b"}]}`},
		args:  []string{"t.json"},
		want:  []string{"a"},
		probs: []wantProblem{{"t.json", 1, "tools[1].description", "missing description"}},
	},
	{
		name:  "a tool a line keeps the line alone",
		in:    files{"t.json": "{\"result\": {\"tools\": [\n{\"name\":\"a\",\"description\":\"A.\"},\n{\"name\":\"b\"}\n]}}\n"},
		args:  []string{"t.json"},
		want:  []string{"a"},
		probs: []wantProblem{{"t.json", 3, "description", "missing description"}},
	},
	{
		name:  "duplicate key in front matter",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.", "name: b"), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 4, "name", `key "name" already defined at line 2`}},
	},
	{
		name:  "empty name",
		in:    files{"lib/a/SKILL.md": skillMD("", "description: A.", `name: "  "`), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 3, "name", "empty name"}},
	},
	{
		name:  "missing description",
		in:    files{"lib/a/SKILL.md": skillMD("body", "name: a"), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 1, "description", "missing description"}},
	},
	{
		name:  "whitespace description",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", `description: " \t "`), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 3, "description", "empty description"}},
	},
	{
		name:  "name that is a list",
		in:    files{"lib/a/SKILL.md": skillMD("", "description: A.", "name:", "  - a", "  - b"), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 3, "name", "name is not a string (got a list)"}},
	},
	{
		name:  "name that is a number",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: 42", "description: A."), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 2, "name", "name is not a string (got number 42)"}},
	},
	{
		name: "malformed optional fields are warnings",
		in: files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.", "tags: {x: y}", "inputs: 7",
			"outputs: [{type: int}]", "requires: [b, [c]]")},
		want: []string{"a"},
		probs: []wantProblem{
			{"lib/a/SKILL.md", 4, "tags", "want a list or a comma-separated string (got a map); ignored"},
			{"lib/a/SKILL.md", 5, "inputs", "want a list or a map (got number); ignored"},
			{"lib/a/SKILL.md", 6, "outputs", "an entry has no name"},
			{"lib/a/SKILL.md", 7, "requires", "ignored an item that is a list"},
		},
	},
	{
		name: "json syntax error skips the file",
		in: files{
			"lib/a/SKILL.md": skillMD("", "name: a", "description: A."),
			"tools.json":     "{\"tools\": [\n  {\"name\": \"t\", \"description\": \"T.\"},\n  {\"name\": \"u\",, \"description\": \"U.\"}\n]}\n",
		},
		args:  []string{"lib", "tools.json"},
		want:  []string{"a"},
		probs: []wantProblem{{"tools.json", 3, "", "invalid json at column 16: invalid character ','"}},
	},
	{
		name:  "truncated json",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A."), "tools.json": "{\"tools\": [\n"},
		args:  []string{"lib", "tools.json"},
		want:  []string{"a"},
		probs: []wantProblem{{"tools.json", 1, "", "unexpected end of JSON input"}},
	},
	{
		name:  "json that is not a tool list",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A."), "tools.json": `{"name": "x"}`},
		args:  []string{"lib", "tools.json"},
		want:  []string{"a"},
		probs: []wantProblem{{"tools.json", 1, "", `no "tools" array`}},
	},
	{
		name:  "bad jsonl line among good ones",
		in:    files{"t.jsonl": "{\"name\":\"a\",\"description\":\"A.\"}\n\n{\"name\":\"b\" \"description\":\"B.\"}\n{\"name\":\"c\",\"description\":\"C.\"}\n"},
		args:  []string{"t.jsonl"},
		want:  []string{"a", "c"},
		probs: []wantProblem{{"t.jsonl", 3, "", "invalid json at column 13: invalid character '\"' after object key:value pair"}},
	},
	{
		name: "bad tool entries",
		in: files{"tools.json": `{"tools": [
  1,
  {"name": "ok", "description": "fine", "title": 3, "inputSchema": "nope"},
  {"name": "nodesc", "description": "  "},
  {"name": ["x"], "description": "D."},
  {"description": "D."}
]}`},
		args: []string{"tools.json"},
		want: []string{"ok"},
		probs: []wantProblem{
			{"tools.json", 2, "", "tool entry is not an object (got a number)"},
			{"tools.json", 3, "title", "title is not a string (got a number); ignored"},
			{"tools.json", 3, "inputSchema", "schema is not an object (got a string); ignored"},
			{"tools.json", 4, "description", "empty description"},
			{"tools.json", 5, "name", "name is not a string (got an array)"},
			{"tools.json", 6, "name", "missing name"},
		},
	},
	{
		name:  "file larger than 4 MiB",
		in:    files{"lib/a/SKILL.md": skillMD(strings.Repeat("x", MaxFileSize), "name: a", "description: A."), "lib/b/SKILL.md": skillMD("", "name: b", "description: B.")},
		want:  []string{"b"},
		probs: []wantProblem{{"lib/a/SKILL.md", 0, "", "larger than 4 MiB"}},
	},
	{
		name:  "empty library",
		in:    files{"lib/a/README.md": "nothing here"},
		fatal: "ingest: empty library: no skills found in lib (0 problems)",
	},
	{
		name:  "library of bad skills only",
		in:    files{"lib/a/SKILL.md": "no front matter", "t.jsonl": "[]\n"},
		args:  []string{"lib", "t.jsonl"},
		probs: []wantProblem{{"lib/a/SKILL.md", 1, "front matter", "missing"}, {"t.jsonl", 1, "", "not an object"}},
		fatal: "ingest: empty library: no skills found in lib, t.jsonl (2 problems)",
	},
	{
		name:  "nonexistent path",
		in:    files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.")},
		args:  []string{"lib", "missing"},
		fatal: "ingest: stat missing: no such file or directory",
	},
	{
		name:  "unsupported file type",
		in:    files{"skills.yaml": "name: a"},
		args:  []string{"skills.yaml"},
		fatal: "ingest: skills.yaml: unsupported file type; want a directory of SKILL.md files",
	},
	{
		name:   "strict turns a problem fatal",
		in:     files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A."), "lib/b/SKILL.md": skillMD("", "name: b")},
		strict: true,
		fatal:  `ingest: lib/b/SKILL.md:1: field "description": missing description`,
	},
	{
		name:   "strict turns a warning fatal",
		in:     files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.", "tags: {}")},
		strict: true,
		fatal:  `ingest: lib/a/SKILL.md:4: field "tags": want a list`,
	},
	{
		name:   "strict without problems",
		in:     files{"lib/a/SKILL.md": skillMD("", "name: a", "description: A.")},
		strict: true,
		want:   []string{"a"},
	},
}

func TestLoad(t *testing.T) {
	for _, tc := range loadCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			fixture.WriteFiles(t, ".", tc.in)
			args := tc.args
			if args == nil {
				args = []string{"lib"}
			}
			lib, err := LoadWith(Options{Strict: tc.strict}, args...)
			if tc.fatal != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fatal) {
					t.Fatalf("error = %v, want one containing %q", err, tc.fatal)
				}
				if tc.probs == nil {
					return
				}
				if lib == nil {
					t.Fatalf("no Library returned with %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, skillNames(lib)); diff != "" {
				t.Errorf("skills (-want +got):\n%s", diff)
			}
			if len(lib.Problems) != len(tc.probs) {
				t.Fatalf("got %d problems, want %d: %v", len(lib.Problems), len(tc.probs), lib.Problems)
			}
			for i, w := range tc.probs {
				p := lib.Problems[i]
				if p.File != w.File || p.Line != w.Line || p.Field != w.Field || !strings.Contains(p.Msg, w.Msg) {
					t.Errorf("problem %d = %#v\nwant %s:%d field %q msg containing %q", i, p, w.File, w.Line, w.Field, w.Msg)
				}
			}
		})
	}
}

// TestLoadFields checks every field of skills read from each kind of file.
func TestLoadFields(t *testing.T) {
	t.Chdir(t.TempDir())
	fixture.WriteFiles(t, ".", files{
		"lib/pdf/extract-tables/SKILL.md": fullSkill,
		"lib/image/ocr/SKILL.md":          crlfSkill,
		"tools.json":                      mcpList,
	})
	lib, err := Load("./lib/", "tools.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []Skill{
		{
			Name: "ocr", Description: "Read text from scanned pages.", Source: "lib/image/ocr/SKILL.md", Path: "lib/image/ocr/SKILL.md", Line: 1,
			Kind: KindSkill, Body: "Line one.\nLine two.", Tags: []string{"scan", "text", "image"},
			Inputs: []Field{{Name: "image"}, {Name: "lang"}},
		},
		{
			Name: "extract-tables", Title: "Extract tables", Description: "Pull every table out of a PDF as CSV.",
			Source: "lib/pdf/extract-tables/SKILL.md", Path: "lib/pdf/extract-tables/SKILL.md", Line: 1, Kind: KindSkill, Body: "# Extract tables\n\nRun it.",
			Tags: []string{"pdf", "tables"},
			Inputs: []Field{
				{Name: "pdf", Type: "path", Description: "the PDF to read", Required: true},
				{Name: "pages"},
			},
			Outputs: []Field{
				{Name: "count", Type: "integer", Description: "number of tables"},
				{Name: "tables", Description: "one CSV file per table"},
			},
			DependsOn: []string{"ocr", "pdf-info"},
		},
		searchFiles,
		readFileTool,
	}
	// Sources are relative to the folder holding lib and tools.json, and start with its name
	// (TestSourceIsLibraryRelative); here that is the test's own folder.
	wd, _ := os.Getwd()
	for i := range lib.Skills {
		if s := &lib.Skills[i]; s.Source != filepath.Base(wd)+"/"+s.Path {
			t.Errorf("%s: Source %q, want %q", s.Name, s.Source, filepath.Base(wd)+"/"+s.Path)
		} else {
			s.Source = s.Path
		}
	}
	if diff := cmp.Diff(want, lib.Skills); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if len(lib.Problems) != 0 {
		t.Errorf("problems: %v", lib.Problems)
	}
}

func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{
		"a/SKILL.md":       skillMD("", "name: a", "description: A."),
		"b/SKILL.md":       skillMD("", "name: b", "description: B."),
		"c/inner/SKILL.md": skillMD("", "name: c", "description: C."),
	})
	locked := filepath.Join(dir, "a", "SKILL.md")
	lockedDir := filepath.Join(dir, "c")
	for _, p := range []string{locked, lockedDir} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(lockedDir, 0o755) }) // so that TempDir can remove it
	if f, err := os.Open(locked); err == nil {
		f.Close()
		t.Skip("the file is still readable after chmod 000 (running as root?)")
	}
	lib, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.Skills) != 1 || lib.Skills[0].Name != "b" {
		t.Errorf("skills = %v, want only b", lib.Skills)
	}
	if len(lib.Problems) != 2 {
		t.Fatalf("problems = %v, want the file and the directory", lib.Problems)
	}
	for i, want := range []string{locked, lockedDir} {
		if p := lib.Problems[i]; p.File != filepath.ToSlash(want) || !strings.Contains(p.Msg, "permission denied") {
			t.Errorf("problem %d = %v, want one naming %s", i, p, want)
		}
	}
	// Given directly, an unreadable file is fatal.
	if _, err := Load(locked); err == nil || !strings.HasPrefix(err.Error(), "ingest: ") {
		t.Errorf("Load(%s) error = %v, want a fatal ingest error", locked, err)
	}
}

func TestNoPaths(t *testing.T) {
	if _, err := Load(); err == nil {
		t.Error("Load() succeeded, want an error")
	}
}

func TestStrictErrorWrapsProblem(t *testing.T) {
	t.Chdir(t.TempDir())
	fixture.WriteFiles(t, ".", files{"lib/a/SKILL.md": skillMD("", "name: a")})
	_, err := LoadWith(Options{Strict: true}, "lib")
	var p Problem
	if !errors.As(err, &p) || p.File != "lib/a/SKILL.md" || p.Field != "description" {
		t.Errorf("error %v does not wrap the description Problem", err)
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		name string
		in   Problem
		want string
	}{
		{"all parts", Problem{File: "graphs/sample/x/SKILL.md", Line: 3, Field: "name", Skill: "x", Msg: "empty name"},
			`graphs/sample/x/SKILL.md:3: field "name": empty name`},
		{"no line", Problem{File: "t.json", Msg: "file is too large"}, "t.json: file is too large"},
		{"no field", Problem{File: "t.jsonl", Line: 2, Msg: "invalid json"}, "t.jsonl:2: invalid json"},
		{"no file", Problem{Msg: "oops"}, "oops"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseSkillMDFrontMatterShapes(t *testing.T) {
	// parsed is the skill's Body, or the first problem's Msg when no skill.
	parsed := func(in string) string {
		skills, probs := ParseSkillMD([]byte(in), "SKILL.md")
		switch {
		case len(skills) == 1:
			return skills[0].Body
		case len(probs) > 0:
			return probs[0].Msg
		}
		return ""
	}
	table.Run(t, "parsed", parsed, []table.Case[string, string]{
		{"dots close", "---\nname: a\ndescription: A.\n...\nbody", "body"},
		{"delimiters with trailing blanks", "--- \nname: a\ndescription: A.\n---\t\nbody", "body"},
		{"no body", "---\nname: a\ndescription: A.\n---", ""},
		{"empty front matter", "---\n---\nbody", "missing name"},
		{"front matter is a list", "---\n- a\n---\n", "front matter is not a mapping of fields (got a list)"},
		{"empty file", "", `missing front matter: the file must start with a "---" line`},
		{"opening only", "---", `front matter not closed: no "---" line after the opening one`},
		{"indented delimiter", " ---\nname: a\ndescription: A.\n---\n", `missing front matter: the file must start with a "---" line`},
		{"alias name", "---\nx: &n a\nname: *n\ndescription: A.\n---\nok", "ok"},
		{"self-referencing alias", "---\nname: a\ndescription: A.\ntags: &t [x, *t]\n---\nok", "ok"},
	})
}

// skillNames lists the names of lib's skills in order.
func skillNames(lib *Library) []string {
	var names []string
	for _, s := range lib.Skills {
		names = append(names, s.Name)
	}
	return names
}

// TestSpecFields checks the optional fields of the Agent Skills spec and Claude Code: what helps
// ranking is kept as text, and what breaks the spec is a warning on a kept skill.
func TestSpecFields(t *testing.T) {
	long := strings.Repeat("x", 1025)
	for _, tc := range []struct {
		name        string
		fields      []string
		description string
		tags        []string
		warnings    []string // Problem.Error() of each, in order
	}{
		{"when_to_use joins the description", []string{"when_to_use: Use it when a PDF holds tables."}, "D.\n\nWhen to use: Use it when a PDF holds tables.", nil, nil},
		{"metadata tags and keywords", []string{"tags: [a]", "metadata:", "  author: me", "  tags: b, a", "  keywords: [c]"}, "D.", []string{"a", "b", "c"}, nil},
		{"fine optional fields", []string{"license: Apache-2.0", "compatibility: Needs network access", "allowed-tools: Read Write"}, "D.", nil, nil},
		{"long description", nil, long, nil, []string{`s/SKILL.md:3: field "description": description is 1025 characters, more than the Agent Skills spec's 1024; kept whole`}},
		{"compatibility a map", []string{"compatibility:", "  os: linux"}, "D.", nil, []string{`s/SKILL.md:4: field "compatibility": compatibility is not a string (got a map); ignored`}},
		{"compatibility too long", []string{"compatibility: " + strings.Repeat("y", 501)}, "D.", nil, []string{`s/SKILL.md:4: field "compatibility": compatibility is 501 characters, more than the Agent Skills spec's 500; kept`}},
		{"when_to_use a list", []string{"when_to_use: [a]"}, "D.", nil, []string{`s/SKILL.md:4: field "when_to_use": when_to_use is not a string (got a list); ignored`}},
		{"metadata a string", []string{"metadata: x"}, "D.", nil, []string{`s/SKILL.md:4: field "metadata": metadata is not a map (got string); ignored`}},
		{"allowed-tools a map", []string{"allowed-tools: {a: b}"}, "D.", nil, []string{`s/SKILL.md:4: field "allowed-tools": want a string or a list of strings (got a map); ignored`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc := "D."
			if tc.description == long {
				desc = long
			}
			skills, probs := ParseSkillMD([]byte(skillMD("body", append([]string{"name: s", "description: " + desc}, tc.fields...)...)), "s/SKILL.md")
			if len(skills) != 1 {
				t.Fatalf("skills %v, problems %v", skills, probs)
			}
			if skills[0].Description != tc.description || !slices.Equal(skills[0].Tags, tc.tags) {
				t.Errorf("description %q, tags %q; want %q, %q", skills[0].Description, skills[0].Tags, tc.description, tc.tags)
			}
			var got []string
			for _, p := range probs {
				got = append(got, p.Error())
				if !p.Warning {
					t.Errorf("%v is not a warning", p)
				}
			}
			if diff := cmp.Diff(tc.warnings, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSourceIsLibraryRelative checks that Skill.Source, which artifacts keep, names a file
// relative to the deepest folder holding every path given, starting with that folder's name,
// however the paths were spelled — relative, absolute, ".", through a symlink, as the library
// folder or as its skill folders or files — so no build machine's path reaches an artifact and
// the same files give the same Sources; Path keeps the path as reached.
func TestSourceIsLibraryRelative(t *testing.T) {
	dir := t.TempDir()
	fixture.WriteFiles(t, dir, files{
		"home/me/skills/pdf/SKILL.md": skillMD("", "name: pdf", "description: PDFs."),
		"home/me/skills/xls/SKILL.md": skillMD("", "name: xls", "description: Sheets."),
		"home/me/tools.json":          `[{"name":"t","description":"T."}]`,
	})
	t.Chdir(filepath.Join(dir, "home", "me"))
	abs := filepath.Join(dir, "home", "me", "skills")
	if err := os.Symlink(abs, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		sources []string
		path    string // of the first skill
	}{
		{"folder", []string{"skills"}, []string{"skills/pdf/SKILL.md", "skills/xls/SKILL.md"}, "skills/pdf/SKILL.md"},
		{"folder spelled ./x/", []string{"./skills/"}, []string{"skills/pdf/SKILL.md", "skills/xls/SKILL.md"}, "skills/pdf/SKILL.md"},
		{"absolute", []string{abs}, []string{"skills/pdf/SKILL.md", "skills/xls/SKILL.md"}, filepath.ToSlash(abs) + "/pdf/SKILL.md"},
		{"skill folders", []string{"skills/xls", "skills/pdf"}, []string{"skills/xls/SKILL.md", "skills/pdf/SKILL.md"}, "skills/xls/SKILL.md"},
		{"skill files", []string{"skills/pdf/SKILL.md", abs + "/xls/SKILL.md"}, []string{"skills/pdf/SKILL.md", "skills/xls/SKILL.md"}, "skills/pdf/SKILL.md"},
		{"through a symlink", []string{filepath.Join(dir, "link")}, []string{"link/pdf/SKILL.md", "link/xls/SKILL.md"}, filepath.ToSlash(dir) + "/link/pdf/SKILL.md"},
		{"one skill folder", []string{"skills/pdf"}, []string{"pdf/SKILL.md"}, "skills/pdf/SKILL.md"},
		{"one file", []string{"tools.json"}, []string{"me/tools.json"}, "tools.json"},
		{"folder and file", []string{"skills", "tools.json"}, []string{"me/skills/pdf/SKILL.md", "me/skills/xls/SKILL.md", "me/tools.json"}, "skills/pdf/SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib, err := Load(tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range lib.Skills {
				got = append(got, s.Source)
			}
			if diff := cmp.Diff(tc.sources, got); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
			if lib.Skills[0].Path != tc.path {
				t.Errorf("Path %q, want %q", lib.Skills[0].Path, tc.path)
			}
		})
	}
	t.Chdir(filepath.Join(dir, "home", "me", "skills"))
	if lib, err := Load("."); err != nil || lib.Skills[0].Source != "skills/pdf/SKILL.md" {
		t.Errorf(`Load("."): %v; want Source "skills/pdf/SKILL.md"`, err)
	}
}
