// Package atomicfile writes files so that a reader or a crash never sees half of one: the data
// goes to a temporary file in the same folder, is synced, and replaces the target by a rename.
// The CLI's artifacts, reports and README sections and caskg-bench's results all go through it,
// and so do the LLM answer and embedding caches, without the sync (WriteNoSync).
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path (mode 0644) through a temporary file in the same directory and a
// rename, so a crash never leaves a half-written file where a good one was.
func Write(path string, data []byte) error { return write(path, data, true) }

// WriteNoSync is Write without the fsync, for caches of many small files whose readers check
// every entry. A killed process still leaves the old file or the new one, never half of one;
// after a power loss the file may be empty or torn, which such a reader takes for a miss. It
// saves a disk flush per file, which adds up over thousands of cache entries (on macOS Go's
// Sync is a full flush of the drive's cache).
func WriteNoSync(path string, data []byte) error { return write(path, data, false) }

func write(path string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
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
