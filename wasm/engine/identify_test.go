package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzNormName holds normName, which writes the words into one buffer, to joining Words.
func FuzzNormName(f *testing.F) {
	for _, s := range []string{"", "getHTTPResponseCode", "XMLHttpRequest", "ipv4Address base64Encode",
		"数据Analysis", "ÉcoleNormale", "ab\xffcd", "Hello, world! (test) — done.", "a1B2c3 D4e5F6",
		"Run the tests: `go test ./...` then fix_the_failing one.", "ǅungla ǈj Ⅻx ０１２"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normName(s), strings.Join(Words(s), " "); got != want {
			t.Errorf("normName(%q) = %q, want %q", s, got, want)
		}
	})
}

// identifiersReference is identifiers without its filter of plain words: every field trimmed
// and checked for a separator or an inner capital.
func identifiersReference(query string) []string {
	var out []string
	for i := 0; i < len(query) && len(out) < maxIdentifiers; {
		for i < len(query) && !isIdentByte(query[i]) {
			i++
		}
		start := i
		for i < len(query) && isIdentByte(query[i]) {
			i++
		}
		f := strings.TrimFunc(query[start:i], isNamePunct)
		if f == "" || !strings.ContainsFunc(f, isNamePunct) && !hasInnerUpper(f) {
			continue
		}
		if id := normName(f); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// FuzzIdentifiers holds identifiers' filter to the checks it skips: the same identifiers for
// any query.
func FuzzIdentifiers(f *testing.F) {
	for _, s := range []string{"", "use PickUpObject then pick_up_object", "Create the file report.txt, then run getHTTPResponse",
		"/usr/bin/go --race", "ÉcoleNormale aB Ab AB a-b _x_ .. :: a/b", "数据Analysis x\xffY"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if diff := cmp.Diff(identifiersReference(s), identifiers(s)); diff != "" {
			t.Errorf("identifiers(%q) (-reference +got):\n%s", s, diff)
		}
	})
}
