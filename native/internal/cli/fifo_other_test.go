//go:build !unix

package cli

import "testing"

// mkfifo skips the test: this platform has no named pipes.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	t.Skip("no named pipes on this platform")
}
