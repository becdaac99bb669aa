package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/caskg/caskg/native/internal/testlib"
	"github.com/caskg/caskg/native/lab/harness"
)

// sampleGoldEdges are dependencies of the sample library: a gold edge file for the oracle.
const sampleGoldEdges = `{"source":"find-object","target":"pick-up-object","type":"dependency"}
{"source":"go-to-location","target":"pick-up-object"}
{"source":"pick-up-object","target":"heat-object-in-microwave"}
{"source":"pick-up-object","target":"put-two-objects-in-receptacle"}
`

func TestBuildOracle(t *testing.T) {
	dir := t.TempDir()
	gold := testlib.WriteFile(t, dir, "gold.jsonl", sampleGoldEdges)
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

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}
