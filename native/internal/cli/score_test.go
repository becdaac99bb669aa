package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/engine"
)

// TestQueryMatch holds caskg query to the match strength: the text says it, the JSON carries
// it, --min-score drops the results below it (a weak answer at 0.4 is empty, with its note),
// a --min-score outside [0, 1] is a usage error, and a --batch line cannot set it for itself.
func TestQueryMatch(t *testing.T) {
	art := buildSample(t)
	const nonsense = "purple elephant bicycle sandwich"
	batch := fixture.WriteFile(t, t.TempDir(), "tasks.jsonl", `{"id": 1, "query": "heat an egg", "min_score": 0.5}`+"\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
	}{
		{"text says the match", []string{"query", art, sampleQuery}, 0,
			[]string{"8 skills for \"" + sampleQuery + "\" (match 0.5"}, []string{"Note:"}},
		{"a weak answer says so", []string{"query", art, nonsense}, 0,
			[]string{"(match 0.1", "Note: " + engine.WeakMatchNote + "."}, nil},
		{"json", []string{"query", art, sampleQuery, "--json"}, 0,
			[]string{`"match":0.5`, `"score":1,"match":0.5`}, []string{`"note"`}},
		{"min-score empties a weak answer", []string{"query", art, nonsense, "--min-score", "0.4"}, 0,
			[]string{"0 skills for", "Note: " + engine.WeakMatchNote}, []string{" 1. "}},
		{"min-score keeps a strong answer's head", []string{"query", art, sampleQuery, "--min-score", "0.5"}, 0,
			[]string{" 1. heat-object-in-microwave "}, []string{" 8. "}},
		{"one skill", []string{"query", art, sampleQuery, "-k", "1"}, 0,
			[]string{"1 skill for \""}, []string{"1 skills"}},
		{"min-score out of range", []string{"query", art, sampleQuery, "--min-score", "1.5"}, 2,
			nil, nil},
		{"batch line", []string{"query", art, "--batch", batch, "--json"}, 1,
			[]string{`"error":"field \"min_score\": not taken per line; give it to the whole run as a flag (--min-score)"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			fixture.Contains(t, "stdout", r.stdout, tt.want, tt.not)
			if tt.code == 2 && !strings.Contains(r.stderr, "flag -min-score: 1.5 is outside [0, 1]") {
				t.Errorf("stderr lacks the flag's range:\n%s", r.stderr)
			}
		})
	}
}

// TestQueryWideNames checks that the score column lines up after names in Chinese, Japanese
// or Korean, whose characters take two columns of a terminal.
func TestQueryWideNames(t *testing.T) {
	lib := t.TempDir()
	fixture.WriteFiles(t, lib, files{
		"a/SKILL.md": fixture.SkillMD("Look up the weather forecast of a city.\n", "name: 天气预报", "description: Weather forecast for a city."),
		"b/SKILL.md": fixture.SkillMD("Weather alerts for a city.\n", "name: weather-alerts", "description: Weather alerts and the forecast of storms."),
		"c/SKILL.md": fixture.SkillMD("서울 forecast.\n", "name: 날씨", "description: Weather forecast in Korean cities."),
	})
	art := filepath.Join(t.TempDir(), "wide.skg")
	mustRun(t, "build", lib, "-o", art)
	r := mustRun(t, "query", art, "weather forecast")
	line := regexp.MustCompile(`(?m)^ ?\d+\. (.*?) +\d\.\d{4}  `)
	cols := map[int]bool{}
	for _, m := range line.FindAllStringSubmatchIndex(r.stdout, -1) {
		s := r.stdout[m[0]:m[1]]
		cols[columns(s)] = true
	}
	if len(cols) != 1 || len(line.FindAllString(r.stdout, -1)) != 3 {
		t.Errorf("the score column starts at %d different columns:\n%s", len(cols), r.stdout)
	}
}

// columns is the terminal width of s when its letters from U+1100 on (here Han and Hangul)
// take two columns.
func columns(s string) int {
	n := 0
	for _, r := range s {
		n += 1 + b2i(r >= 0x1100)
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
