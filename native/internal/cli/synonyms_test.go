package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynonymsFlag: caskg build --synonyms makes a query in the owner's word find the skill
// written in another; caskg update keeps the rules from the build state without the flag, and
// drops them with an empty file; a bad file is refused naming its line and column.
func TestSynonymsFlag(t *testing.T) {
	dir := t.TempDir()
	lib := "../builder/testdata/aliases"
	syn := filepath.Join(dir, "syn.txt")
	bad := filepath.Join(dir, "bad.txt")
	empty := filepath.Join(dir, "empty.txt")
	runs := filepath.Join(dir, "runs.jsonl")
	for path, text := range map[string]string{syn: "# ours\nkubernetes, minikube\n", bad: "kubernetes, minikube\ngizmo =>\n", empty: "",
		runs: `{"id":"1","skills":["helm-package","kubernetes-rollout"]}` + "\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := func(artifact string) string {
		r := mustRun(t, "query", artifact, "minikube file", "--json")
		i := strings.Index(r.stdout, `"name":"`)
		if i < 0 {
			t.Fatalf("no result: %s", r.stdout)
		}
		name, _, _ := strings.Cut(r.stdout[i+len(`"name":"`):], `"`)
		return name
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	mustRun(t, "build", lib, "-o", out("plain.skg"), "--quiet")
	mustRun(t, "build", lib, "-o", out("syn.skg"), "--quiet", "--state", "--synonyms", syn)
	mustRun(t, "update", out("syn.skg"), "--traces", runs, "-o", out("kept.skg"), "--quiet")
	mustRun(t, "update", out("syn.skg"), "--traces", runs, "-o", out("dropped.skg"), "--quiet", "--synonyms", empty)
	for _, c := range []struct {
		artifact string
		found    bool
	}{{"plain.skg", false}, {"syn.skg", true}, {"kept.skg", true}, {"dropped.skg", false}} {
		if got := first(out(c.artifact)); (got == "kubernetes-rollout") != c.found {
			t.Errorf("%s: first %s, found kubernetes-rollout %v", c.artifact, got, c.found)
		}
	}
	r := run(t, "build", lib, "-o", out("bad.skg"), "--synonyms", bad)
	if r.code != 1 || !strings.Contains(r.stderr, bad+`:2:9: no term after "=>"`) {
		t.Errorf("bad synonyms: exit %d, stderr %q", r.code, r.stderr)
	}
}
