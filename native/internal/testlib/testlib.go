// Package testlib holds the helpers that the tests of several native packages share: files
// written under a test's folder, the sample library's paths, checks of a text's contents and of
// errors, and the wait of a fake HTTP server that never answers. It is imported by _test.go
// files only.
package testlib

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The sample library and its tasks, relative to the folder of a package two levels below the
// module root (native/cli, native/ingest, …), where go test runs that package's tests; the
// lab's packages, one level deeper, join "..".
const (
	SampleLib   = "../../graphs/sample"
	SampleTasks = "../../graphs/sample-tasks.jsonl"
	SampleCount = 96 // SKILL.md folders in SampleLib
)

// Files maps a slash-separated path under a folder to its content.
type Files map[string]string

// WriteFiles writes every file of fs under dir, creating the folders it needs, and fails the
// test on the first error.
func WriteFiles(t testing.TB, dir string, fs Files) {
	t.Helper()
	for name, content := range fs {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteFile writes body to the file name under dir and returns its path.
func WriteFile(t testing.TB, dir, name, body string) string {
	t.Helper()
	WriteFiles(t, dir, Files{name: body})
	return filepath.Join(dir, filepath.FromSlash(name))
}

// SkillMD is a SKILL.md file with the given front matter lines and body.
func SkillMD(body string, fm ...string) string {
	return "---\n" + strings.Join(fm, "\n") + "\n---\n" + body
}

// Contains reports, naming s as what, each of want that s lacks and each of not that it has.
func Contains(t testing.TB, what, s string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
	for _, n := range not {
		if strings.Contains(s, n) {
			t.Errorf("%s has %q:\n%s", what, n, s)
		}
	}
}

// WantErr checks err against want, a text the error must contain, and prefix, how it must
// start (the package's "name: ", or ""). It reports whether an error was wanted, for the caller
// to stop there. With want "", any error ends the test.
func WantErr(t testing.TB, err error, prefix, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one starting %q and containing %q", err, prefix, want)
	}
	return true
}

// WaitDone blocks an HTTP handler until the client gives up on the request, at most a few
// seconds: a server that never answers in time.
func WaitDone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}
