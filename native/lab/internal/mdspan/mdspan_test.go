package mdspan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

const b, e = "<!-- eval:begin -->", "<!-- eval:end -->"

var replaceTests = []struct {
	name, in, body, want, err string
}{
	{name: "replaces between the markers", in: "intro\n" + b + "\nold\ntable\n" + e + "\noutro\n", body: "new\n",
		want: "intro\n" + b + "\nnew\n" + e + "\noutro\n"},
	{name: "empty span", in: "x\n" + b + "\n" + e + "\n", body: "t", want: "x\n" + b + "\nt\n" + e + "\n"},
	{name: "markers on one line", in: b + e, body: "x", want: b + "\nx\n" + e},
	{name: "trailing newlines folded", in: b + "\nold\n" + e + "\n", body: "new\n\n\n", want: b + "\nnew\n" + e + "\n"},
	{name: "empty body", in: b + "\nold\n" + e, body: "", want: b + "\n\n" + e},
	{name: "other markers untouched", in: "<!-- bench:begin -->\nB\n<!-- bench:end -->\n" + b + "\nold\n" + e + "\n", body: "new\n",
		want: "<!-- bench:begin -->\nB\n<!-- bench:end -->\n" + b + "\nnew\n" + e + "\n"},
	{name: "no markers", in: "nothing here", body: "t", err: "marker " + b + " appears 0 times, want once"},
	{name: "begin missing", in: "x\n" + e + "\n", body: "t", err: "marker " + b + " appears 0 times"},
	{name: "end missing", in: b + "\nx\n", body: "t", err: "marker " + e + " appears 0 times"},
	{name: "begin twice", in: b + "\n" + b + "\n" + e + "\n", body: "t", err: "marker " + b + " appears 2 times"},
	{name: "end twice", in: b + "\n" + e + "\n" + e + "\n", body: "t", err: "marker " + e + " appears 2 times"},
	{name: "end before begin", in: e + "\nx\n" + b + "\n", body: "t", err: "marker " + e + " comes before " + b},
}

func TestReplace(t *testing.T) {
	for _, tc := range replaceTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replace([]byte(tc.in), b, e, []byte(tc.body))
			if fixture.WantErr(t, err, "mdspan: ", tc.err) {
				return
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			again, err := replace(got, b, e, []byte(tc.body))
			if err != nil || string(again) != string(got) {
				t.Errorf("a second rewrite with the same body changed the document: %q, %v", again, err)
			}
		})
	}
}

func TestUpdateFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, in, body, want, err string
	}{
		{name: "rewrites the span", in: "# x\n" + b + "\nold\n" + e + "\n", body: "| a |\n", want: "# x\n" + b + "\n| a |\n" + e + "\n"},
		{name: "already up to date", in: "# x\n" + b + "\n| a |\n" + e + "\n", body: "| a |\n", want: "# x\n" + b + "\n| a |\n" + e + "\n"},
		{name: "no markers", in: "no markers", body: "x", want: "no markers", err: "no markers.md: mdspan: marker " + b + " appears 0 times"},
		{name: "reversed", in: e + b, body: "x", want: e + b, err: "reversed.md: mdspan: marker " + e + " comes before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := fixture.WriteFile(t, dir, tc.name+".md", tc.in)
			err := UpdateFile(path, b, e, []byte(tc.body))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("file holds %q, want %q", got, tc.want)
			}
		})
	}
	if err := UpdateFile(filepath.Join(dir, "missing.md"), b, e, nil); !os.IsNotExist(err) {
		t.Errorf("missing file: error %v, want one that the file does not exist", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("temporary or extra files left behind: %v", entries)
	}
}

func FuzzReplace(f *testing.F) {
	for _, tc := range replaceTests {
		f.Add(tc.in, tc.body)
	}
	f.Fuzz(func(t *testing.T, in, body string) {
		got, err := replace([]byte(in), b, e, []byte(body))
		if err != nil {
			return
		}
		// Text outside the markers is kept; the span holds the body.
		head, tail := in[:strings.Index(in, b)], in[strings.Index(in, e):]
		if s := string(got); !strings.HasPrefix(s, head+b+"\n") || !strings.HasSuffix(s, "\n"+tail) ||
			!strings.Contains(s, b+"\n"+strings.TrimRight(body, "\n")+"\n"+e) {
			t.Errorf("replace(%q, %q) = %q", in, body, got)
		}
	})
}

func fig(name, value string) string { return "<!-- size:" + name + " -->" + value + "<!-- /size -->" }

