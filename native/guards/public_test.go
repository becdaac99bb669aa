package guards

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The public surface: what another module may import is this module's Go API, kept small. Every
// package outside an internal/ folder is either an API, with a runnable Example and a row of
// README.md's API table, or named in publicOther with the reason it is there and exports
// nothing a program could rely on; anything else belongs under native/internal, wasm/internal or
// graphs/internal. Commands (package main) are not imported and are not counted.

// publicAPI are the packages that are the module's Go API.
var publicAPI = []string{
	"graphs",
	"graphs/errtext",
	"graphs/jsontext",
	"native/serve",
	"wasm/api",
	"wasm/engine",
	"wasm/host",
	"wasm/mcpcore",
	"wasm/modbuild",
	"wasm/service",
}

// A nonAPI is a package outside internal/ that is no API: kit packages are the test kit, held to
// _test.go importers by its wall (rooms); the others must export nothing.
type nonAPI struct {
	kit    bool
	reason string
}

// publicOther are the packages outside internal/ that are no API, and why each is there.
var publicOther = map[string]nonAPI{
	"native/testlib":            {true, "the test kit: the tests of wasm/, graphs/ and playground/ import it, which Go's internal rule would refuse under native/internal"},
	"native/testlib/clustered":  {true, "the test kit's vectors in clusters, for the tests of wasm/engine, which native/testlib imports"},
	"native/testlib/fixture":    {true, "the test kit's part that links no builder"},
	"native/testlib/mcphttp":    {true, "the test kit's MCP over HTTP, for the edge worker's tests"},
	"native/testlib/strictjson": {true, "the test kit's strict JSON, for the tests of graphs"},
	"native/testlib/table":      {true, "the test kit's table runner, for the table tests of every package"},
	"native/guards":             {false, "the repository's checks, as tests"},
	"native/lab":                {false, "the lab's documentation"},
	"playground":                {false, "the page's documentation and its end-to-end test"},
	"wasm/js":                   {false, "the JS module's tests"},
}

// A publicPkg is a package outside internal/ as the checks see it.
type publicPkg struct {
	path     string // relative to the module
	examples int    // runnable examples (with an Output comment) in its tests
	exports  bool   // its non-test files declare an exported name
}

// readmeAPI matches a row of README.md's API table: | `path` | API: ...
var readmeAPI = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| API: ")

// surfaceProblems lists what is wrong with the public packages pkgs and the README's API rows
// readme (package paths): a package neither API nor named in publicOther, an API without a
// runnable example or a README row, a non-API package that exports, a README row or a list
// entry naming no package.
func surfaceProblems(pkgs []publicPkg, readme []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.path] = true
		other, isOther := publicOther[p.path]
		switch {
		case slices.Contains(publicAPI, p.path):
			if p.examples == 0 {
				out = append(out, p.path+": an API package without a runnable Example (a func Example in example_test.go with an // Output: comment)")
			}
			if !slices.Contains(readme, p.path) {
				out = append(out, p.path+": an API package without a row in README.md's API table (| `"+p.path+"` | API: ...)")
			}
		case isOther:
			if !other.kit && p.exports {
				out = append(out, p.path+": exports names but is no API ("+other.reason+"): move what it exports under an internal/ folder")
			}
		default:
			out = append(out, p.path+": a new package outside internal/: put it under an internal/ folder (native/internal, wasm/internal, graphs/internal), "+
				"or make it an API: a runnable Example, a row in README.md's API table and its path in publicAPI (native/guards/public_test.go)")
		}
	}
	for _, r := range readme {
		if !slices.Contains(publicAPI, r) {
			out = append(out, "README.md: the API table names "+r+", which is not in publicAPI")
		}
	}
	for _, p := range publicAPI {
		if !seen[p] {
			out = append(out, p+": in publicAPI but no such package is outside internal/")
		}
	}
	for p := range publicOther {
		if !seen[p] {
			out = append(out, p+": in publicOther but no such package is outside internal/")
		}
	}
	slices.Sort(out)
	return out
}

