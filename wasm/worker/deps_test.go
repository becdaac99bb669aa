package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The worker is the engine behind syumai/workers: no cgo, no model runtime, no process access
// and nothing of the native side (builder, embedders, LLM clients) may reach its build.
func TestWorkerDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"github.com/caskg/caskg/wasm/api", "github.com/caskg/caskg/wasm/engine", "github.com/caskg/caskg/wasm/internal/wire", "github.com/syumai/workers"} {
		if !contains(deps, want) {
			t.Fatalf("go list -deps found %d packages, not %s: %q", len(deps), want, deps)
		}
	}
	for _, p := range deps {
		for _, f := range []string{"runtime/cgo", "github.com/yalue/onnxruntime_go", "os/exec", "plugin",
			"github.com/caskg/caskg/native", "encoding/json"} {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the worker depends on %s; it must not", p)
			}
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
