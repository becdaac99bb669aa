//go:build unix

package ingest

import "syscall"

// OpenFlags open a library file without blocking: a named pipe swapped in for a file after its
// type was checked opens at once instead of waiting for a writer, and the check after opening
// rejects it.
const OpenFlags = syscall.O_RDONLY | syscall.O_NONBLOCK
