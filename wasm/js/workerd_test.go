package js_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/modbuild"
	"github.com/caskg/caskg/wasm/testlib"
)

// caskg.js in workerd, Cloudflare's runtime, where import.meta.url is undefined and no module
// may be compiled from bytes: a Worker imports caskg.js, caskg.wasm as a module and the sample
// artifact as data, loads the engine once and answers queries as the engine does natively.
// moduleURL is null there, and load without a module says to pass one.
func TestWorkerd(t *testing.T) {
	dir := t.TempDir()
	if err := modbuild.Build(filepath.Join(dir, "caskg.wasm")); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("caskg.js")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"caskg.js":   string(js),
		"sample.skg": string(testlib.Sample(t)),
		"worker.mjs": `import { Caskg, CaskgError, moduleURL } from "./caskg.js";
import wasm from "./caskg.wasm";
import artifact from "./sample.skg";

let engine;
export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams.get("q");
    if (q === null) {
      try {
        await Caskg.load(null, artifact);
        return Response.json({ moduleURL, error: null });
      } catch (err) {
        return Response.json({ moduleURL, error: err instanceof CaskgError ? err.message : String(err) });
      }
    }
    engine ??= await Caskg.load(wasm, artifact);
    return Response.json(engine.query(q, { k: 5 }));
  },
};
`,
		"workerd.capnp": `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "caskg.js", esModule = embed "caskg.js"),
    (name = "caskg.wasm", wasm = embed "caskg.wasm"),
    (name = "sample.skg", data = embed "sample.skg"),
  ],
  compatibilityDate = "2026-11-01",
);
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := testlib.ServeWorker(t, dir, "config")
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(q string, v any) {
		t.Helper()
		target := base + "/"
		if q != "" {
			target += "?q=" + url.QueryEscape(q)
		}
		resp, err := client.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, v) != nil {
			t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
		}
	}

	var noModule struct {
		ModuleURL *string
		Error     string
	}
	get("", &noModule)
	if noModule.ModuleURL != nil || !strings.Contains(noModule.Error, "pass the module") {
		t.Errorf("without a module: moduleURL %v, error %q; want null and an error saying to pass the module", noModule.ModuleURL, noModule.Error)
	}

	g, err := graphs.Decode(testlib.Sample(t))
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(g)
	for _, q := range []string{"heat some egg and put it in the garbage can", "find out whether a metal fork conducts electricity"} {
		var got struct{ Results []struct{ Name string } }
		get(q, &got)
		want, err := eng.Query(engine.Request{Query: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		var names, wantNames []string
		for _, r := range got.Results {
			names = append(names, r.Name)
		}
		for _, r := range want.Results {
			wantNames = append(wantNames, r.Name)
		}
		if len(names) == 0 || !slices.Equal(names, wantNames) {
			t.Errorf("%q: workerd ranks %q, the engine natively %q", q, names, wantNames)
		}
	}
}
