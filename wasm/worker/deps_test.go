package main

import (
	"testing"

	"github.com/caskg/caskg/wasm/testlib"
)

// The worker is the engine behind syumai/workers: no cgo, no model runtime, no process access
// and nothing of the native side (builder, embedders, LLM clients) may reach its build.
func TestWorkerDependencies(t *testing.T) {
	deps := testlib.Deps(t, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "github.com/caskg/caskg/wasm/api",
		"github.com/caskg/caskg/wasm/engine", "github.com/caskg/caskg/wasm/internal/wire", "github.com/syumai/workers")
	for _, p := range testlib.Under(deps, "runtime/cgo", "github.com/yalue/onnxruntime_go", "os/exec", "plugin",
		"github.com/caskg/caskg/native", "encoding/json") {
		t.Errorf("the worker depends on %s; it must not", p)
	}
}
