package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/harness"
)

// sampleGoldEdges are dependencies of the sample library: a gold edge file for the oracle.
const sampleGoldEdges = `{"source":"find-object","target":"pick-up-object","type":"dependency"}
{"source":"go-to-location","target":"pick-up-object"}
{"source":"pick-up-object","target":"heat-object-in-microwave"}
{"source":"pick-up-object","target":"put-two-objects-in-receptacle"}
`

func TestBuildOracle(t *testing.T) {
	dir := t.TempDir()
	gold := filepath.Join(dir, "gold.jsonl")
	if err := os.WriteFile(gold, []byte(sampleGoldEdges), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "oracle.skg")
	r := mustRun(t, "build", sampleLib, "-o", out, "--prober", "oracle", "--oracle-edges", gold, "--quiet")
	prober, frontier, ran, _, failed := probeLine(t, r.stdout)
	c := regexp.MustCompile(`(?m)^frontier\s+(\d+) probed by (\S+):`).FindStringSubmatch(
		mustRun(t, "build", sampleLib, "-o", filepath.Join(dir, "c.skg"), "--quiet").stdout)
	if c == nil {
		t.Fatal("no probes line in the contract build's summary")
	}
	contract, contractFrontier := c[2], atoi(c[1])
	// The oracle is free: like the contract prober it probes every candidate, not the model budget.
	if prober != "oracle" || contract != "contract" || frontier != contractFrontier || ran != 3*frontier || failed != 0 {
		t.Errorf("probed by %s, frontier %d (contract: %d), %d probes run, %d failed", prober, frontier, contractFrontier, ran, failed)
	}
	// A perfect oracle: every confirmed edge is gold, and the gold edges that were candidates are confirmed.
	ev := mustRun(t, "eval", out, "--tasks", sampleTasks, "--gold-edges", gold, "--json")
	var rep harness.ArtifactScores
	if err := json.Unmarshal([]byte(ev.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	conf := rep.Edges["confirmed"]
	if conf == nil || conf.Hits == 0 || conf.Precision != 1 || rep.Edges["uncertain"] != nil {
		t.Errorf("edges by state: %+v; want confirmed edges, all gold, and none uncertain", rep.Edges)
	}
	// A given budget is kept.
	r = mustRun(t, "build", sampleLib, "-o", out, "--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "0.3",
		"--oracle-seed", "9", "--budget", "50", "--quiet")
	if _, frontier, _, _, _ := probeLine(t, r.stdout); frontier != 50 {
		t.Errorf("--budget 50: frontier %d", frontier)
	}
}

func TestBuildOracleBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gold := write("gold.jsonl", sampleGoldEdges)
	badLine := write("bad.jsonl", sampleGoldEdges+"{\"source\": \"find-object\"\n")
	other := write("other.jsonl", `{"source":"SearchHotel","target":"ReserveHotel"}`+"\n")
	out := filepath.Join(dir, "x.skg")
	tests := []struct {
		name  string
		flags []string
		code  int
		err   string
	}{
		{"no edge file", []string{"--prober", "oracle"}, 2, "the oracle prober (evaluation only) needs -oracle-edges FILE"},
		{"edges without the oracle", []string{"--oracle-edges", gold}, 2, "flag -oracle-edges needs -prober oracle"},
		{"error rate without the oracle", []string{"--prober", "contract", "--oracle-error", "0.1"}, 2, "flag -oracle-error needs -prober oracle"},
		{"error rate above 1", []string{"--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "1.5"}, 2,
			"flag -oracle-error: 1.5 is outside [0, 1]"},
		{"error rate not a number", []string{"--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "ten"}, 2,
			"-oracle-error"},
		{"missing file", []string{"--prober", "oracle", "--oracle-edges", filepath.Join(dir, "nope.jsonl")}, 1,
			"flag -oracle-edges: oracle: open " + filepath.Join(dir, "nope.jsonl")},
		{"bad line", []string{"--prober", "oracle", "--oracle-edges", badLine}, 1,
			"flag -oracle-edges: oracle: " + badLine + ":5: not a JSON edge"},
		{"another library's edges", []string{"--prober", "oracle", "--oracle-edges", other}, 1,
			"none of the 1 gold edges of " + other + " joins two skills of the library"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, append([]string{"build", sampleLib, "-o", out, "--quiet"}, tc.flags...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed build wrote its artifact (%v)", err)
			}
		})
	}
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}
