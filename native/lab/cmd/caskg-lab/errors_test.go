package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/lab/internal/harness"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// TestCompareAndOracleErrors checks the bad command lines and files of compare and report and
// of the oracle prober: the exit status, the message, no artifact written and no
// README changed.
func TestCompareAndOracleErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string { return fixture.WriteFile(t, dir, name, body) }
	good, _ := json.Marshal(&harness.Result{Title: "t", Command: "c", Ks: []int{10},
		Rows: []harness.Row{{Name: harness.RowDefault, Kind: harness.KindVariant, Summary: eval.Summary{Recall: map[int]float64{10: 0.5}}}}})
	goodPath := write("good.json", string(good))
	noMarkers := write("README.md", "# no markers\n")
	gold := write("gold.jsonl", sampleGoldEdges)
	badLine := write("bad.jsonl", sampleGoldEdges+"{\"source\": \"find-object\"\n")
	other := write("other.jsonl", `{"source":"SearchHotel","target":"ReserveHotel"}`+"\n")
	out := filepath.Join(dir, "x.skg")
	build := func(flags ...string) []string {
		return append([]string{"build", fixture.LabSampleLib, "-o", out, "--quiet"}, flags...)
	}
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no command", nil, 2, "caskg-lab: no command given"},
		{"unknown command", []string{"comapre"}, 2, `caskg-lab: unknown command "comapre"; did you mean compare?`},
		{"no files", []string{"report"}, 2, "caskg-lab report: report needs at least one RESULT.json"},
		{"not a result", []string{"report", write("bad.json", "{")}, 1, "caskg-lab report: " + dir + "/bad.json: not a result of caskg-lab compare --json"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, 1, "nope.json"},
		{"README without markers", []string{"report", goodPath, "-o", filepath.Join(dir, "E.md"), "--readme", noMarkers},
			1, "caskg-lab report: " + noMarkers + ": mdspan: marker <!-- eval:begin --> appears 0 times, want once"},
		{"compare without tasks", []string{"compare", fixture.LabSampleLib}, 2, "caskg-lab compare: flag -tasks is required\nusage: caskg-lab compare LIBRARY..."},
		{"compare without libraries", []string{"compare", "--tasks", fixture.LabSampleTasks}, 2, "compare needs at least one LIBRARY"},
		{"compare with a typo", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--gold-edge", "x"}, 2, "; did you mean -gold-edges?"},
		{"oracle without gold edges", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--oracle-errors", "0.1"}, 2,
			"flag -oracle-errors needs -gold-edges"},
		{"oracle rate above 1", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,2"}, 2,
			`flag -oracle-errors: "2" is not an error rate in [0, 1]`},
		{"oracle rate twice", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--gold-edges", goodPath, "--oracle-errors", "0.1,0.10"}, 2,
			"flag -oracle-errors: 0.1 given twice"},
		{"compare with an unknown role", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--role", "dev"}, 2,
			`flag -role: "dev" is not tuning or check`},
		{"compare with bad cutoffs", []string{"compare", fixture.LabSampleLib, "--tasks", fixture.LabSampleTasks, "--ks", "0"}, 2,
			`flag -ks: "0" is not a cutoff`},
		{"unknown prober", build("--prober", "oracl"), 2, `caskg build: flag -prober: "oracl" is not contract, llm or oracle`},
		{"oracle: no edge file", build("--prober", "oracle"), 2, "the oracle prober (evaluation only) needs -oracle-edges FILE"},
		{"oracle: edges without the oracle", build("--oracle-edges", gold), 2, "flag -oracle-edges needs -prober oracle"},
		{"oracle: error rate without the oracle", build("--prober", "contract", "--oracle-error", "0.1"), 2, "flag -oracle-error needs -prober oracle"},
		{"oracle: error rate above 1", build("--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "1.5"), 2,
			"flag -oracle-error: 1.5 is outside [0, 1]"},
		{"oracle: error rate not a number", build("--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "ten"), 2,
			"-oracle-error"},
		{"oracle: missing file", build("--prober", "oracle", "--oracle-edges", filepath.Join(dir, "nope.jsonl")), 1,
			"flag -oracle-edges: oracle: open " + filepath.Join(dir, "nope.jsonl")},
		{"oracle: bad line", build("--prober", "oracle", "--oracle-edges", badLine), 1,
			"flag -oracle-edges: oracle: " + badLine + ":5: not a JSON edge"},
		{"oracle: another library's edges", build("--prober", "oracle", "--oracle-edges", other), 1,
			"none of the 1 gold edges of " + other + " joins two skills of the library"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tc.args, io.Discard, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed build wrote its artifact (%v)", err)
			}
		})
	}
	if b, _ := os.ReadFile(noMarkers); string(b) != "# no markers\n" {
		t.Errorf("a failed README rewrite changed the file: %q", b)
	}
}
