package js_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/modbuild"
)

// TestWorkerd runs caskg.js in workerd, a host without import.meta.url that compiles
// WebAssembly only from an import: importing caskg.js must not throw, load without a module
// must say what to pass, and load with the imported module must answer.
func TestWorkerd(t *testing.T) {
	dir := t.TempDir()
	if err := modbuild.Build(filepath.Join(dir, "caskg.wasm")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ from, to string }{{"caskg.js", "caskg.js"}, {"testdata/worker.mjs", "worker.mjs"}, {"testdata/workerd.capnp", "workerd.capnp"}} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sample.skg"), testlib.Sample(t), 0o644); err != nil {
		t.Fatal(err)
	}

	base := testlib.ServeWorker(t, dir, "config")

	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got struct {
		ModuleURL     *string  `json:"moduleURL"`
		WithoutModule string   `json:"withoutModule"`
		Results       []string `json:"results"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("answer %d %s", resp.StatusCode, body)
	}
	if got.ModuleURL != nil {
		t.Errorf("moduleURL %q in workerd, want null (no import.meta.url)", *got.ModuleURL)
	}
	if !strings.HasPrefix(got.WithoutModule, "CaskgError: caskg: module: this host gives modules no URL") {
		t.Errorf("load(null, artifact) in workerd: %q, want the CaskgError saying to pass the module", got.WithoutModule)
	}
	if len(got.Results) != 3 || !slices.Contains(got.Results, "heat-object-in-microwave") {
		t.Errorf("results %q, want 3 with heat-object-in-microwave", got.Results)
	}
}
