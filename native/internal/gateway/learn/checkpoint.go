package learn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/caskg/caskg/native/internal/builder"
)

// OpenTracesFile holds the traces a gateway's sessions had open at its last checkpoint, one a
// line, each with the calls it had then. A trace is written to traces.jsonl only when it
// ends; a session that never pauses would keep its calls in memory only, for a kill -9 to
// lose. The gateway checkpoints every trace gap, so a kill loses at most the calls of the
// last gap: the next Open (or Rollback, or Relearn) records the traces of this file that no
// trace file has (by ID; a trace that ended after the checkpoint is there already, whole)
// and removes it.
const OpenTracesFile = "traces.open.jsonl"

// Checkpoint replaces traces.open.jsonl by the traces open, atomically and fsynced; with none
// it removes the file. A gateway calls it with every open trace, not only the changed ones:
// the file is the open traces as of the last call, and a trace that has ended since is left
// out of the next one.
func (l *Loop) Checkpoint(open []Trace) error {
	var data []byte
	for _, t := range open {
		if l.opt.NoTaskText {
			t.Task = ""
		}
		line, err := encodeLine(t)
		if err != nil {
			return err
		}
		data = append(data, line...)
	}
	l.jmu.Lock()
	defer l.jmu.Unlock()
	if err := l.open(); err != nil {
		return err
	}
	path := filepath.Join(l.dir, OpenTracesFile)
	if len(data) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("learn: checkpoint: %w", err)
		}
		return nil
	}
	if err := atomicWrite(path, data); err != nil {
		return fmt.Errorf("learn: checkpoint: %w", err)
	}
	return nil
}

// recoverOpen appends to traces.jsonl the traces of dir's traces.open.jsonl that no trace file
// has (by ID), and removes it; it returns how many it appended. The directory is locked. A
// torn last line of traces.jsonl is cut off first, as Open would, so that an appended trace
// does not continue it.
func recoverOpen(dir string, logf func(string, ...any)) (int, error) {
	jpath := filepath.Join(dir, OpenTracesFile)
	journal, err := os.ReadFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("learn: %w", err)
	}
	n, err := appendMissing(dir, journal, func(t builder.Trace) string { return t.ID }, logf)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		logf("learn: %s: recorded %d traces that were open when the gateway stopped without ending them", jpath, n)
	}
	if err := os.Remove(jpath); err != nil {
		return n, fmt.Errorf("learn: %w", err)
	}
	return n, nil
}
