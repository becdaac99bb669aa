package main

import (
	"testing"

	"github.com/caskg/caskg/native/testlib"
)

// The worker is the engine and the API core behind syumai/workers' KV binding: no cgo, no model
// runtime, no process access, nothing of the native side (builder, embedders, LLM clients), and
// no net/http (a third of the Go program's size; the API core takes requests as plain values).
func TestWorkerDependencies(t *testing.T) {
	deps := testlib.Deps(t, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "github.com/caskg/caskg/wasm/api",
		"github.com/caskg/caskg/wasm/engine", "github.com/caskg/caskg/wasm/internal/wire", "github.com/caskg/caskg/wasm/mcpcore",
		"github.com/syumai/workers/cloudflare/kv")
	for _, p := range testlib.Under(deps, "runtime/cgo", "github.com/yalue/onnxruntime_go", "os/exec", "plugin",
		"github.com/caskg/caskg/native", "encoding/json", "net/http") {
		t.Errorf("the worker depends on %s; it must not", p)
	}
}
