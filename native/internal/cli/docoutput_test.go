package cli

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/native/testlib/fixture"
)

var updateDocs = flag.Bool("update", false, "rewrite the documentation's caskg-output blocks with the real output")

// outputMarker is the comment that ties a documentation block to a command: the fenced block on
// the next line is what `caskg ARGS` prints, bin/sample.skg being the sample graph.
var outputMarker = regexp.MustCompile(`(?m)^<!-- caskg-output: (.+) -->\n(?:` + "```" + `[a-z]*\n)`)

// TestDocOutputs runs every command the documentation shows the output of (a
// `<!-- caskg-output: ARGS -->` comment above a fenced block) on the sample graph and holds the
// block to what it prints, so that no figure of an example goes stale. -update rewrites the
// blocks.
func TestDocOutputs(t *testing.T) {
	sample := testlib.SampleFile(t)
	blocks := fixture.OutputBlocks(t, "../../..", outputMarker, func(m []string) (string, error) {
		args, err := shellWords(m[0])
		if err != nil {
			return "", err
		}
		for i, a := range args {
			if a == "bin/sample.skg" {
				args[i] = sample
			}
		}
		r := run(t, args...)
		if r.code != 0 {
			return "", fmt.Errorf("caskg %s: exit %d: %s", m[0], r.code, r.stderr)
		}
		return r.stdout, nil
	}, *updateDocs, "./native/internal/cli -run TestDocOutputs")
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
