package main

import (
	"testing"

	"github.com/caskg/caskg/native/testlib"
)

// The worker is the engine, the API core and the MCP handler on syscall/js: no cgo, no model
// runtime, no process access, nothing of the native side (builder, embedders, LLM clients), and
// none of the packages that made its Go program too large for a 1 MB bundle: net/http (a third
// of it), fmt (syumai/workers' KV package brings it; the worker calls KV through syscall/js),
// net/url (wasm/api parses queries itself) and crypto/sha256 (Go's FIPS module; tokens are
// hashed by wasm/internal/sha256).
func TestWorkerDependencies(t *testing.T) {
	deps := testlib.Deps(t, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "github.com/caskg/caskg/wasm/api",
		"github.com/caskg/caskg/wasm/engine", "github.com/caskg/caskg/wasm/internal/wire", "github.com/caskg/caskg/wasm/mcpcore",
		"syscall/js")
	for _, p := range testlib.Under(deps, "runtime/cgo", "github.com/yalue/onnxruntime_go", "os/exec", "plugin",
		"github.com/caskg/caskg/native", "encoding/json", "net/http", "net/url", "fmt", "crypto/sha256", "crypto/internal/fips140") {
		t.Errorf("the worker depends on %s; it must not", p)
	}
}
