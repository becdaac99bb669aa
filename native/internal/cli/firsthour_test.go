package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestQueryDoors checks what a newcomer gets at the query's doors: an empty task text is a
// usage error (exit 2, as a missing one is), and a library folder given for the artifact says
// to build it.
func TestQueryDoors(t *testing.T) {
	art := buildSample(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"empty task", []string{"query", art, ""}, 2, "caskg query: the task text is empty\nusage: "},
		{"blank task", []string{"query", art, "  "}, 2, "caskg query: the task text is empty\nusage: "},
		{"missing task", []string{"query", art}, 2, "caskg query: no task text given\nusage: "},
		{"a library folder", []string{"query", sampleLib, "heat an egg"}, 1,
			"caskg query: " + sampleLib + " is a folder, not an artifact (.skg); build one from it first: caskg build " + sampleLib + " -o library.skg\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.code || !strings.HasPrefix(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr starting %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestMakeHelpText checks the Makefile's "## " texts, which make help prints as written (awk,
// not make, reads them): a make variable there would be printed as "$(NAME)".
func TestMakeHelpText(t *testing.T) {
	data, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	help := regexp.MustCompile(`(?m)^([a-zA-Z_-]+):.*## (.*)$`)
	n := 0
	for _, m := range help.FindAllStringSubmatch(string(data), -1) {
		n++
		if strings.Contains(m[2], "$(") || strings.Contains(m[2], "${") {
			t.Errorf("make help prints a make variable literally for %s: %s", m[1], m[2])
		}
	}
	if n < 10 {
		t.Fatalf("%d targets with a help text in the Makefile", n)
	}
}

// TestBuildOneSkill checks that build counts one skill in the singular.
func TestBuildOneSkill(t *testing.T) {
	dir := t.TempDir()
	lib := fixture.WriteFile(t, dir, "tools.json", `[{"name":"a","description":"Heat an egg in the microwave."}]`)
	r := mustRun(t, "build", lib, "-o", filepath.Join(dir, "a.skg"))
	fixture.Contains(t, "stdout", r.stdout, []string{"read      1 skill from "}, []string{"1 skills"})
}

// TestBatchInvalidUTF8 checks that a --batch task with a byte that is not UTF-8 is refused,
// naming its line, not answered with the byte dropped, and the other tasks are answered.
func TestBatchInvalidUTF8(t *testing.T) {
	art := buildSample(t)
	batch := fixture.WriteFile(t, t.TempDir(), "tasks.jsonl", "{\"id\": 1, \"query\": \"heat an \xff egg\"}\n{\"id\": 2, \"query\": \"heat an egg\"}\n")
	r := run(t, "query", art, "--batch", batch, "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 1 || len(lines) != 2 || !strings.Contains(lines[0], `"error":"not valid UTF-8: byte 0xff at column 29"`) ||
		!strings.Contains(lines[1], `"results":[{`) {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
