package ingest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestNameRules checks each name rule on SKILL.md files and tools, with the exact problem.
func TestNameRules(t *testing.T) {
	tool := func(name string) string {
		return `{"tools": [` + "\n" + `{"name": "` + name + `", "description": "A tool."}` + "\n]}\n"
	}
	long := strings.Repeat("a", 129)
	const convention = "breaks the Agent Skills convention (lowercase letters, digits and single hyphens inside, at most 64 characters); kept"
	const mcpRule = "breaks the MCP tool-name rule (1-128 characters of A-Z a-z 0-9 _ - .); skipped"
	tests := []struct {
		name string
		in   string // a SKILL.md, or a tools.json when it starts with "{"
		want []string
		prob string // the one problem, exactly; "" for none
		warn bool   // the problem is a warning
	}{
		{"agent skills name", skillMD("", "name: pdf-2-text", "description: D."), []string{"pdf-2-text"}, "", false},
		{"64 characters", skillMD("", "name: "+strings.Repeat("a", 64), "description: D."), []string{strings.Repeat("a", 64)}, "", false},
		{"title case kept", skillMD("", "name: FFmpeg Video Editing", "description: D."), []string{"FFmpeg Video Editing"},
			`lib/SKILL.md:2: field "name": name "FFmpeg Video Editing" ` + convention, true},
		{"underscores kept", skillMD("", "name: data_cleaning", "description: D."), []string{"data_cleaning"},
			`lib/SKILL.md:2: field "name": name "data_cleaning" ` + convention, true},
		{"double hyphen kept", skillMD("", "description: D.", "name: a--b"), []string{"a--b"},
			`lib/SKILL.md:3: field "name": name "a--b" ` + convention, true},
		{"leading hyphen kept", skillMD("", "name: -a", "description: D."), []string{"-a"},
			`lib/SKILL.md:2: field "name": name "-a" ` + convention, true},
		{"65 characters kept", skillMD("", "name: "+strings.Repeat("a", 65), "description: D."), []string{strings.Repeat("a", 65)},
			`lib/SKILL.md:2: field "name": name "` + strings.Repeat("a", 65) + `" ` + convention, true},
		{"control character skipped", skillMD("", `name: "bell\a"`, "description: D."), nil,
			`lib/SKILL.md:2: field "name": name "bell\a" contains a control character (U+0007); skipped`, false},
		{"newline inside skipped", skillMD("", "name: |-", "  two", "  lines", "description: D."), nil,
			`lib/SKILL.md:2: field "name": name "two\nlines" contains a control character (U+000A); skipped`, false},
		{"129 characters skipped", skillMD("", "name: "+long, "description: D."), nil,
			`lib/SKILL.md:2: field "name": name "` + long[:40] + `"… is 129 characters long, more than 128; skipped`, false},
		{"empty skipped", skillMD("", `name: " "`, "description: D."), nil, `lib/SKILL.md:2: field "name": empty name`, false},
		{"tool name", tool("fs.read_file-2"), []string{"fs.read_file-2"}, "", false},
		{"tool 128 characters", tool(long[:128]), []string{long[:128]}, "", false},
		{"tool with a space skipped", tool("read file"), nil, `lib/tools.json:2: field "name": name "read file" ` + mcpRule, false},
		{"tool with a slash skipped", tool("github/issues"), nil, `lib/tools.json:2: field "name": name "github/issues" ` + mcpRule, false},
		{"tool non-ascii skipped", tool("café"), nil, `lib/tools.json:2: field "name": name "café" ` + mcpRule, false},
		{"tool control character skipped", tool(`a\u0000b`), nil,
			`lib/tools.json:2: field "name": name "a\x00b" contains a control character (U+0000); skipped`, false},
		{"tool 129 characters skipped", tool(long), nil,
			`lib/tools.json:2: field "name": name "` + long[:40] + `"… is 129 characters long, more than 128; skipped`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			file := "lib/SKILL.md"
			if strings.HasPrefix(tt.in, "{") {
				file = "lib/tools.json"
			}
			fixture.WriteFiles(t, ".", files{file: tt.in})
			lib, err := Load(file)
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), "empty library") {
					t.Fatalf("error %v, want an empty library", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, skillNames(lib)); diff != "" {
				t.Errorf("skills (-want +got):\n%s", diff)
			}
			var got []string
			for _, p := range lib.Problems {
				got = append(got, p.Error())
				if p.Warning != tt.warn {
					t.Errorf("%v: Warning %v, want %v", p, p.Warning, tt.warn)
				}
			}
			var want []string
			if tt.prob != "" {
				want = []string{tt.prob}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			// Strict makes the problem fatal, warnings included.
			_, err = LoadWith(Options{Strict: true}, file)
			if tt.prob != "" && (err == nil || err.Error() != "ingest: "+tt.prob) {
				t.Errorf("strict: error %v, want %q", err, "ingest: "+tt.prob)
			}
		})
	}
}

// TestDuplicateAcrossFolders checks that a name defined in two folders (and in a tool catalog)
// is kept once, from the first file read, and that each duplicate names both files.
func TestDuplicateAcrossFolders(t *testing.T) {
	t.Chdir(t.TempDir())
	fixture.WriteFiles(t, ".", files{
		"lib/a/twin/SKILL.md":      skillMD("", "name: twin", "description: The first."),
		"lib/b/deep/twin/SKILL.md": skillMD("", "description: The second.", "name: twin"),
		"tools.jsonl":              `{"name": "other", "description": "fine"}` + "\n" + `{"name": "twin", "description": "A tool."}` + "\n",
	})
	lib, err := Load("lib", "tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range lib.Problems {
		got = append(got, p.Error())
	}
	want := []string{
		`lib/b/deep/twin/SKILL.md:3: field "name": duplicate name "twin": already defined in lib/a/twin/SKILL.md; skipped`,
		`tools.jsonl:2: field "name": duplicate name "twin": already defined in lib/a/twin/SKILL.md; skipped`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(lib.Skills) != 2 || lib.Skills[0].Path != "lib/a/twin/SKILL.md" || lib.Skills[1].Name != "other" {
		t.Errorf("skills %v, want twin from lib/a and other", lib.Skills)
	}
}
