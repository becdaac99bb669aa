package guards

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// modulePath is this module's path: the packages under it are its own.
const modulePath = "github.com/caskg/caskg"

// A pkg is one package of a build as `go list -deps -json` describes it.
type pkg struct {
	Name       string
	Dir        string
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	CgoFiles   []string
	Imports    []string
}

// hostStd are the standard packages (each with the packages under it) that belong to a host:
// files, environment and processes (os), network, plugins, cgo. The artifact format and the
// engine are handed bytes and return values ("the engine knows nothing about its host"); a host
// concern that reaches them is a layering bug. fmt and log bring os, so they are out too.
// syscall/js is a host's as well, but on GOOS=js the standard library reaches it itself (time
// imports it), so only an own package importing it is refused.
var hostStd = []string{"net", "os", "plugin", "runtime/cgo"}

// A layer is what a package may reach, transitively: the standard library less hostStd, and
// the module's own packages under the own prefixes (paths relative to the module), each held
// to the same rule. Nothing else: no other module, and no cgo in an own package. Own packages
// are not named one by one, so a new stdlib-only package under an allowed prefix passes.
type layer struct {
	own []string
	// modules are other modules the layer may reach (with every package of theirs).
	modules []string
}

var (
	// graphsLayer is the rule "graphs: standard library only": its own subpackages are
	// part of it, nothing above it (wasm, native) is.
	graphsLayer = layer{own: []string{"graphs"}}
	// engineLayer is "engine: stdlib + graphs": also the shared stdlib-only packages under
	// wasm/internal. Levenshtein is the engine's own (levenshtein.go), so no other module.
	engineLayer = layer{own: []string{"graphs", "wasm/engine", "wasm/internal"}}
	// serviceLayer is "the service layer below the transports": the engine's layer and
	// wasm/service, so no transport (net/http, the MCP SDK, wasm/api, wasm/mcpcore) and no
	// host's standard package. The one other module is the edit distance the name
	// suggestions rank by.
	serviceLayer = layer{own: []string{"graphs", "wasm/engine", "wasm/internal", "wasm/service"},
		modules: []string{"github.com/agnivade/levenshtein"}}
)

// violations lists what in deps, the build of root and the packages under it, the layer does not
// allow, each as the import chain from root (or a package under it) that brings it in and the
// reason, sorted.
func (l layer) violations(root string, deps []pkg) []string {
	byPath := make(map[string]*pkg, len(deps))
	// parent is each package's importer on a shortest chain from root or a package under it.
	parent := map[string]string{}
	var queue []string
	for i, p := range deps {
		byPath[p.ImportPath] = &deps[i]
		if under(p.ImportPath, []string{root}) {
			parent[p.ImportPath] = ""
			queue = append(queue, p.ImportPath)
		}
	}
	for ; len(queue) > 0; queue = queue[1:] {
		if p := byPath[queue[0]]; p != nil {
			for _, imp := range p.Imports {
				if imp == "C" {
					imp = "runtime/cgo" // what the go command links for it
				}
				if _, seen := parent[imp]; !seen {
					parent[imp] = queue[0]
					queue = append(queue, imp)
				}
			}
		}
	}
	chain := func(p string) string {
		var c []string
		for ; p != ""; p = parent[p] {
			c = append(c, p)
		}
		slices.Reverse(c)
		return strings.Join(c, " → ")
	}
	var out []string
	for _, p := range deps {
		if reason := l.refuse(p); reason != "" {
			out = append(out, chain(p.ImportPath)+": "+reason)
		}
	}
	slices.Sort(out)
	return out
}

// refuse says why the layer does not allow p, or "" if it does.
func (l layer) refuse(p pkg) string {
	switch {
	case p.Standard:
		if under(p.ImportPath, hostStd) {
			return "a host's standard package"
		}
		return ""
	case p.Module != nil && slices.Contains(l.modules, p.Module.Path):
		return ""
	case p.Module == nil || p.Module.Path != modulePath:
		return "neither the standard library nor this module"
	case len(p.CgoFiles) > 0:
		return "cgo"
	case slices.Contains(p.Imports, "syscall/js"):
		return "imports syscall/js"
	case !under(strings.TrimPrefix(p.ImportPath, modulePath+"/"), l.own):
		return "outside " + strings.Join(l.own, ", ") + " of this module"
	}
	return ""
}

