//go:build !linux

package atomicfile

// writeUnnamed is Linux's (O_TMPFILE); elsewhere Write uses a named temporary file.
func writeUnnamed(string, []byte, bool) (bool, error) { return false, nil }
