package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
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
