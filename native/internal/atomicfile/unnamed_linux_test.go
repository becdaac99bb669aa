package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteUnnamed checks that on Linux the data is written through an unnamed file: Write
// takes that path (so a kill mid-write leaves no temporary file), and what it leaves is the
// target alone, whole, with mode 0644, replacing an older one.
func TestWriteUnnamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("caskg "), 100_000)
	for _, sync := range []bool{true, false} {
		done, err := writeUnnamed(path, data, sync)
		if !done {
			t.Skipf("%s has no O_TMPFILE: Write falls back to a named temporary file", dir)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(data))
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1 {
			t.Errorf("folder holds %v (%v), want the target alone", ents, err)
		}
	}
	if done, err := writeUnnamed(filepath.Join(dir, "missing", "x"), data, true); !done || err == nil {
		t.Errorf("a missing folder: done %v, err %v; want done and an error", done, err)
	}
}
