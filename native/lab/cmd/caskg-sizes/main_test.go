package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/modbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testlib.RemoveWorkerBundle()
	os.Exit(code)
}

const root = "../../../.."

// TestDocFigures builds the module as make wasm does and the worker bundle as make worker does
// (the sample as a static asset), and holds every size figure of README.md and BENCHMARKS.md to
// them. The figures are exact for one Go release (the build is byte-for-byte repeatable with
// one); under another toolchain the test says so and skips.
func TestDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module and the worker")
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "caskg.wasm")
	if err := modbuild.Build(wasm); err != nil {
		t.Fatal(err)
	}
	want, err := moduleFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	sizes := filepath.Join(dir, "sizes.json")
	cmd := exec.Command("go", "run", "./wasm/worker/bundlesize", "-json", sizes, testlib.WorkerBundle(t))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bundlesize: %v\n%s", err, out)
	}
	b, err := readBundle(sizes)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := workerFigures(b)
	if err != nil {
		t.Fatal(err)
	}
	for n, v := range worker {
		want[n] = v
	}

	for _, doc := range []string{"README.md", "BENCHMARKS.md"} {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		figs, err := mdspan.Figures(text)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, f := range figs {
			if f.Name == "go" && f.Value != runtime.Version() {
				t.Skipf("%s states the sizes of a %s build; this is %s, whose module differs: make wasm and make worker rewrite them",
					doc, f.Value, runtime.Version())
			}
		}
		seen := map[string]bool{}
		for _, f := range figs {
			seen[f.Name] = true
			switch w, ok := want[f.Name]; {
			case ok && f.Value != w:
				t.Errorf("%s: figure %s says %s; the build gives %s (%s)", doc, f.Name, f.Value, w, writer(f.Name))
			case !ok && !slices.Contains(libraryNames, f.Name):
				t.Errorf("%s: figure %s is none that caskg-sizes writes", doc, f.Name)
			}
		}
		if doc == "README.md" {
			for _, n := range checkedNames {
				if !seen[n] {
					t.Errorf("README.md lacks the figure %s", n)
				}
			}
		}
	}
}

func writer(name string) string {
	if strings.HasPrefix(name, "worker-") {
		return "make worker rewrites it"
	}
	return "make wasm rewrites it"
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	notWasm := filepath.Join(dir, "x.wasm")
	os.WriteFile(notWasm, []byte("hello"), 0o644)
	embedded := filepath.Join(dir, "embedded.json")
	os.WriteFile(embedded, []byte(`{"Modules":[{"Name":"app.wasm","Raw":10,"Gzip":5}],"Raw":10,"Gzip":5,"Asset":0}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"no args", nil, "usage: caskg-sizes"},
		{"unknown job", []string{"sizes", "a", "b"}, "usage: caskg-sizes"},
		{"not a module", []string{"module", notWasm, "README.md"}, "x.wasm: not a WebAssembly module"},
		{"missing sizes", []string{"worker", filepath.Join(dir, "none.json"), "README.md"}, "bundlesize -json writes it"},
		{"embedded bundle", []string{"worker", embedded, "README.md"}, "not embedded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(tc.args); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("run(%q) = %v, want an error holding %q", tc.args, err, tc.err)
			}
		})
	}
}