// under reports whether path is one of prefixes or a package under one.
func under(path string, prefixes []string) bool {
	for _, pre := range prefixes {
		if path == pre || strings.HasPrefix(path, pre+"/") {
			return true
		}
	}
	return false
}

// goListDeps runs `go list -deps` for the package root and, with all, the packages under it, in
// the environment with env added.
func goListDeps(t *testing.T, root string, all bool, env ...string) []pkg {
	t.Helper()
	pattern := root
	if all {
		pattern += "/..."
	}
	deps := goList(t, pattern, env...)
	if !slices.ContainsFunc(deps, func(p pkg) bool { return p.ImportPath == root }) {
		t.Fatalf("go list -deps %s did not list %s itself: %d packages", pattern, root, len(deps))
	}
	return deps
}

// goList runs `go list -deps` for pattern in the environment with env added.
func goList(t *testing.T, pattern string, env ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=Name,Dir,ImportPath,Standard,Module,CgoFiles,Imports", pattern)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, stderr.Bytes())
	}
	var deps []pkg
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -deps %s: %v", pattern, err)
		}
		deps = append(deps, p)
	}
	return deps
}

// requireGo skips the test when the go command is not there to ask (as in a test binary run
// under a WebAssembly runtime).
func requireGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command: ", err)
	}
}

// builds are the environments the layers are checked in: the native build with cgo on (so that
// cgo shows), the WASI reactor's and the edge worker's. Build tags may change imports per
// platform.
var builds = []struct {
	name string
	env  []string
}{
	{"native", []string{"CGO_ENABLED=1"}},
	{"wasip1", []string{"GOOS=wasip1", "GOARCH=wasm"}},
	{"js", []string{"GOOS=js", "GOARCH=wasm"}},
}

func TestLayers(t *testing.T) {
	requireGo(t)
	tests := []struct {
		name  string
		pkg   string // checked with every package under it
		layer layer
		// want is a string one of the violations must contain; "" means there must be none.
		want string
	}{
		{"graphs", modulePath + "/graphs", graphsLayer, ""},
		{"engine", modulePath + "/wasm/engine", engineLayer, ""},
		{"service", modulePath + "/wasm/service", serviceLayer, ""},
		// A control: the wazero host is no part of the engine's layer. Were go list's answer
		// misread, the rows above would pass for want of anything to refuse; this one fails.
		{"control: the wazero host", modulePath + "/wasm/host", engineLayer, "github.com/tetratelabs/wazero"},
		{"control: the HTTP API", modulePath + "/wasm/api", serviceLayer, "wasm/api: outside graphs, wasm/engine, wasm/internal, wasm/service"},
	}
	for _, tc := range tests {
		for _, b := range builds {
			t.Run(tc.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				got := tc.layer.violations(tc.pkg, goListDeps(t, tc.pkg, true, b.env...))
				switch {
				case tc.want == "" && len(got) > 0:
					t.Errorf("%s imports what its layer must not:\n%s", tc.pkg, strings.Join(got, "\n"))
				case tc.want != "" && !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, tc.want) }):
					t.Errorf("%s: no violation names %s; got %q", tc.pkg, tc.want, got)
				}
			})
		}
	}
}

