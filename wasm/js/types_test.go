package js_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// use.ts uses the declarations as a Node or workerd project does; tsc must accept it with
// the ES2022 lib and Node's types only, no DOM.
const useTS = `import { Caskg, CaskgError, moduleURL, type QueryResponse } from "./caskg.js";

const engine: Caskg = await Caskg.load(null, "./skills.skg");
const res: QueryResponse = engine.query("heat an egg", { k: 3 });
const url: URL | null = moduleURL;
const bytes = new Uint8Array(await (await fetch("https://example.com/skills.skg")).arrayBuffer());
await Caskg.load(await Caskg.compile(bytes), new Response(bytes));
console.log(res.results.length, res.match, res.results[0]?.match, url, CaskgError.name);
engine.query("heat an egg", { min_score: 0.4, no_memory: true });
`

// misspeltTS passes an option QueryOptions does not have: tsc --strict must refuse it.
const misspeltTS = `import { Caskg } from "./caskg.js";

const engine: Caskg = await Caskg.load(null, "./skills.skg");
engine.query("heat an egg", { top_k: 3 });
`

// TestTypesWithoutDOM compiles caskg.d.ts as tsc --lib es2022 --types node does, with the
// TypeScript and @types/node make tsc installs (CASKG_TSC; skipped outside make only when
// .cache/tsc is absent).
func TestTypesWithoutDOM(t *testing.T) {
	dir := os.Getenv("CASKG_TSC")
	if dir == "" {
		dir, _ = filepath.Abs("../../.cache/tsc")
		if _, err := os.Stat(dir); err != nil {
			t.Skip("TypeScript not installed (make tsc installs it into .cache/tsc; make test sets CASKG_TSC)")
		}
	}
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("CASKG_TSC=%s: no TypeScript there (%v); run make tsc", dir, err)
	}
	node := tool(t, "node")
	tmp := t.TempDir()
	dts, err := os.ReadFile("caskg.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"caskg.d.ts": dts, "use.ts": []byte(useTS), "misspelt.ts": []byte(misspeltTS)} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tscRun := func(file string) ([]byte, error) {
		cmd := exec.Command(node, tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "es2022",
			"--moduleResolution", "bundler", "--lib", "es2022", "--types", "node",
			"--typeRoots", filepath.Join(dir, "node_modules", "@types"), file)
		cmd.Dir = tmp
		return cmd.CombinedOutput()
	}
	if out, err := tscRun("use.ts"); err != nil {
		t.Fatalf("tsc --lib es2022 --types node: %v\n%s", err, out)
	}
	// A misspelt option is a compile error, not an option the engine refuses at run time.
	if out, err := tscRun("misspelt.ts"); err == nil || !strings.Contains(string(out), "'top_k' does not exist in type 'QueryOptions'") {
		t.Errorf("tsc accepted an option QueryOptions lacks (%v):\n%s", err, out)
	}
}
