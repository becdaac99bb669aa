package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The module must stay a pure-Go reactor: no cgo, no model runtime, no network or process
// access. These packages (and any package under them) must not be in its dependency graph.
var forbidden = []string{
	"runtime/cgo",
	"github.com/yalue/onnxruntime_go",
	"net",
	"net/http",
	"os/exec",
	"plugin",
}

// For the module's size: each of these costs tens of KB compressed (fmt and encoding/json
// together about 150 KB, a quarter of the module), and the module links none of them.
var tooBig = []string{"fmt", "encoding/json", "text/template", "html/template"}

func TestReactorDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !contains(deps, "github.com/caskg/caskg/wasm/engine") {
		t.Fatalf("go list -deps found %d packages, not the engine: %q", len(deps), deps)
	}
	for _, p := range deps {
		for _, f := range forbidden {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the reactor depends on %s (%s); the WASM module must not", p, whyDep(t, p))
			}
		}
	}
	for _, p := range tooBig {
		if contains(deps, p) {
			t.Errorf("the reactor links %s (%s); for the module's size it must not", p, whyDep(t, p))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// whyDep names the packages of the reactor's build that import p directly.
func whyDep(t *testing.T, p string) string {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}:{{join .Imports ","}}`, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		return err.Error()
	}
	var by []string
	for _, line := range strings.Split(string(out), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		if contains(strings.Split(imports, ","), p) {
			by = append(by, pkg)
		}
	}
	return "imported by " + strings.Join(by, ", ")
}
