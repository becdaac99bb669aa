package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
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

// wasip1 is the environment of the module's build (make wasm).
var wasip1 = []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=1"}

func TestReactorDependencies(t *testing.T) {
	deps := testlib.Deps(t, wasip1, "github.com/caskg/caskg/wasm/engine")
	if len(deps) < 10 {
		t.Fatalf("go list -deps found %d packages: %q", len(deps), deps)
	}
	for _, p := range testlib.Under(deps, forbidden...) {
		t.Errorf("the reactor depends on %s (%s); the WASM module must not", p, whyDep(p))
	}
	for _, p := range tooBig {
		if slices.Contains(deps, p) {
			t.Errorf("the reactor links %s (%s); for the module's size it must not", p, whyDep(p))
		}
	}
}

// whyDep names the packages of the reactor's build that import p directly.
func whyDep(p string) string {
	lines, err := testlib.GoList(`{{.ImportPath}}:{{join .Imports ","}}`, wasip1...)
	if err != nil {
		return err.Error()
	}
	var by []string
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, ":")
		if slices.Contains(strings.Split(imports, ","), p) {
			by = append(by, pkg)
		}
	}
	return "imported by " + strings.Join(by, ", ")
}
