//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package learn

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens DIR/gateway.lock without locking it: this system has no flock, so nothing
// stops two gateways from sharing a state directory there.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("learn: state dir: %w", err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	if err := f.Close(); err != nil {
		return fmt.Errorf("learn: %w", err)
	}
	return nil
}
