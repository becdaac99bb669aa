package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name  string
		write func(string, []byte) error
	}{
		{"Write", Write},
		{"WriteNoSync", WriteNoSync},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.skg")
			for _, data := range []string{"first", "second, longer than the first", ""} {
				if err := tt.write(path, []byte(data)); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != data {
					t.Fatalf("read back %q, %v; want %q", got, err, data)
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
					t.Errorf("mode %v, want 0644", fi.Mode().Perm())
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%d files in the folder, want only the target (no temporary left)", len(entries))
			}
			// A folder that does not exist: an error, and nothing written.
			if err := tt.write(filepath.Join(dir, "missing", "x"), []byte("x")); err == nil {
				t.Error("writing into a missing folder succeeded")
			}
		})
	}
}

// TestWriteRemovesStaleTemp leaves what a writer killed mid-write leaves, a temporary file of
// the target, and checks that the next Write removes it once it is stale, and leaves alone
// fresh ones (a writer still at work), other targets' and other look-alike files.
func TestWriteRemovesStaleTemp(t *testing.T) {
	old := time.Now().Add(-2 * staleAfter)
	tests := []struct {
		name  string
		old   bool // modified long ago
		gone  bool // the write to out.skg removes it
		isDir bool
	}{
		{".out.skg.tmp123456", true, true, false},
		{".out.skg.tmp9", true, true, false},
		{".out.skg.tmp42", false, false, false},    // a live writer's
		{".out.skg.tmp", true, false, false},       // no digits
		{".out.skg.tmp12x", true, false, false},    // not digits only
		{".out.skg.old.tmp12", true, false, false}, // another target
		{".other.skg.tmp77", true, false, false},   // another target
		{"out.skg.tmp55", true, false, false},      // not hidden
		{".out.skg.tmp31337", true, false, true},   // a folder
		{".xout.skg.tmp1", true, false, false},     // another target
		{".out.skg.tmp1.json", true, false, false}, // a suffix
		{".out.skg.tmp0000001", true, true, false}, // digits all the same
		{".out.skg.tmp4294967295", true, true, false},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		var err error
		if tt.isDir {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte("half an artifact"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if tt.old {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := Write(filepath.Join(dir, "out.skg"), []byte("whole")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, err := os.Lstat(filepath.Join(dir, tt.name))
		if gone := errors.Is(err, fs.ErrNotExist); gone != tt.gone {
			t.Errorf("%s: removed %v, want %v (stat: %v)", tt.name, gone, tt.gone, err)
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out.skg")); err != nil || string(got) != "whole" {
		t.Errorf("out.skg holds %q (%v), want %q", got, err, "whole")
	}
}
