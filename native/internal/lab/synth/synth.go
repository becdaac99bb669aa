// Package synth grows a real skill library to any size for benchmarks, deterministically.
//
// The procedure: skill k of the output (k = 0, 1, …) is a variant of base skill k mod B (B the
// base library's size, sorted by name). Variant 0 is the base skill unchanged. Variant v > 0 is
// named "<base name>-v<v>"; its description is the base description with every word at a
// position chosen by a hash of (k, position) — about one word in six — replaced by the word at
// the same hash from the pooled vocabulary of all base descriptions, so variants stay on topic
// but are not duplicates; its body is the base body's first paragraph; inputs, outputs and tags
// are kept, and declared prerequisites point to the same variant of the prerequisite when that
// exists. The same base and size always give the same library.
//
// Runs makes runs (the skills one agent run used) over such a library, for benchmarks of builds
// with traces and of caskg update; they are just as deterministic. TaskRuns makes runs that
// carry task text and repeat workflows, for the memory of past tasks.
package synth

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/caskg/caskg/native/internal/ingest"
)

// Grow returns n skills synthesized from base (see the package comment).
func Grow(base []ingest.Skill, n int) ([]ingest.Skill, error) {
	if len(base) == 0 {
		return nil, fmt.Errorf("synth: empty base library")
	}
	if n < 1 {
		return nil, fmt.Errorf("synth: size %d must be at least 1", n)
	}
	b := append([]ingest.Skill(nil), base...)
	sort.Slice(b, func(i, j int) bool { return b[i].Name < b[j].Name })
	var vocab []string
	seen := map[string]bool{}
	for _, s := range b {
		for _, w := range strings.Fields(s.Description) {
			if w = strings.Trim(w, ".,;:()\"'"); len(w) > 3 && !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
	}
	sort.Strings(vocab)
	out := make([]ingest.Skill, 0, n)
	for k := range n {
		src := b[k%len(b)]
		v := k / len(b)
		s := src
		if v > 0 {
			s.Name = fmt.Sprintf("%s-v%d", src.Name, v)
			s.Description = vary(src.Description, k, vocab)
			s.Body = firstParagraph(src.Body)
			s.Source = fmt.Sprintf("synth/%s", s.Name)
			deps := make([]string, len(src.DependsOn))
			for i, d := range src.DependsOn {
				deps[i] = fmt.Sprintf("%s-v%d", d, v)
			}
			s.DependsOn = deps
		}
		out = append(out, s)
	}
	return out, nil
}

func hash(k, pos int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", k, pos)
	return h.Sum64()
}

// vary replaces about one word in six of text, at positions and with words chosen by hash.
func vary(text string, k int, vocab []string) string {
	words := strings.Fields(text)
	for i := range words {
		if h := hash(k, i); h%6 == 0 && len(vocab) > 0 {
			words[i] = vocab[(h/6)%uint64(len(vocab))]
		}
	}
	return strings.Join(words, " ")
}

func firstParagraph(body string) string {
	if i := strings.Index(body, "\n\n"); i >= 0 {
		return body[:i]
	}
	return body
}
