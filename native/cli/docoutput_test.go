package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
)

var updateDocs = flag.Bool("update", false, "rewrite the documentation's caskg-output blocks with the real output")

// outputMarker is the comment that ties a documentation block to a command: the fenced block on
// the next line is what `caskg ARGS` prints, bin/sample.skg being the sample graph.
var outputMarker = regexp.MustCompile(`(?m)^<!-- caskg-output: (.+) -->\n(` + "```" + `[a-z]*\n)`)

// TestDocOutputs runs every command the documentation shows the output of (a
// `<!-- caskg-output: ARGS -->` comment above a fenced block) on the sample graph and holds the
// block to what it prints, so that no figure of an example goes stale. -update rewrites the
// blocks.
func TestDocOutputs(t *testing.T) {
	const root = "../.."
	sample := testlib.SampleFile(t)
	blocks := 0
	for _, rel := range fixture.MarkdownFiles(t, root) {
		path := filepath.Join(root, rel)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		last := 0
		for _, m := range outputMarker.FindAllSubmatchIndex(src, -1) {
			blocks++
			line := bytes.Count(src[:m[0]], []byte("\n")) + 1
			body := m[5]
			end := bytes.Index(src[body:], []byte("\n```\n"))
			if end < 0 {
				t.Errorf("%s:%d: the block under the caskg-output comment is not closed", rel, line)
				continue
			}
			end += body + 1
			args, err := shellWords(string(src[m[2]:m[3]]))
			if err != nil {
				t.Errorf("%s:%d: %v", rel, line, err)
				continue
			}
			for i, a := range args {
				if a == "bin/sample.skg" {
					args[i] = sample
				}
			}
			r := run(t, args...)
			if r.code != 0 {
				t.Errorf("%s:%d: caskg %s: exit %d: %s", rel, line, strings.Join(args, " "), r.code, r.stderr)
				continue
			}
			if got := string(src[body:end]); got != r.stdout {
				if !*updateDocs {
					t.Errorf("%s:%d: the block shows\n%s\nbut caskg %s prints\n%s\n(go test ./native/cli -run TestDocOutputs -update rewrites it)",
						rel, line, got, string(src[m[2]:m[3]]), r.stdout)
				}
			}
			out.Write(src[last:body])
			out.WriteString(r.stdout)
			last = end
		}
		if *updateDocs && last > 0 {
			out.Write(src[last:])
			if !bytes.Equal(out.Bytes(), src) {
				if err := atomicfile.Write(path, out.Bytes()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if blocks < 2 {
		t.Errorf("%d caskg-output blocks in the documentation, want the README's and the rendered bundle's at least", blocks)
	}
}

// shellWords splits a command line as the shell does for plain words and double quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, errors.New("an unclosed quote in the caskg-output command")
			}
			words = append(words, s[1:end+1])
			s = s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		words = append(words, w)
		s = rest
	}
	return words, nil
}
