package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectLearned builds the sample with runs, trusted and reported, and lists the edges
// learned from use: a pair two reporters agree on and a pair trusted runs used are learned, with
// their reporters; a pair one reporter alone used is not, and is counted as such. Without a build
// state, or with another artifact's, inspect says so.
func TestInspectLearned(t *testing.T) {
	dir := t.TempDir()
	const src, dst = "sharpen-kitchen-knife", "water-lawn-with-sprinkler"
	runs := strings.Join([]string{
		`{"id":"t1","skills":["go-to-location","pick-up-object"]}`,
		`{"id":"t2","skills":["go-to-location","pick-up-object"]}`,
		`{"id":"fb-1","skills":["` + src + `","` + dst + `"],"source":"token:alice"}`,
		`{"id":"fb-2","skills":["` + src + `","` + dst + `"],"source":"token:bob"}`,
		`{"id":"fb-3","skills":["` + dst + `"],"outcome":"failure","source":"token:bob"}`,
		`{"id":"fb-4","skills":["find-lamp","turn-on-lamp"],"source":"token:mallory"}`,
		`{"id":"fb-5","skills":["find-lamp","turn-on-lamp"],"source":"token:mallory"}`,
	}, "\n") + "\n"
	traces := filepath.Join(dir, "runs.jsonl")
	if err := os.WriteFile(traces, []byte(runs), 0o644); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "lib.skg")
	mustRun(t, "build", sampleLib, "--traces", traces, "--state", "-o", art)

	r := mustRun(t, "inspect", art, "--learned", "--json")
	var rep learnedReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	byPair := map[string]learnedEdge{}
	for _, l := range rep.Learned {
		byPair[l.Source+" → "+l.Target] = l
	}
	reported, ok := byPair[src+" → "+dst]
	if !ok || reported.Runs != 2 || reported.Distinct != 2 || reported.Trusted != 0 || reported.Failed != 1 ||
		strings.Join(reported.Reporters, ",") != "token:alice,token:bob" || reported.State != "confirmed" {
		t.Errorf("%s → %s: %+v (present %v), want 2 runs of 2 reporters, 1 failed, confirmed", src, dst, reported, ok)
	}
	trusted, ok := byPair["go-to-location → pick-up-object"]
	if !ok || trusted.Runs != 2 || trusted.Trusted != 2 || trusted.Distinct != 0 {
		t.Errorf("go-to-location → pick-up-object: %+v (present %v), want 2 trusted runs", trusted, ok)
	}
	for pair, l := range byPair {
		if strings.Contains(strings.Join(l.Reporters, ","), "mallory") {
			t.Errorf("%s learned from mallory alone: %+v", pair, l)
		}
	}
	if rep.Uncounted != 1 || rep.MinReporters != 2 {
		t.Errorf("uncounted pairs %d (min reporters %d), want 1 (2)", rep.Uncounted, rep.MinReporters)
	}

	r = mustRun(t, "inspect", art, "--learned")
	for _, want := range []string{"edges learned from use (evidence from the build state " + art + ".state; the artifact keeps none)",
		src + " → " + dst, "2: token:alice, token:bob", "\n1 pair used together only in runs of fewer than 2 reporters counts for nothing"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect --learned lacks %q:\n%s", want, r.stdout)
		}
	}

	bare := filepath.Join(dir, "bare.skg")
	mustRun(t, "build", sampleLib, "-o", bare)
	if r := run(t, "inspect", bare, "--learned"); r.code != 1 || !strings.Contains(r.stderr, "no build state "+bare+".state: the artifact keeps no evidence of use") {
		t.Errorf("without a state: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, "inspect", bare, "--learned", "--state", art+".state"); r.code != 1 || !strings.Contains(r.stderr, "belongs to another artifact") {
		t.Errorf("another artifact's state: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, "inspect", bare, "--state", art+".state"); r.code != 2 || !strings.Contains(r.stderr, "--state needs --learned") {
		t.Errorf("--state alone: exit %d, stderr %q", r.code, r.stderr)
	}
}
