package testlib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a testing.TB that keeps the failures the helpers report instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.failures = append(r.failures, fmt.Sprint(args...)) }

func TestContains(t *testing.T) {
	tests := []struct {
		name      string
		want, not []string
		failures  int
	}{
		{"all there, none of the others", []string{"quick", "fox"}, []string{"cat"}, 0},
		{"one lacking", []string{"quick", "dog"}, nil, 1},
		{"one there that must not be", nil, []string{"brown", "cat"}, 1},
		{"both", []string{"dog"}, []string{"fox"}, 2},
	}
	for _, tt := range tests {
		r := &recorder{TB: t}
		Contains(r, "the text", "the quick brown fox", tt.want, tt.not)
		if len(r.failures) != tt.failures {
			t.Errorf("%s: failures %q, want %d", tt.name, r.failures, tt.failures)
		}
	}
}

func TestWantErr(t *testing.T) {
	tests := []struct {
		name, err, want string // err "": no error
		wanted          bool
		failures        int
	}{
		{"no error, none wanted", "", "", false, 0},
		{"an error, none wanted", "pkg: boom", "", false, 1},
		{"the error wanted", "pkg: boom at line 3", "line 3", true, 0},
		{"no error, one wanted", "", "line 3", true, 1},
		{"another error", "pkg: boom", "line 3", true, 1},
		{"no package prefix", "boom at line 3", "line 3", true, 1},
	}
	for _, tt := range tests {
		var err error
		if tt.err != "" {
			err = errors.New(tt.err)
		}
		r := &recorder{TB: t}
		if got := WantErr(r, err, "pkg: ", tt.want); got != tt.wanted || len(r.failures) != tt.failures {
			t.Errorf("%s: WantErr = %v, failures %q; want %v, %d", tt.name, got, r.failures, tt.wanted, tt.failures)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	WriteFiles(t, dir, Files{"a/b/SKILL.md": SkillMD("body\n", "name: b", "description: B."), "top.txt": "x"})
	p := WriteFile(t, dir, "c/d.json", "{}")
	want := map[string]string{
		"a/b/SKILL.md": "---\nname: b\ndescription: B.\n---\nbody\n",
		"top.txt":      "x",
		"c/d.json":     "{}",
	}
	got := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(dir, path)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return err
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if p != filepath.Join(dir, "c", "d.json") {
		t.Errorf("WriteFile = %s, want the path it wrote", p)
	}
}