// TestLayerViolations holds the rule to made-up builds, including the ones it must refuse.
func TestLayerViolations(t *testing.T) {
	own := func(path string, imports ...string) pkg {
		return pkg{ImportPath: modulePath + "/" + path, Module: &struct{ Path string }{modulePath}, Imports: imports}
	}
	std := func(path string, imports ...string) pkg {
		return pkg{ImportPath: path, Standard: true, Imports: imports}
	}
	const (
		graphs   = modulePath + "/graphs"
		jsontext = modulePath + "/graphs/jsontext"
		engine   = modulePath + "/wasm/engine"
	)
	cgo := own("graphs/fast", "C")
	cgo.CgoFiles = []string{"fast.go"}
	tests := []struct {
		name  string
		root  string
		layer layer
		deps  []pkg
		want  []string
	}{
		{
			name: "standard library only", root: graphs, layer: graphsLayer,
			deps: []pkg{std("errors"), std("strconv", "errors"), own("graphs", "strconv")},
		},
		{
			name: "an own stdlib-only subpackage", root: engine, layer: engineLayer,
			deps: []pkg{std("strconv"), own("graphs/jsontext", "strconv"), own("graphs", "graphs/jsontext"),
				own("wasm/internal/errtext"), own("wasm/engine", modulePath+"/graphs", modulePath+"/wasm/internal/errtext")},
		},
		{
			name: "another module, through own packages", root: engine, layer: engineLayer,
			deps: []pkg{
				{ImportPath: "github.com/x/y", Module: &struct{ Path string }{"github.com/x/y"}},
				own("graphs/jsontext", "github.com/x/y"), own("graphs", jsontext), own("wasm/engine", graphs),
			},
			want: []string{engine + " → " + graphs + " → " + jsontext + " → github.com/x/y: neither the standard library nor this module"},
		},
		{
			name: "a module the layer allows, not another", root: modulePath + "/wasm/service", layer: serviceLayer,
			deps: []pkg{
				{ImportPath: "github.com/agnivade/levenshtein", Module: &struct{ Path string }{"github.com/agnivade/levenshtein"}},
				{ImportPath: "github.com/x/y", Module: &struct{ Path string }{"github.com/x/y"}},
				own("wasm/service", "github.com/agnivade/levenshtein", "github.com/x/y"),
			},
			want: []string{modulePath + "/wasm/service → github.com/x/y: neither the standard library nor this module"},
		},
		{
			name: "a package under the root is checked though the root does not import it", root: graphs, layer: graphsLayer,
			deps: []pkg{std("os"), own("graphs"), own("graphs/load", "os")},
			want: []string{graphs + "/load → os: a host's standard package"},
		},
		{
			name: "a package of no module (GOPATH, vendor)", root: graphs, layer: graphsLayer,
			deps: []pkg{{ImportPath: "golang.org/x/text"}, own("graphs", "golang.org/x/text")},
			want: []string{graphs + " → golang.org/x/text: neither the standard library nor this module"},
		},
		{
			name: "a host's standard packages", root: engine, layer: engineLayer,
			deps: []pkg{std("net"), std("net/http", "net"), std("os/exec"), std("strings"),
				own("wasm/engine", "strings", "net/http", "os/exec")},
			want: []string{
				engine + " → net/http → net: a host's standard package",
				engine + " → net/http: a host's standard package",
				engine + " → os/exec: a host's standard package",
			},
		},
		{
			name: "syscall/js from the standard library, not from the engine", root: engine, layer: engineLayer,
			deps: []pkg{std("syscall/js"), std("time", "syscall/js"), own("wasm/engine/clock", "time", "syscall/js"),
				own("wasm/engine", "time", modulePath+"/wasm/engine/clock")},
			want: []string{modulePath + "/wasm/engine/clock: imports syscall/js"},
		},
		{
			name: "cgo", root: graphs, layer: graphsLayer,
			deps: []pkg{std("runtime/cgo"), cgo, own("graphs", modulePath+"/graphs/fast")},
			want: []string{
				modulePath + "/graphs/fast → runtime/cgo: a host's standard package",
				modulePath + "/graphs/fast: cgo",
			},
		},
		{
			name: "a higher layer of the module", root: engine, layer: engineLayer,
			deps: []pkg{own("native/internal/builder"), own("wasm/engine", modulePath+"/native/internal/builder")},
			want: []string{engine + " → " + modulePath + "/native/internal/builder: outside graphs, wasm/engine, wasm/internal of this module"},
		},
		{
			name: "graphs may not reach the engine's packages", root: graphs, layer: graphsLayer,
			deps: []pkg{own("wasm/internal/errtext"), own("graphs", modulePath+"/wasm/internal/errtext")},
			want: []string{graphs + " → " + modulePath + "/wasm/internal/errtext: outside graphs of this module"},
		},
		{
			name: "a prefix is a path, not a string", root: graphs, layer: graphsLayer,
			deps: []pkg{own("graphsx"), own("graphs", modulePath+"/graphsx")},
			want: []string{graphs + " → " + modulePath + "/graphsx: outside graphs of this module"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.layer.violations(tc.root, tc.deps)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}
