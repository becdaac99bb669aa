package guards

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// toolLayer is the one MCP tool layer: the tools' names, texts and schemas are declared there
// and nowhere else.
const toolLayer = modulePath + "/wasm/mcpcore"

// namedFronts are the MCP fronts of the product, by the last element of their import path (so
// that a move of a package keeps its row): `caskg mcp`, the edge worker's /mcp and the gateway.
// Any other product package that makes an MCP server with the SDK is a front too (sdkServer).
var namedFronts = []string{"mcpserver", "worker", "gateway"}

// schemaText is JSON Schema written out: a "type" of a JSON kind, or "properties". A front
// that holds such a string declares a schema of its own.
var schemaText = regexp.MustCompile(`"type"\s*:\s*"(object|string|integer|number|array|boolean|null)"|"properties"\s*:`)

// sourcePkg is the non-test Go files of one directory, every build tag's.
type sourcePkg struct {
	importPath string
	files      map[string]*ast.File // by file name
}

// frontViolations lists what in p declares a tool of its own instead of taking it from the
// tool layer: no import of the tool layer; JSON Schema text; a schema property built here
// (service.Property) or inferred (the jsonschema module); an mcp.Tool literal without an
// InputSchema (the SDK would infer one from a Go type) or with a name written out.
func frontViolations(fset *token.FileSet, p sourcePkg) []string {
	var out []string
	where := func(n ast.Node) string {
		pos := fset.Position(n.Pos())
		return filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
	}
	importsLayer := false
	for _, name := range slices.Sorted(maps.Keys(p.files)) {
		f := p.files[name]
		mcpName, serviceName := "", ""
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			local := path.Base(ip)
			if im.Name != nil {
				local = im.Name.Name
			}
			switch {
			case ip == toolLayer:
				importsLayer = true
			case ip == "github.com/modelcontextprotocol/go-sdk/mcp":
				mcpName = local
			case ip == modulePath+"/wasm/service":
				serviceName = local
			case strings.HasPrefix(ip, "github.com/google/jsonschema-go"):
				out = append(out, where(im)+": imports "+ip+": a schema inferred here, not the tool layer's")
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING && schemaText.MatchString(n.Value) {
					out = append(out, where(n)+": JSON Schema written here: "+short(n.Value))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && serviceName != "" && isIdent(sel.X, serviceName) && sel.Sel.Name == "Property" {
					out = append(out, where(n)+": a schema property built here (service.Property)")
				}
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok || mcpName == "" || !isIdent(sel.X, mcpName) || sel.Sel.Name != "Tool" {
					return true
				}
				hasSchema := false
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					switch key, _ := kv.Key.(*ast.Ident); {
					case key == nil:
					case key.Name == "InputSchema":
						hasSchema = true
					case key.Name == "Name":
						if lit, ok := kv.Value.(*ast.BasicLit); ok {
							out = append(out, where(n)+": a tool named here: "+lit.Value)
						}
					}
				}
				if !hasSchema {
					out = append(out, where(n)+": an mcp.Tool without InputSchema: the SDK infers one here")
				}
			}
			return true
		})
	}
	if !importsLayer {
		out = append([]string{p.importPath + ": does not import " + toolLayer}, out...)
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// sdkServer reports whether p makes an MCP server with the SDK (mcp.NewServer).
func sdkServer(p sourcePkg) bool {
	for _, f := range p.files {
		for _, im := range f.Imports {
			if im.Path.Value != `"github.com/modelcontextprotocol/go-sdk/mcp"` {
				continue
			}
			found := false
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewServer" && isIdent(sel.X, "mcp") {
					found = true
				}
				return !found
			})
			if found {
				return true
			}
		}
	}
	return false
}

