// Package atomicfile writes files so that a reader or a crash never sees half of one: the data
// goes to a temporary file in the same folder, is synced, and replaces the target by a rename.
// The CLI's artifacts, reports and README sections and caskg-bench's results all go through it,
// and so do the LLM answer and embedding caches, without the sync (WriteNoSync).
//
// On Linux the data goes into an unnamed file (O_TMPFILE) that is given a name only once it is
// complete, so a process killed while writing leaves nothing. Elsewhere, and where the file
// system has no O_TMPFILE, the temporary file of a target "name" is ".name.tmp" followed by
// decimal digits: a process killed mid-write leaves it behind, and the next Write to the same
// target removes such files once they are staleAfter old.
package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staleAfter is how long a temporary file goes unmodified before Write takes it for the
// leftover of a killed writer. A live writer's file is modified as the data goes in, and only
// the sync and the rename follow.
const staleAfter = time.Minute

// Write writes data to path (mode 0644) through a temporary file in the same directory and a
// rename, so a crash never leaves a half-written file where a good one was. It first removes
// stale temporary files of the same target (see the package comment).
func Write(path string, data []byte) error {
	removeStale(path, time.Now().Add(-staleAfter))
	return write(path, data, true)
}

// removeStale removes the temporary files of path not modified since before: regular files whose
// name is exactly the pattern write gives path's, nothing else. Errors are ignored; a leftover
// that cannot be removed is no reason to fail a write.
func removeStale(path string, before time.Time) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !isTempName(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(before) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// tempPrefix is what the temporary files of path are named with, before the random digits.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// isTempName reports whether name is prefix followed by one or more decimal digits, the names
// os.CreateTemp gives for the pattern prefix+"*".
func isTempName(name, prefix string) bool {
	digits, ok := strings.CutPrefix(name, prefix)
	if !ok || digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// WriteNoSync is Write without the fsync, for caches of many small files whose readers check
// every entry. A killed process still leaves the old file or the new one, never half of one;
// after a power loss the file may be empty or torn, which such a reader takes for a miss. It
// saves a disk flush per file, which adds up over thousands of cache entries (on macOS Go's
// Sync is a full flush of the drive's cache). It does not look for stale temporary files: a
// cache folder holds thousands of entries, and reading it at every write would cost more than
// the write.
func WriteNoSync(path string, data []byte) error { return write(path, data, false) }

func write(path string, data []byte, sync bool) error {
	if done, err := writeUnnamed(path, data, sync); done {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil && sync {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return nil
}
