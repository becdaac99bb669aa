package testlib

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// GoList runs `go list -deps -f format .` for the package in the working directory, with env
// added to the environment, and returns its lines.
func GoList(format string, env ...string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", format, ".")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("testlib: go list -deps: " + err.Error())
	}
	return strings.Fields(string(out)), nil
}

// Deps lists the packages the build of the package in the working directory links, itself
// included, with env added to the environment (GOOS=js, say). It fails tb unless each of want
// is among them: a list without them would check too little.
func Deps(tb testing.TB, env []string, want ...string) []string {
	tb.Helper()
	deps, err := GoList("{{.ImportPath}}", env...)
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(deps, w) {
			tb.Fatalf("go list -deps found %d packages, not %s: %q", len(deps), w, deps)
		}
	}
	return deps
}

// Under returns those of pkgs that are one of prefixes or a package under one.
func Under(pkgs []string, prefixes ...string) []string {
	var out []string
	for _, p := range pkgs {
		for _, pre := range prefixes {
			if p == pre || strings.HasPrefix(p, pre+"/") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
