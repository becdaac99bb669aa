package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryCJK holds caskg query to what a user of another script sees: a Chinese task finds
// the Chinese skill it shares words with, and a Korean task on the English sample library is
// answered with a note, in every output form, instead of an empty list without a word.
func TestQueryCJK(t *testing.T) {
	multi := filepath.Join(t.TempDir(), "multilingual.skg")
	mustRun(t, "build", "../../testlib/multilingual", "-o", multi)
	sample := buildSample(t)
	const note = "Note: no term of the query is in this library's index: 서울, 날씨, 알려, 려줘."
	batch := filepath.Join(t.TempDir(), "tasks.jsonl")
	if err := os.WriteFile(batch, []byte(`{"id": 1, "query": "서울 날씨 알려줘"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"Chinese finds Chinese", []string{"query", multi, "帮我查询北京的天气"},
			[]string{" 1. weather-forecast-zh "}, []string{"Note:"}},
		{"Korean finds Korean", []string{"query", multi, "서울 날씨 예보 알려줘"},
			[]string{" 1. weather-forecast-ko "}, []string{"Note:"}},
		{"text", []string{"query", sample, "서울 날씨 알려줘"},
			[]string{"0 skills for \"서울 날씨 알려줘\" (match 0.00)\n" + note + "\n"}, nil},
		{"json", []string{"query", sample, "서울 날씨 알려줘", "--json"},
			[]string{`"results":[]`, `"note":"no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"`}, nil},
		{"render", []string{"query", sample, "서울 날씨 알려줘", "--render"},
			[]string{"No skills found for this task.\n", note}, nil},
		{"batch json", []string{"query", sample, "--batch", batch, "--json"},
			[]string{`"results":[],"match":0,"note":"no term of the query is in this library's index: 서울, 날씨, 알려, 려줘"`}, nil},
		{"batch text", []string{"query", sample, "--batch", batch},
			[]string{"== 1\n0 skills for", note}, nil},
		{"known words, no note", []string{"query", sample, sampleQuery, "--json"},
			nil, []string{`"note"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(r.stdout, n) {
					t.Errorf("output has %q:\n%s", n, r.stdout)
				}
			}
		})
	}
}
