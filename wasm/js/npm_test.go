// Package js_test holds wasm/js's npm package to what it promises: package.json's version is
// engine.Version, and the tarball `make npm` packs installs offline into a fresh project, where a
// plain `import ... from "caskg"` finds its caskg.wasm and answers as the engine does natively.
package js_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/engine"
	"github.com/caskg/caskg/wasm/modbuild"
)

// manifest is what the test reads of package.json.
type manifest struct {
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	Type           string            `json:"type"`
	Types          string            `json:"types"`
	Files          []string          `json:"files"`
	Exports        map[string]any    `json:"exports"`
	Scripts        map[string]string `json:"scripts"`
	Dependencies   map[string]string `json:"dependencies"`
	PeerDeps       map[string]string `json:"peerDependencies"`
	OptionalDeps   map[string]string `json:"optionalDependencies"`
	BundledDeps    any               `json:"bundleDependencies"`
	BundledDepsAlt any               `json:"bundledDependencies"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	data, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	return m
}

// TestManifest holds package.json to the package's rules: caskg's version, an ES module whose
// entry and types exist, the .wasm shipped, and nothing that runs or downloads at install.
func TestManifest(t *testing.T) {
	m := readManifest(t)
	if m.Version != engine.Version {
		t.Errorf("package.json version %q, engine.Version %q: they must agree", m.Version, engine.Version)
	}
	if m.Name != "caskg" || m.Type != "module" || m.Types != "./caskg.d.ts" {
		t.Errorf("name %q, type %q, types %q; want caskg, module, ./caskg.d.ts", m.Name, m.Type, m.Types)
	}
	if len(m.Scripts) != 0 {
		t.Errorf("scripts %v: the package runs nothing at install", m.Scripts)
	}
	if len(m.Dependencies)+len(m.PeerDeps)+len(m.OptionalDeps) != 0 || m.BundledDeps != nil || m.BundledDepsAlt != nil {
		t.Errorf("the package has dependencies; it must have none")
	}
	for _, f := range []string{"caskg.js", "caskg.d.ts", "caskg.wasm"} {
		if !slices.Contains(m.Files, f) {
			t.Errorf("files %q lacks %s", m.Files, f)
		}
	}
	dot, _ := m.Exports["."].(map[string]any)
	if dot["types"] != "./caskg.d.ts" || dot["default"] != "./caskg.js" {
		t.Errorf(`exports["."] = %v; want types ./caskg.d.ts, default ./caskg.js`, m.Exports["."])
	}
	for _, f := range m.Files {
		if f == "caskg.wasm" {
			continue // make npm puts bin/caskg.wasm beside the others
		}
		if _, err := os.Stat(f); err != nil {
			t.Errorf("files names %s: %v", f, err)
		}
	}
}

// tool finds a program on PATH or skips the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not on PATH: the npm package test needs Node.js 20 or newer and npm", name)
	}
	return p
}

func run(t *testing.T, dir string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// npm's cache in the test's own folder: nothing of the user's is read or written.
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(t.TempDir(), "npm-cache"), "npm_config_update_notifier=false")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// query.mjs imports the package by its name from a project that installed it, loads the
// artifact with the package's own module (load(null, …)) and prints what the test compares.
const queryScript = `import { Caskg, moduleURL } from "caskg";
const engine = await Caskg.load(null, new URL("./sample.skg", import.meta.url));
const res = engine.query(process.argv[2], { k: 6 });
console.log(JSON.stringify({ moduleURL: moduleURL.href, version: engine.info().module.version, results: res.results.map((r) => r.name) }));
engine.close();
`

// TestPackageInstalls packs the package as make npm does (package.json's files from wasm/js, a
// freshly built caskg.wasm), installs the tarball offline into a scratch project and queries the
// sample artifact from Node through the package's name, from another working directory.
func TestPackageInstalls(t *testing.T) {
	node, npm := tool(t, "node"), tool(t, "npm")
	if out, err := exec.Command(node, "--version").Output(); err == nil {
		major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
		if n, err := strconv.Atoi(major); err != nil || n < 20 {
			t.Skipf("node %s is too old: the package needs Node.js 20 or newer", out)
		}
	}
	m := readManifest(t)
	tmp := t.TempDir()

	stage := filepath.Join(tmp, "package")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := modbuild.Build(filepath.Join(stage, "caskg.wasm")); err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"package.json"}, m.Files...) {
		if f == "caskg.wasm" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stage, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var packed []struct {
		Filename string `json:"filename"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	out := run(t, stage, npm, "pack", "--json", "--ignore-scripts", "--pack-destination", tmp)
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		t.Fatalf("npm pack --json: %v\n%s", err, out)
	}
	var inTar []string
	for _, f := range packed[0].Files {
		inTar = append(inTar, f.Path)
	}
	slices.Sort(inTar)
	want := append([]string{"package.json"}, m.Files...)
	slices.Sort(want)
	if !slices.Equal(inTar, want) {
		t.Errorf("the tarball holds %q, want %q", inTar, want)
	}
	if wantName := m.Name + "-" + m.Version + ".tgz"; packed[0].Filename != wantName {
		t.Errorf("tarball %s, want %s", packed[0].Filename, wantName)
	}

	proj := filepath.Join(tmp, "project")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"package.json": []byte(`{"name": "scratch", "private": true, "type": "module"}` + "\n"),
		"query.mjs":    []byte(queryScript),
		"sample.skg":   testlib.Sample(t),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(proj, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, proj, npm, "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
		filepath.Join(tmp, packed[0].Filename))

	const task = "heat some egg and put it in the garbage can"
	out = run(t, tmp, node, filepath.Join(proj, "query.mjs"), task)
	var got struct {
		ModuleURL string   `json:"moduleURL"`
		Version   string   `json:"version"`
		Results   []string `json:"results"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("query.mjs printed %q: %v", out, err)
	}
	if wantURL := filepath.ToSlash(filepath.Join(proj, "node_modules", "caskg", "caskg.wasm")); !strings.HasSuffix(got.ModuleURL, wantURL) {
		t.Errorf("moduleURL %s, want the installed package's caskg.wasm (%s)", got.ModuleURL, wantURL)
	}
	if got.Version != engine.Version {
		t.Errorf("the installed module says version %q, want %q", got.Version, engine.Version)
	}

	g := testlib.Decode(t, testlib.Sample(t))
	res, err := engine.New(g).Query(engine.Request{Query: task, K: 6})
	if err != nil {
		t.Fatal(err)
	}
	var native []string
	for _, r := range res.Results {
		native = append(native, r.Name)
	}
	if len(native) != 6 || !slices.Equal(got.Results, native) {
		t.Errorf("from the installed package: %q; natively: %q", got.Results, native)
	}
}
