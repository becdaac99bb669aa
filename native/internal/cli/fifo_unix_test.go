//go:build unix

package cli

import (
	"syscall"
	"testing"
)

// mkfifo makes a named pipe at path, or skips the test where there are none.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
}