// TestPublicSurface holds the module's packages outside internal/, in the native build and the
// two WebAssembly builds, to publicAPI and publicOther, and the README's API table to them.
func TestPublicSurface(t *testing.T) {
	requireGo(t)
	dirs := map[string]string{} // path relative to the module: folder
	for _, b := range builds {
		for _, p := range goList(t, modulePath+"/...", b.env...) {
			rel, own := strings.CutPrefix(p.ImportPath, modulePath+"/")
			if p.Name == "main" || !own || slices.Contains(strings.Split(rel, "/"), "internal") {
				continue
			}
			dirs[rel] = p.Dir
		}
	}
	// A control: were go list's answer misread, every check would pass for want of packages.
	for _, want := range []string{"wasm/engine", "native/serve"} {
		if dirs[want] == "" {
			t.Fatalf("go list %s/... did not list %s: %d packages outside internal/", modulePath, want, len(dirs))
		}
	}
	var pkgs []publicPkg
	for rel, dir := range dirs {
		p := publicPkg{path: rel}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f, "_test.go") {
				for _, ex := range doc.Examples(af) {
					if ex.Output != "" || ex.EmptyOutput {
						p.examples++
					}
				}
			} else if ast.FileExports(af) {
				p.exports = true
			}
		}
		pkgs = append(pkgs, p)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range readmeAPI.FindAllStringSubmatch(string(readme), -1) {
		rows = append(rows, m[1])
	}
	for _, p := range surfaceProblems(pkgs, rows) {
		t.Error(p)
	}
}

// TestSurfaceProblems holds the checks to made-up modules, including the ones they must refuse.
func TestSurfaceProblems(t *testing.T) {
	// every is the module as it is meant to be: every API with an example and a README row.
	every := func(change func([]publicPkg) []publicPkg) []publicPkg {
		var pkgs []publicPkg
		for _, p := range publicAPI {
			pkgs = append(pkgs, publicPkg{path: p, examples: 1, exports: true})
		}
		for p, o := range publicOther {
			pkgs = append(pkgs, publicPkg{path: p, exports: o.kit})
		}
		return change(pkgs)
	}
	same := func(pkgs []publicPkg) []publicPkg { return pkgs }
	set := func(path string, f func(*publicPkg)) func([]publicPkg) []publicPkg {
		return func(pkgs []publicPkg) []publicPkg {
			i := slices.IndexFunc(pkgs, func(p publicPkg) bool { return p.path == path })
			f(&pkgs[i])
			return pkgs
		}
	}
	tests := []struct {
		name   string
		pkgs   []publicPkg
		readme []string
		want   []string
	}{
		{"as meant", every(same), publicAPI, nil},
		{"a new public package", every(func(p []publicPkg) []publicPkg { return append(p, publicPkg{path: "native/router", exports: true}) }), publicAPI,
			[]string{"native/router: a new package outside internal/: put it under an internal/ folder (native/internal, wasm/internal, graphs/internal), " +
				"or make it an API: a runnable Example, a row in README.md's API table and its path in publicAPI (native/guards/public_test.go)"}},
		{"an API without an example", every(set("wasm/host", func(p *publicPkg) { p.examples = 0 })), publicAPI,
			[]string{"wasm/host: an API package without a runnable Example (a func Example in example_test.go with an // Output: comment)"}},
		{"an API the README leaves out", every(same), slices.DeleteFunc(slices.Clone(publicAPI), func(p string) bool { return p == "native/serve" }),
			[]string{"native/serve: an API package without a row in README.md's API table (| `native/serve` | API: ...)"}},
		{"the README names a package that is not", every(same), append(slices.Clone(publicAPI), "native/internal/gateway"),
			[]string{"README.md: the API table names native/internal/gateway, which is not in publicAPI"}},
		{"a documentation package exports", every(set("native/lab", func(p *publicPkg) { p.exports = true })), publicAPI,
			[]string{"native/lab: exports names but is no API (the lab's documentation): move what it exports under an internal/ folder"}},
		{"an API moved under internal/", every(func(p []publicPkg) []publicPkg {
			return slices.DeleteFunc(p, func(p publicPkg) bool { return p.path == "wasm/mcpcore" })
		}), publicAPI,
			[]string{"wasm/mcpcore: in publicAPI but no such package is outside internal/"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, surfaceProblems(tc.pkgs, tc.readme)); diff != "" {
				t.Errorf("surfaceProblems (-want +got):\n%s", diff)
			}
		})
	}
}
