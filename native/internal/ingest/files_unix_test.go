//go:build unix

package ingest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/caskg/caskg/native/testlib/fixture"
)

// loadWithin runs LoadWith and fails the test, instead of hanging it, when Load does not
// return within a few seconds.
func loadWithin(t *testing.T, opt Options, paths ...string) (*Library, error) {
	t.Helper()
	type result struct {
		lib *Library
		err error
	}
	done := make(chan result, 1)
	go func() {
		lib, err := LoadWith(opt, paths...)
		done <- result{lib, err}
	}()
	select {
	case r := <-done:
		return r.lib, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%q) still running after 10s: it hangs on a file", paths)
		return nil, nil
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
}

// TestSpecialFiles checks that what is not a regular file — a named pipe, a socket, a folder
// named SKILL.md, symlinks to them or out of the library — is skipped with a reason instead
// of read (a named pipe without a writer would block the read forever).
func TestSpecialFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	fixture.WriteFiles(t, ".", files{
		"lib/good/SKILL.md":     skillMD("", "name: good", "description: Fine."),
		"lib/inside/real.md":    skillMD("", "name: inside", "description: Reached by a symlink that stays in the library."),
		"lib/folder/SKILL.md/x": "a folder named SKILL.md is walked into, and holds no skill",
		"outside/SKILL.md":      skillMD("", "name: outside", "description: Never read through the library."),
	})
	mkfifo(t, "lib/fifo/SKILL.md")
	mkfifo(t, "pipe.json")
	for link, target := range map[string]string{
		"lib/link-in/SKILL.md":     "../inside/real.md",
		"lib/link-out/SKILL.md":    "../../outside/SKILL.md",
		"lib/link-fifo/SKILL.md":   "../fifo/SKILL.md",
		"lib/link-dir/SKILL.md":    "../good",
		"lib/link-broken/SKILL.md": "../nowhere/SKILL.md",
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll("lib/socket", 0o755); err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("unix", "lib/socket/SKILL.md"); err == nil {
		defer l.Close()
	} else {
		t.Logf("no unix socket: %v", err) // the socket line below is then absent
	}

	lib, err := loadWithin(t, Options{}, "lib", "pipe.json")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range lib.Skills {
		names = append(names, s.Name+" "+s.Path)
	}
	if diff := cmp.Diff([]string{"good lib/good/SKILL.md", "inside lib/link-in/SKILL.md"}, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	abs, _ := filepath.EvalSymlinks("outside/SKILL.md")
	want := []string{
		"lib/fifo/SKILL.md: not a regular file: named pipe; skipped",
		"lib/link-broken/SKILL.md: cannot read: broken symlink: no such file or directory",
		"lib/link-dir/SKILL.md: not a regular file: directory; skipped",
		"lib/link-fifo/SKILL.md: not a regular file: named pipe; skipped",
		`lib/link-in/SKILL.md:2: field "name": name "inside" differs from its folder "link-in" (the Agent Skills spec wants them equal); kept`,
		"lib/link-out/SKILL.md: symlink leaves the library (to " + filepath.ToSlash(abs) + "); skipped",
		"lib/socket/SKILL.md: not a regular file: socket; skipped",
		"pipe.json: not a regular file: named pipe; skipped",
	}
	var got []string
	for _, p := range lib.Problems {
		got = append(got, p.Error())
	}
	if _, err := os.Lstat("lib/socket/SKILL.md"); err != nil {
		want = append(want[:6], want[7:]...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	// Strict: the first of them is fatal.
	_, err = loadWithin(t, Options{Strict: true}, "lib")
	if err == nil || err.Error() != "ingest: "+want[0] {
		t.Errorf("strict: error %v, want %q", err, "ingest: "+want[0])
	}
	// Given directly, a symlink may lead anywhere, but only to a regular file.
	if err := os.Symlink("outside/SKILL.md", "direct.md"); err != nil {
		t.Fatal(err)
	}
	lib, err = loadWithin(t, Options{}, "direct.md")
	if err != nil || len(lib.Skills) != 1 || lib.Skills[0].Name != "outside" {
		t.Errorf("Load(direct.md): %v, %v; want the skill outside", lib, err)
	}
}

// TestFIFOSwappedIn checks the guard after opening: a named pipe opened where the walk saw a
// regular file (the race between the check and the open) is rejected without blocking.
func TestFIFOSwappedIn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "SKILL.md")
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(p, OpenFlags, 0)
		if err != nil {
			done <- err
			return
		}
		_, prob, err := readFile(f)
		if err == nil && (prob == nil || !strings.Contains(prob.Msg, "named pipe")) {
			t.Errorf("readFile of a named pipe: problem %v, want one naming it", prob)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening and reading a named pipe still blocks after 10s")
	}
}

// TestSymlinkedFolders checks that no symlinked folder is passed over silently: a linked skill
// folder is read wherever it leads, and a loop, a second name and a linked collection are
// skipped with a reason.
func TestSymlinkedFolders(t *testing.T) {
	t.Chdir(t.TempDir())
	fixture.WriteFiles(t, ".", files{
		"lib/good/SKILL.md":          skillMD("", "name: good", "description: Fine."),
		"lib/.store/hidden/SKILL.md": skillMD("", "name: hidden", "description: Kept where the walk does not go."),
		"elsewhere/pdf/SKILL.md":     skillMD("", "name: pdf", "description: Linked in from another folder."),
		"elsewhere/pdf/sub/SKILL.md": skillMD("", "name: nested", "description: Under a linked skill folder: not walked."),
		"collection/a/SKILL.md":      skillMD("", "name: a", "description: In a linked collection."),
	})
	for link, target := range map[string]string{
		"lib/pdf":       "../elsewhere/pdf",
		"lib/pdf-again": "../elsewhere/pdf",
		"lib/hidden":    ".store/hidden",
		"lib/good/loop": "..",
		"lib/twin":      "good",
		"lib/coll":      "../collection",
		"lib/file-link": "good/SKILL.md",
		"lib/dangling":  "nowhere",
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := loadWithin(t, Options{}, "lib")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range lib.Skills {
		names = append(names, s.Name+" "+s.Source)
	}
	if diff := cmp.Diff([]string{"good lib/good/SKILL.md", "hidden lib/hidden/SKILL.md", "pdf lib/pdf/SKILL.md"}, names); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	coll, _ := filepath.EvalSymlinks("collection")
	pdf, _ := filepath.EvalSymlinks("elsewhere/pdf")
	want := []string{
		"lib/coll: symlinked folder: leads to " + filepath.ToSlash(coll) + ", which holds no SKILL.md; give a folder of skills as a LIBRARY of its own; skipped",
		"lib/good/loop: symlinked folder: leads to . of the same library, which is read as it is (a loop or a second name); skipped",
		"lib/pdf-again: symlinked folder: leads to " + filepath.ToSlash(pdf) + ", already read through another link; skipped",
		"lib/twin: symlinked folder: leads to good of the same library, which is read as it is (a loop or a second name); skipped",
	}
	var got []string
	for _, p := range lib.Problems {
		got = append(got, p.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
