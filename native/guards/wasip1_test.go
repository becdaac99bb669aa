package guards

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// wasip1 is the environment of the WASI module (make wasm).
var wasip1 = []string{"GOOS=wasip1", "GOARCH=wasm"}

// modulePackages are the packages of this module that the WASI reactor links, the reactor
// included: what runs as WebAssembly, found from the build rather than kept by hand.
func modulePackages(t *testing.T) []string {
	t.Helper()
	const reactor = modulePath + "/wasm/reactor"
	var own []string
	for _, p := range goListDeps(t, reactor, false, wasip1...) {
		if p.Module != nil && p.Module.Path == modulePath {
			own = append(own, p.ImportPath)
		}
	}
	return own
}

// TestTestsBuildForWASI holds the tests of every package the WASI module is made of to compile
// for GOOS=wasip1, so that they can run where the code runs: a test that reaches for a host-only
// helper (an unexported function of a !wasm file, say) fails here rather than on the first
// attempt to run it under a WebAssembly runtime.
func TestTestsBuildForWASI(t *testing.T) {
	requireGo(t)
	pkgs := modulePackages(t)
	// The module is at least these; if the list came back without them, the check would be
	// checking too little.
	for _, want := range []string{modulePath + "/graphs", modulePath + "/wasm/engine", modulePath + "/wasm/reactor"} {
		if !slices.Contains(pkgs, want) {
			t.Fatalf("the WASI reactor's own packages %q lack %s", pkgs, want)
		}
	}
	// -o names a directory: one test binary per package that has tests.
	args := append([]string{"test", "-c", "-o", t.TempDir() + string(os.PathSeparator)}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), wasip1...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("GOOS=wasip1 GOARCH=wasm go test -c %s: %v\n%s", strings.Join(pkgs, " "), err, out.Bytes())
	}
}
