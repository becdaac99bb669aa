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
			got, err := Replace([]byte(tc.in), b, e, []byte(tc.body))
			if fixture.WantErr(t, err, "mdspan: ", tc.err) {
				return
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			again, err := Replace(got, b, e, []byte(tc.body))
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
		got, err := Replace([]byte(in), b, e, []byte(body))
		if err != nil {
			return
		}
		// Text outside the markers is kept; the span holds the body.
		head, tail := in[:strings.Index(in, b)], in[strings.Index(in, e):]
		if s := string(got); !strings.HasPrefix(s, head+b+"\n") || !strings.HasSuffix(s, "\n"+tail) ||
			!strings.Contains(s, b+"\n"+strings.TrimRight(body, "\n")+"\n"+e) {
			t.Errorf("Replace(%q, %q) = %q", in, body, got)
		}
	})
}
