package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data into an unnamed file of path's folder (O_TMPFILE), so a process
// killed while the data goes in leaves nothing behind, then names it: a link under a temporary
// name and a rename over path, the only moments a name other than path's exists. It reports
// false, and writes nothing, where the file system or kernel has no O_TMPFILE or /proc (the
// caller then writes a named temporary file).
func writeUnnamed(path string, data []byte, sync bool) (bool, error) {
	dir := filepath.Dir(path)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return false, nil
		}
		return true, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err != nil {
		return true, err // the unnamed file goes with the descriptor
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return true, err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // linkat does not replace: the name is taken only to be unique
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) && !exists("/proc/self/fd") {
			return false, nil
		}
		return true, &os.LinkError{Op: "link", Old: src, New: name, Err: err}
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return true, err
	}
	return true, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
