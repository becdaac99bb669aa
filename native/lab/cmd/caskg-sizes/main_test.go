package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/lab/internal/mdspan"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
	"github.com/caskg/caskg/wasm/modbuild"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testlib.RemoveWorkerBundle()
	os.Exit(code)
}

const root = "../../../.."

// TestDocFigures builds the module as make wasm does and the worker bundle as make worker does
// (the sample as a static asset), and holds every size figure of every Markdown file of the
// repository to them. Each file that holds a figure must be one the Makefile's SIZE_DOCS names,
// so that make wasm and make worker rewrite it, and together the files must state every figure
// those two jobs write. The figures are exact for one Go release (the build is byte-for-byte
// repeatable with one); under another toolchain the test says so and skips.
func TestDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module and the worker")
	}
	docs := figureDocs(t, root)
	listed, err := sizeDocs(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for doc, figs := range docs {
		if !slices.Contains(listed, doc) {
			t.Errorf("%s holds size figures but the Makefile's SIZE_DOCS does not name it: make wasm and make worker would not rewrite them", doc)
		}
		for _, f := range figs {
			if f.Name == "go" && f.Value != runtime.Version() {
				t.Skipf("%s states the sizes of a %s build; this is %s, whose module differs: make wasm and make worker rewrite them",
					doc, f.Value, runtime.Version())
			}
		}
	}
	for _, doc := range listed {
		if _, ok := docs[doc]; !ok {
			t.Errorf("the Makefile's SIZE_DOCS names %s, which holds no size figure", doc)
		}
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
	worker, err := workerFigures(sizes)
	if err != nil {
		t.Fatal(err)
	}
	for n, v := range worker {
		want[n] = v
	}

	seen := map[string]bool{}
	for doc, figs := range docs {
		for _, f := range figs {
			seen[f.Name] = true
			switch w, ok := want[f.Name]; {
			case ok && f.Value != w:
				t.Errorf("%s: figure %s says %s; the build gives %s (%s)", doc, f.Name, f.Value, w, writer(f.Name))
			case !ok && !slices.Contains(libraryNames, f.Name):
				t.Errorf("%s: figure %s is none that caskg-sizes writes", doc, f.Name)
			}
		}
	}
	for _, n := range checkedNames {
		if !seen[n] {
			t.Errorf("no page states the figure %s", n)
		}
	}
}

// figureDocs returns the size figures of every Markdown file of the repository at root that
// holds any, by path relative to root.
func figureDocs(t *testing.T, root string) map[string][]mdspan.Figure {
	docs := map[string][]mdspan.Figure{}
	for _, rel := range fixture.MarkdownFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		figs, err := mdspan.Figures(text)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if len(figs) > 0 {
			docs[rel] = figs
		}
	}
	return docs
}

// sizeDocs returns the files the Makefile's SIZE_DOCS variable names.
func sizeDocs(makefile string) ([]string, error) {
	text, err := os.ReadFile(makefile)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "SIZE_DOCS :="); ok {
			return strings.Fields(v), nil
		}
	}
	return nil, fmt.Errorf("%s: no SIZE_DOCS := line", makefile)
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
		{"not a module", []string{"module", notWasm, "docs/x.md"}, "x.wasm: not a WebAssembly module"},
		{"missing sizes", []string{"worker", filepath.Join(dir, "none.json"), "docs/x.md"}, "bundlesize -json writes it"},
		{"embedded bundle", []string{"worker", embedded, "docs/x.md"}, "not embedded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := run(tc.args); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("run(%q) = %v, want an error holding %q", tc.args, err, tc.err)
			}
		})
	}
}
