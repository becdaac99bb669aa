//go:build !unix

package ingest

import "os"

// OpenFlags open a library file; without O_NONBLOCK the type checks before and after opening are the guard.
const OpenFlags = os.O_RDONLY
