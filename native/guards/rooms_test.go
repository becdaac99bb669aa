package guards

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A wall is a rule between two parts of the module: no package in from (a path prefix relative
// to the module, less the prefixes in except) imports a package under a prefix of to. Imports
// of _test.go files are not walls' business: a test binary is linked into no product (see rooms).
type wall struct {
	name   string
	from   string
	to     []string
	except []string
	reason string
}

// rooms are the module's walls:
//   - the product (every package but the lab's) never imports the lab (native/lab: the
//     measurement tools, their commands and fixtures; native/internal/lab: the libraries of
//     the lab that the product's tests use, synth's libraries and the catalog server), so that
//     nothing measured ships. The product's tests may use them, as they use native/testlib,
//     which may import them too (for tests outside native/): neither is linked into a product
//     binary.
//   - the engine and its hosts (wasm) never import the native side (builder, CLI), which
//     imports them.
//   - the test kit native/testlib, which imports the builder, is imported by _test.go files
//     only, so that no host links the builder through it.
//   - the builder does not import eval, which measures what the builder makes: the line reader
//     both use is native/internal/lines.
//   - the HTTP API (wasm/api) is imported only by its HTTP adapters, caskg serve (native/serve)
//     and the edge worker (wasm/worker): every other surface (the MCP tool layer, caskg mcp, the
//     gateway, the CLI) stands on the service layer below it, wasm/service.
//   - the gateway does not import native/internal/mcpserver, caskg mcp's server: the MCP transports both
//     run over (stdio, streamable HTTP with its loopback checks) are native/internal/mcptransport.
var rooms = []wall{
	{name: "product apart from the lab", from: "", except: []string{"native/lab", "native/internal/lab", "native/testlib"},
		to:     []string{"native/lab", "native/internal/lab"},
		reason: "a product package imports the lab"},
	{name: "wasm below native", from: "wasm", to: []string{"native"},
		reason: "a wasm package imports the native side"},
	{name: "the test kit in tests only", from: "", except: []string{"native/testlib"}, to: []string{"native/testlib"},
		reason: "a package (not a _test.go file) imports the test kit"},
	{name: "the builder apart from eval", from: "native/internal/builder", to: []string{"native/internal/eval"},
		reason: "the builder imports eval"},
	{name: "the HTTP API under its adapters only", from: "", except: []string{"wasm/api", "native/serve", "wasm/worker"}, to: []string{"wasm/api"},
		reason: "a package other than an HTTP adapter imports wasm/api (wasm/service is the layer below the transports)"},
	{name: "the gateway apart from caskg mcp's server", from: "native/internal/gateway", to: []string{"native/internal/mcpserver"},
		reason: "the gateway imports native/internal/mcpserver"},
}

// crossings lists the imports in deps that w forbids, "from → to: reason", sorted.
func (w wall) crossings(deps []pkg) []string {
	rel := func(path string) (string, bool) {
		if path == modulePath {
			return "", true
		}
		r, ok := strings.CutPrefix(path, modulePath+"/")
		return r, ok
	}
	in := func(path, prefix string) bool {
		return prefix == "" || under(path, []string{prefix})
	}
	var out []string
	for _, p := range deps {
		from, own := rel(p.ImportPath)
		if !own || !in(from, w.from) || slices.ContainsFunc(w.except, func(e string) bool { return in(from, e) }) {
			continue
		}
		for _, imp := range p.Imports {
			if to, own := rel(imp); own && slices.ContainsFunc(w.to, func(t string) bool { return in(to, t) }) {
				out = append(out, p.ImportPath+" → "+imp+": "+w.reason)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestRooms holds every package of the module, in the native build and the two WebAssembly
// builds, to the walls.
func TestRooms(t *testing.T) {
	requireGo(t)
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			deps := goList(t, modulePath+"/...", b.env...)
			// A control: were go list's answer misread, the walls would pass for want of
			// anything to hold; the CLI and the lab's command are in every native build.
			if b.name == "native" {
				for _, want := range []string{"native/internal/cli", "native/lab/cmd/caskg-bench"} {
					if !slices.ContainsFunc(deps, func(p pkg) bool { return p.ImportPath == modulePath+"/"+want }) {
						t.Fatalf("go list -deps %s/... did not list %s: %d packages", modulePath, want, len(deps))
					}
				}
			}
			for _, w := range rooms {
				if got := w.crossings(deps); len(got) > 0 {
					t.Errorf("%s:\n%s", w.name, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestRoomCrossings holds the walls to made-up builds, including the ones they must refuse.
func TestRoomCrossings(t *testing.T) {
	own := func(path string, imports ...string) pkg {
		for i, imp := range imports {
			imports[i] = modulePath + "/" + imp
		}
		return pkg{ImportPath: modulePath + "/" + path, Module: &struct{ Path string }{modulePath}, Imports: imports}
	}
	// crossing is the line crossings gives for the import of to by from, why it is refused.
	crossing := func(from, to, why string) string {
		return modulePath + "/" + from + " → " + modulePath + "/" + to + ": " + why
	}
	lab, wasmNative, kit, builderEval, httpAPI, gatewayMCP := rooms[0], rooms[1], rooms[2], rooms[3], rooms[4], rooms[5]
	tests := []struct {
		name string
		w    wall
		deps []pkg
		want []string
	}{
		{"the lab imports the product", lab,
			[]pkg{own("native/internal/builder"), own("native/lab/internal/harness", "native/internal/builder"), own("native/lab/cmd/caskg-learn", "native/internal/cli")}, nil},
		{"the product imports the lab", lab,
			[]pkg{own("native/lab/internal/harness"), own("native/internal/cli", "native/lab/internal/harness")},
			[]string{crossing("native/internal/cli", "native/lab/internal/harness", "a product package imports the lab")}},
		{"the kit builds grown libraries", lab,
			[]pkg{own("native/internal/lab/synth"), own("native/testlib", "native/internal/lab/synth")}, nil},
		{"a product package imports the lab's libraries", lab,
			[]pkg{own("native/internal/lab/catalogserver"), own("native/internal/gateway", "native/internal/lab/catalogserver")},
			[]string{crossing("native/internal/gateway", "native/internal/lab/catalogserver", "a product package imports the lab")}},
		{"a product package outside native", lab,
			[]pkg{own("native/internal/lab/synth"), own("wasm/engine", "native/internal/lab/synth")},
			[]string{crossing("wasm/engine", "native/internal/lab/synth", "a product package imports the lab")}},
		{"a prefix is a path, not a string", lab,
			[]pkg{own("native/labels"), own("native/internal/cli", "native/labels")}, nil},
		{"wasm imports the engine", wasmNative,
			[]pkg{own("wasm/engine"), own("wasm/api", "wasm/engine")}, nil},
		{"wasm imports the builder", wasmNative,
			[]pkg{own("native/internal/builder"), own("wasm/testkit", "native/internal/builder")},
			[]string{crossing("wasm/testkit", "native/internal/builder", "a wasm package imports the native side")}},
		{"the kit imports the builder", kit,
			[]pkg{own("native/internal/builder"), own("native/testlib", "native/internal/builder")}, nil},
		{"a host links the kit", kit,
			[]pkg{own("native/testlib"), own("native/serve", "native/testlib")},
			[]string{crossing("native/serve", "native/testlib", "a package (not a _test.go file) imports the test kit")}},
		{"the builder reads lines", builderEval,
			[]pkg{own("native/internal/lines"), own("native/internal/builder", "native/internal/lines"), own("native/internal/eval", "native/internal/lines")}, nil},
		{"the builder imports eval", builderEval,
			[]pkg{own("native/internal/eval"), own("native/internal/builder/semantic", "native/internal/eval")},
			[]string{crossing("native/internal/builder/semantic", "native/internal/eval", "the builder imports eval")}},
		{"the adapters and the layers below", httpAPI,
			[]pkg{own("wasm/service"), own("wasm/api", "wasm/service"), own("native/serve", "wasm/api", "wasm/service"),
				own("wasm/worker", "wasm/api", "wasm/mcpcore"), own("wasm/mcpcore", "wasm/service"), own("native/internal/cli", "native/serve", "wasm/service")}, nil},
		{"the MCP tool layer on the HTTP API", httpAPI,
			[]pkg{own("wasm/api"), own("wasm/mcpcore", "wasm/api"), own("native/internal/gateway/front", "wasm/api")},
			[]string{
				crossing("native/internal/gateway/front", "wasm/api", "a package other than an HTTP adapter imports wasm/api (wasm/service is the layer below the transports)"),
				crossing("wasm/mcpcore", "wasm/api", "a package other than an HTTP adapter imports wasm/api (wasm/service is the layer below the transports)"),
			}},
		{"the gateway and caskg mcp share the transport", gatewayMCP,
			[]pkg{own("native/internal/mcptransport"), own("native/internal/gateway", "native/internal/mcptransport"), own("native/internal/mcpserver", "native/internal/mcptransport")}, nil},
		{"the gateway imports caskg mcp's server", gatewayMCP,
			[]pkg{own("native/internal/mcpserver"), own("native/internal/gateway", "native/internal/mcpserver")},
			[]string{crossing("native/internal/gateway", "native/internal/mcpserver", "the gateway imports native/internal/mcpserver")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.w.crossings(tc.deps)); diff != "" {
				t.Errorf("crossings (-want +got):\n%s", diff)
			}
		})
	}
}
