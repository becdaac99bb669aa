package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/testlib/fixture"
)

func TestBuildOracle(t *testing.T) {
	dir := t.TempDir()
	gold := fixture.WriteFile(t, dir, "gold.jsonl", sampleGoldEdges)
	out := filepath.Join(dir, "oracle.skg")
	prober, frontier, ran, failed := probeLine(t, mustRun(t, "build", fixture.LabSampleLib, "-o", out, "--prober", "oracle", "--oracle-edges", gold, "--quiet"))
	c := regexp.MustCompile(`(?m)^frontier\s+(\d+) probed by (\S+):`).FindStringSubmatch(
		mustRun(t, "build", fixture.LabSampleLib, "-o", filepath.Join(dir, "c.skg"), "--quiet"))
	if c == nil {
		t.Fatal("no probes line in the contract build's summary")
	}
	contract := c[2]
	contractFrontier, _ := strconv.Atoi(c[1])
	// The oracle is free: like the contract prober it probes every candidate, not the model budget.
	if prober != "oracle" || contract != "contract" || frontier != contractFrontier || ran != 3*frontier || failed != 0 {
		t.Errorf("probed by %s, frontier %d (contract: %d), %d probes run, %d failed", prober, frontier, contractFrontier, ran, failed)
	}
	// A perfect oracle: every confirmed edge is gold, and the gold edges that were candidates are confirmed.
	var ev bytes.Buffer
	if code := cli.Run([]string{"eval", out, "--tasks", fixture.LabSampleTasks, "--gold-edges", gold, "--json"}, &ev, io.Discard); code != 0 {
		t.Fatalf("caskg eval: exit %d", code)
	}
	var rep eval.ArtifactScores
	if err := json.Unmarshal(ev.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	conf := rep.Edges["confirmed"]
	if conf == nil || conf.Hits == 0 || conf.Precision != 1 || rep.Edges["uncertain"] != nil {
		t.Errorf("edges by state: %+v; want confirmed edges, all gold, and none uncertain", rep.Edges)
	}
	// A given budget is kept.
	r := mustRun(t, "build", fixture.LabSampleLib, "-o", out, "--prober", "oracle", "--oracle-edges", gold, "--oracle-error", "0.3",
		"--oracle-seed", "9", "--budget", "50", "--quiet")
	if _, frontier, _, _ := probeLine(t, r); frontier != 50 {
		t.Errorf("--budget 50: frontier %d", frontier)
	}
}

// probeLine parses the probes line of a build's summary.
func probeLine(t *testing.T, stdout string) (prober string, frontier, ran, failed int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^frontier\s+(\d+) probed by (\S+): (\d+) probes run, (\d+) cached, (\d+) failed$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no probes line in the summary:\n%s", stdout)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return m[2], n(m[1]), n(m[3]), n(m[5])
}
