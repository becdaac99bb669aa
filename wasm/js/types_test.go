package js_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
console.log(res.results.length, url, CaskgError.name);
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
	for name, data := range map[string][]byte{"caskg.d.ts": dts, "use.ts": []byte(useTS)} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, tsc, "--noEmit", "--strict", "--target", "es2022", "--module", "es2022",
		"--moduleResolution", "bundler", "--lib", "es2022", "--types", "node",
		"--typeRoots", filepath.Join(dir, "node_modules", "@types"), "use.ts")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc --lib es2022 --types node: %v\n%s", err, out)
	}
}
