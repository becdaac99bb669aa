package guards

import (
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// topLevel is what the repository's top level holds: the build, the module, the front page, the
// pages, CI, the worker's config and the four parts. Anything else belongs in one of them.
var topLevel = map[string]bool{
	"Makefile":      true,
	"go.mod":        true,
	"go.sum":        true,
	"README.md":     true,
	"wrangler.toml": true,
	".gitignore":    true,
	".ci":           true,
	"docs":          true,
	"wasm":          true,
	"native":        true,
	"graphs":        true,
	"playground":    true,
}

// topLevelProblems returns, for the tracked paths given (relative to the repository, slash
// separated), one message per top-level name outside topLevel, saying where such a file belongs.
func topLevelProblems(tracked []string) []string {
	var problems []string
	seen := map[string]bool{}
	for _, p := range tracked {
		name, rest, dir := strings.Cut(p, "/")
		if name == "" || topLevel[name] || seen[name] {
			continue
		}
		seen[name] = true
		kind := "file"
		if dir && rest != "" {
			kind = "directory"
		}
		problems = append(problems, "top level: "+kind+" "+name+" is not one the top level holds: "+belongs(name, dir))
	}
	slices.Sort(problems)
	return problems
}

// belongs says where a top-level name that is not allowed should go.
func belongs(name string, dir bool) string {
	switch ext := strings.ToLower(path.Ext(name)); {
	case dir:
		return "put it under native/ (Go, product and lab), wasm/ (the module, the worker, the npm package), graphs/ or playground/"
	case ext == ".md" || ext == ".svg" || ext == ".png":
		return "pages, reports and their images go in docs/ (lower-case names; link them from README.md or docs/)"
	case ext == ".go":
		return "Go code goes in a package under native/ or wasm/"
	case ext == ".yml" || ext == ".yaml" || ext == ".sh":
		return "CI and its scripts go in .ci/"
	default:
		return "put it under native/, wasm/, graphs/, playground/, docs/ or .ci/, or add it to topLevel in native/guards/layout_test.go if the brief allows it"
	}
}

// TestTopLevel fails on a tracked file or directory at the top level that is not in topLevel.
func TestTopLevel(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("no git checkout to list the tracked files of: %v", err)
	}
	tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(tracked) < 100 {
		t.Fatalf("git ls-files lists %d files; want the repository", len(tracked))
	}
	for _, p := range topLevelProblems(tracked) {
		t.Error(p)
	}
}

// TestTopLevelProblems shows what the layout check flags and what it leaves alone.
func TestTopLevelProblems(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tracked []string
		want    []string
	}{
		{"clean", []string{"Makefile", "go.mod", "go.sum", "README.md", "wrangler.toml", ".gitignore",
			".ci/run", "docs/cli.md", "docs/benchmarks.md", "wasm/engine/engine.go", "native/lab/NOTES.md",
			"graphs/x.json", "playground/index.html"}, nil},
		{"a report at the top", []string{"README.md", "BENCHMARKS.md", "EVALUATION-learning.svg"}, []string{
			"top level: file BENCHMARKS.md is not one the top level holds: pages, reports and their images go in docs/ (lower-case names; link them from README.md or docs/)",
			"top level: file EVALUATION-learning.svg is not one the top level holds: pages, reports and their images go in docs/ (lower-case names; link them from README.md or docs/)",
		}},
		{"a directory, named once", []string{"scripts/a.sh", "scripts/b.sh"}, []string{
			"top level: directory scripts is not one the top level holds: put it under native/ (Go, product and lab), wasm/ (the module, the worker, the npm package), graphs/ or playground/",
		}},
		{"Go and CI", []string{"main.go", "ci.yml"}, []string{
			"top level: file ci.yml is not one the top level holds: CI and its scripts go in .ci/",
			"top level: file main.go is not one the top level holds: Go code goes in a package under native/ or wasm/",
		}},
		{"anything else", []string{"LICENSE"}, []string{
			"top level: file LICENSE is not one the top level holds: put it under native/, wasm/, graphs/, playground/, docs/ or .ci/, or add it to topLevel in native/guards/layout_test.go if the brief allows it",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := topLevelProblems(tc.tracked); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
