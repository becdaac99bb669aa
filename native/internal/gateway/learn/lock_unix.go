//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package learn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes DIR/gateway.lock, so that two gateways never append to one traces.jsonl and
// Rollback never swaps a graph under a running loop. The kernel drops the lock with the
// process, so a killed gateway leaves none behind.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("learn: state dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("learn: state dir %s is in use by another caskg gateway", dir)
		}
		return nil, fmt.Errorf("learn: locking %s: %w", path, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	if err := f.Close(); err != nil { // closing releases the lock
		return fmt.Errorf("learn: %w", err)
	}
	return nil
}