var figureTests = []struct {
	name, in string
	values   map[string]string
	want     string // the document after setFigures
	figs     []string
	err      string
}{
	{name: "two figures in a sentence", in: "The module is " + fig("module-raw", "1") + " bytes, " + fig("module-gzip", "2") + " gzip.\n",
		values: map[string]string{"module-raw": "2,364,715", "module-gzip": "698,749"},
		want:   "The module is " + fig("module-raw", "2,364,715") + " bytes, " + fig("module-gzip", "698,749") + " gzip.\n",
		figs:   []string{"module-raw=1", "module-gzip=2"}},
	{name: "unnamed figures kept", in: "a " + fig("worker-app-raw", "9") + " b " + fig("module-raw", "1") + "\n",
		values: map[string]string{"module-raw": "3"}, want: "a " + fig("worker-app-raw", "9") + " b " + fig("module-raw", "3") + "\n",
		figs: []string{"worker-app-raw=9", "module-raw=1"}},
	{name: "a figure twice", in: fig("go", "go1.0") + "\n\n" + fig("go", "go1.0"), values: map[string]string{"go": "go1.26.8"},
		want: fig("go", "go1.26.8") + "\n\n" + fig("go", "go1.26.8"), figs: []string{"go=go1.0", "go=go1.0"}},
	{name: "empty value", in: fig("x", ""), values: map[string]string{"x": "1"}, want: fig("x", "1"), figs: []string{"x="}},
	{name: "no figures", in: "plain text\n", values: map[string]string{"x": "1"}, want: "plain text\n"},
	{name: "not closed", in: "a\n" + "<!-- size:x -->12\n<!-- /size -->", err: "line 2: figure x is not closed by <!-- /size --> on its line"},
	{name: "nested", in: "<!-- size:x -->1<!-- size:y -->2<!-- /size --><!-- /size -->", err: "line 1: figure x is not closed"},
	{name: "bad name", in: "<!-- size:Module -->1<!-- /size -->", err: "line 1: a figure opens without a name"},
	{name: "no name", in: "<!-- size: -->1<!-- /size -->", err: "line 1: a figure opens without a name"},
	{name: "value with a newline", in: fig("x", "1"), values: map[string]string{"x": "1\n2"}, figs: []string{"x=1"},
		err: "figure x: value \"1\\n2\" holds a newline"},
}

func TestFigures(t *testing.T) {
	for _, tc := range figureTests {
		t.Run(tc.name, func(t *testing.T) {
			figs, ferr := Figures([]byte(tc.in))
			var got []string
			for _, f := range figs {
				got = append(got, f.Name+"="+f.Value)
			}
			if ferr == nil && strings.Join(got, " ") != strings.Join(tc.figs, " ") {
				t.Errorf("Figures = %q, want %q", got, tc.figs)
			}
			out, err := setFigures([]byte(tc.in), tc.values)
			if fixture.WantErr(t, err, "mdspan: ", tc.err) {
				return
			}
			if string(out) != tc.want {
				t.Errorf("setFigures gave\n%q\nwant\n%q", out, tc.want)
			}
		})
	}
}

func TestUpdateFigures(t *testing.T) {
	dir := t.TempDir()
	path := fixture.WriteFile(t, dir, "README.md", "size "+fig("module-raw", "1")+" bytes\n")
	if err := UpdateFigures(path, map[string]string{"module-raw": "2,000"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "size "+fig("module-raw", "2,000")+" bytes\n" {
		t.Errorf("file holds %q", got)
	}
	bad := fixture.WriteFile(t, dir, "bad.md", "<!-- size:x -->1\n")
	if err := UpdateFigures(bad, map[string]string{"x": "2"}); err == nil || !strings.Contains(err.Error(), "bad.md: mdspan: line 1: figure x") {
		t.Errorf("unclosed figure: error %v, want one naming the file and line", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary or extra files left behind: %v", entries)
	}
}

func FuzzSetFigures(f *testing.F) {
	for _, tc := range figureTests {
		f.Add(tc.in, "1,234")
	}
	f.Fuzz(func(t *testing.T, in, value string) {
		figs, err := Figures([]byte(in))
		if err != nil {
			return
		}
		values := map[string]string{}
		for _, fg := range figs {
			values[fg.Name] = value
		}
		out, err := setFigures([]byte(in), values)
		if err != nil {
			return
		}
		// Every figure now holds the value, and setting it again changes nothing.
		again, err := Figures(out)
		if err != nil || len(again) != len(figs) {
			t.Fatalf("setFigures(%q) = %q: %d figures, %v; want %d", in, out, len(again), err, len(figs))
		}
		for _, fg := range again {
			if fg.Value != value {
				t.Errorf("figure %s holds %q, want %q", fg.Name, fg.Value, value)
			}
		}
		if twice, _ := setFigures(out, values); string(twice) != string(out) {
			t.Errorf("a second setFigures changed %q to %q", out, twice)
		}
	})
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		in   int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {100000, "100,000"}, {698749, "698,749"}, {1234567, "1,234,567"},
		{2364715, "2,364,715"}, {12345678901, "12,345,678,901"}, {-4200, "-4,200"}} {
		if got := Count(tc.in); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
