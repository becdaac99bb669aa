package guards

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// A target is one fuzz target: the import path of its package and its name.
type target struct{ pkg, name string }

func (t target) String() string { return t.pkg + " " + t.name }

// isFuzzName reports whether name names a fuzz target by the testing package's rule: Fuzz, then
// nothing or a character that is not a lower-case letter (FuzzDecode, Fuzz_1; not Fuzzy).
func isFuzzName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Fuzz")
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !unicode.IsLower(r)
}

// fuzzFuncs returns the names of the fuzz targets the test file src declares, whatever its build
// constraints say: the top-level functions named by isFuzzName.
func fuzzFuncs(filename string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && isFuzzName(fn.Name.Name) {
			names = append(names, fn.Name.Name)
		}
	}
	return names, nil
}

// sourceFuzzTargets finds every func Fuzz in the _test.go files of the module at root, in the
// directories ./... covers: not testdata, vendor, nested modules, or names starting with . or _.
func sourceFuzzTargets(t *testing.T, root string) ([]target, error) {
	var out []target
	skip := func(rel, name string) bool {
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
			return true
		}
		_, err := os.Stat(filepath.Join(root, rel, "go.mod"))
		return err == nil
	}
	keep := func(name string) bool {
		return strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
	}
	for _, rel := range fixture.Walk(t, root, skip, keep) {
		file := filepath.Join(root, filepath.FromSlash(rel))
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		names, err := fuzzFuncs(file, src)
		if err != nil {
			return nil, err
		}
		pkg := modulePath
		if dir := path.Dir(rel); dir != "." {
			pkg += "/" + dir
		}
		for _, n := range names {
			out = append(out, target{pkg, n})
		}
	}
	return out, nil
}

// parseTargets reads the lines of make fuzz-list: "import/path FuzzName".
func parseTargets(b []byte) ([]target, error) {
	var out []target
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || !isFuzzName(f[1]) {
			return nil, errors.New("guards: make fuzz-list: not an \"import/path FuzzName\" line: " + strings.TrimSpace(line))
		}
		out = append(out, target{f[0], f[1]})
	}
	return out, nil
}

// compareTargets lists how the targets make fuzz runs differ from those in the source, sorted.
func compareTargets(source, run []target) []string {
	count := map[target]int{}
	for _, t := range source {
		count[t]++
	}
	for _, t := range run {
		count[t]--
	}
	var out []string
	for t, n := range count {
		switch {
		case n > 0:
			out = append(out, t.String()+": in the source, not run by make fuzz (a build tag? a directory go skips?)")
		case n < 0:
			out = append(out, t.String()+": run by make fuzz, not a func Fuzz in the source (or run twice)")
		}
	}
	slices.Sort(out)
	return out
}

// moduleRoot is the directory of this module's go.mod, above the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if !bytes.HasPrefix(b, []byte("module "+modulePath+"\n")) {
				t.Fatalf("%s/go.mod is not module %s", dir, modulePath)
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// TestMakeFuzzRunsEveryTarget holds make fuzz to every func Fuzz of the tree: what make
// fuzz-list prints (and make fuzz runs) is what the source declares, no more and no fewer.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("make fuzz-list compiles every package's tests")
	}
	requireGo(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make command: ", err)
	}
	root := moduleRoot(t)
	source, err := sourceFuzzTargets(t, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(source) == 0 {
		t.Fatalf("no func Fuzz found under %s", root)
	}
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", root, "fuzz-list")
	// Under make test this runs inside make: the inner make is not its sub-make.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL"
	})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make fuzz-list: %v\n%s", err, stderr.Bytes())
	}
	run, err := parseTargets(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := compareTargets(source, run); len(diff) > 0 {
		t.Errorf("make fuzz runs %d targets, the source has %d func Fuzz:\n%s", len(run), len(source), strings.Join(diff, "\n"))
	}
}

func TestFuzzFuncs(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"a target", "package p\nimport \"testing\"\nfunc FuzzDecode(f *testing.F) {}\n", []string{"FuzzDecode"}},
		{"Fuzz alone", "package p\nimport \"testing\"\nfunc Fuzz(f *testing.F) {}\n", []string{"Fuzz"}},
		{"Fuzz then not a lower-case letter", "package p\nfunc Fuzz_1() {}\nfunc Fuzz2() {}\nfunc FuzzÉ() {}\n", []string{"Fuzz_1", "Fuzz2", "FuzzÉ"}},
		{"Fuzz then a lower-case letter", "package p\nfunc Fuzzy() {}\nfunc Fuzzé() {}\n", nil},
		{"a method", "package p\ntype T struct{}\nfunc (T) FuzzX() {}\n", nil},
		{"a variable and a comment", "package p\nvar FuzzX = 1\n// func FuzzY(f *testing.F) {}\n", nil},
		{"in a string", "package p\nconst s = `\nfunc FuzzZ(f *testing.F) {}\n`\n", nil},
		{"behind a build tag: counted, since go test would not see it",
			"//go:build ignore\n\npackage p\nfunc FuzzHidden() {}\n", []string{"FuzzHidden"}},
		{"two", "package p_test\nfunc FuzzA() {}\nfunc helper() {}\nfunc FuzzB() {}\n", []string{"FuzzA", "FuzzB"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fuzzFuncs("x_test.go", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fuzzFuncs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareTargets(t *testing.T) {
	const g = modulePath + "/graphs"
	const e = modulePath + "/wasm/engine"
	tests := []struct {
		name   string
		source []target
		list   string // what make fuzz-list printed
		want   []string
	}{
		{
			name:   "the same targets, in another order",
			source: []target{{g, "FuzzDecode"}, {e, "FuzzQuery"}, {e, "FuzzHandler"}, {g, "FuzzHandler"}},
			list:   e + " FuzzHandler\n" + g + " FuzzHandler\n" + e + " FuzzQuery\n" + g + " FuzzDecode\n",
		},
		{
			name:   "a target make fuzz does not run",
			source: []target{{g, "FuzzDecode"}, {g, "FuzzHidden"}},
			list:   g + " FuzzDecode\n",
			want:   []string{g + " FuzzHidden: in the source, not run by make fuzz (a build tag? a directory go skips?)"},
		},
		{
			name:   "the same name in another package is another target",
			source: []target{{g, "FuzzHandler"}, {e, "FuzzHandler"}},
			list:   g + " FuzzHandler\n" + g + " FuzzHandler\n",
			want: []string{
				g + " FuzzHandler: run by make fuzz, not a func Fuzz in the source (or run twice)",
				e + " FuzzHandler: in the source, not run by make fuzz (a build tag? a directory go skips?)",
			},
		},
		{
			name:   "a target run that the source does not declare",
			source: nil,
			list:   e + " FuzzGenerated\n",
			want:   []string{e + " FuzzGenerated: run by make fuzz, not a func Fuzz in the source (or run twice)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := parseTargets([]byte(tc.list))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, compareTargets(tc.source, run)); diff != "" {
				t.Errorf("compareTargets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTargetsRejects(t *testing.T) {
	for _, line := range []string{
		"make[1]: Entering directory '/x'",
		"ok  \tgithub.com/caskg/caskg/graphs\t0.003s",
		modulePath + "/graphs TestDecode",
		modulePath + "/graphs",
	} {
		if _, err := parseTargets([]byte(line + "\n")); err == nil {
			t.Errorf("parseTargets(%q) = nil error", line)
		}
	}
}