// productSources parses the non-test Go files of every product package of the module at root:
// not the lab, not the test helpers, not testdata.
func productSources(t *testing.T, fset *token.FileSet, root string) []sourcePkg {
	t.Helper()
	byDir := map[string]*sourcePkg{}
	skip := func(rel, name string) bool {
		return strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
			rel == "native/lab" || rel == "native/internal/lab" || rel == "native/testlib"
	}
	keep := func(name string) bool { return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") }
	for _, rel := range fixture.Walk(t, root, skip, keep) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(rel)
		sp := byDir[dir]
		if sp == nil {
			ip := modulePath
			if dir != "." {
				ip += "/" + dir
			}
			sp = &sourcePkg{importPath: ip, files: map[string]*ast.File{}}
			byDir[dir] = sp
		}
		sp.files[p] = f
	}
	out := make([]sourcePkg, 0, len(byDir))
	for _, sp := range byDir {
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b sourcePkg) int { return strings.Compare(a.importPath, b.importPath) })
	return out
}

// TestMCPFronts holds every MCP front of the product (namedFronts, and any package that makes
// an SDK server) to the one tool layer: it imports wasm/mcpcore and declares no tool itself.
func TestMCPFronts(t *testing.T) {
	requireGo(t)
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var fronts []string
	for _, p := range productSources(t, fset, root) {
		if p.importPath == toolLayer || !slices.Contains(namedFronts, path.Base(p.importPath)) && !sdkServer(p) {
			continue
		}
		fronts = append(fronts, path.Base(p.importPath))
		if v := frontViolations(fset, p); len(v) > 0 {
			t.Errorf("%s is an MCP front that declares tools of its own; take them from %s:\n%s",
				p.importPath, toolLayer, strings.Join(v, "\n"))
		}
	}
	for _, name := range namedFronts {
		if !slices.Contains(fronts, name) {
			t.Errorf("no product package named %s: the MCP fronts are %q", name, fronts)
		}
	}
}

// TestFrontViolations holds the rule to made-up fronts, including those it must refuse.
func TestFrontViolations(t *testing.T) {
	const head = "package front\n\nimport (\n\t\"encoding/json\"\n\n\t\"github.com/modelcontextprotocol/go-sdk/mcp\"\n\n" +
		"\t\"github.com/caskg/caskg/wasm/mcpcore\"\n\tsvc \"github.com/caskg/caskg/wasm/service\"\n)\n\n" +
		"var _ = json.Valid\nvar _ = svc.MaxK\nvar _ = mcpcore.Tools\n\n"
	tests := []struct {
		name, src string
		want      []string // substrings, one per violation, in order
	}{
		{"the layer's tools", head + "func def(t mcpcore.Tool) *mcp.Tool {\n" +
			"\treturn &mcp.Tool{Name: t.Name, InputSchema: json.RawMessage(t.InputSchema)}\n}\n", nil},
		{"a schema written out", head + "var s = `{\"type\": \"object\"}`\n", []string{"front.go:16: JSON Schema written here"}},
		{"properties written out", head + "var s = `{\"properties\" : {}}`\n", []string{"JSON Schema written here"}},
		{"a property built here", head + "var s = svc.Property(\"k\", \"how many\")\n", []string{"front.go:16: a schema property built here"}},
		{"a tool named here", head + "var t = &mcp.Tool{Name: \"own_tool\", InputSchema: json.RawMessage(mcpcore.Tools[0].InputSchema)}\n",
			[]string{`a tool named here: "own_tool"`}},
		{"an inferred schema", head + "var t = mcp.Tool{Name: mcpcore.Retrieve}\n", []string{"without InputSchema"}},
		{"no tool layer", "package front\n\nvar x = 1\n", []string{"does not import " + toolLayer}},
		{"a jsonschema import", "package front\n\nimport _ \"github.com/google/jsonschema-go/jsonschema\"\n",
			[]string{"does not import", "a schema inferred here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "front.go", tt.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := frontViolations(fset, sourcePkg{importPath: "example/front", files: map[string]*ast.File{"front.go": f}})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d violations %q, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d: %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
