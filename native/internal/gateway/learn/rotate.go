package learn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultRotateBytes is the size at which traces.jsonl is rotated when Options.RotateBytes is
// 0. A trace line is a few hundred bytes, so 64 MiB holds a couple of hundred thousand traces:
// months of a team's work, and a file any editor, jq or backup tool still handles whole.
const DefaultRotateBytes = 64 << 20

// Rotated trace files are named traces.NNNNNN.jsonl, numbered from 1 in the order they were
// rotated: the oldest has the lowest number, and traces.jsonl, the one appended to, comes
// after them all. The digits keep them apart from traces.undone.jsonl and traces.open.jsonl
// (the shell glob traces.[0-9]*.jsonl names exactly the rotated ones), and sorting by
// number, not by name, keeps the order past 999,999.
const (
	rotatedPrefix = "traces."
	rotatedSuffix = ".jsonl"
)

func rotatedName(n int) string { return fmt.Sprintf("%s%06d%s", rotatedPrefix, n, rotatedSuffix) }

// rotatedNumber is the number of a rotated trace file's name; ok is false for any other name.
func rotatedNumber(name string) (n int, ok bool) {
	mid, ok := strings.CutPrefix(name, rotatedPrefix)
	if !ok {
		return 0, false
	}
	if mid, ok = strings.CutSuffix(mid, rotatedSuffix); !ok || mid == "" || len(mid) > 9 {
		return 0, false
	}
	for i := range len(mid) {
		if mid[i] < '0' || mid[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(mid)
	return n, err == nil && n > 0
}

// traceFiles lists dir's trace files in the order their traces were recorded: the rotated
// ones by number, then traces.jsonl (listed whether or not it exists). last is the highest
// rotated number, 0 for none.
func traceFiles(dir string) (paths []string, last int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var nums []int
	for _, e := range entries {
		if n, ok := rotatedNumber(e.Name()); ok && e.Type().IsRegular() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		paths = append(paths, filepath.Join(dir, rotatedName(n)))
	}
	if len(nums) > 0 {
		last = nums[len(nums)-1]
	}
	return append(paths, filepath.Join(dir, TracesFile)), last, nil
}

// readRotated reads the rotated trace files of dir into the loop, oldest first. They are never
// written again, so a bad line is reported and skipped, never repaired: a rotation renames a
// file that holds whole, fsynced lines only.
func (l *Loop) readRotated() error {
	paths, last, err := traceFiles(l.dir)
	if err != nil {
		return fmt.Errorf("learn: %w", err)
	}
	for _, path := range paths[:len(paths)-1] {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("learn: %w", err)
		}
		r := recoverTraces(data)
		for _, b := range r.bad {
			l.opt.Logf("learn: %s:%d: skipped: %v", path, b.line, b.err)
		}
		if r.torn > 0 {
			l.opt.Logf("learn: %s:%d: skipped: the last line is not a whole trace", path, r.torn)
		}
		for _, t := range r.traces {
			l.addTrace(t)
		}
	}
	l.rotated = last
	return nil
}

// rotateLocked renames traces.jsonl to the next rotated name and starts a new, empty one;
// l.wmu is held and the file holds whole lines only. On failure appends go on to the old file
// (under its old name: a rename that went through is undone), and the next Record tries again.
func (l *Loop) rotateLocked() error {
	path := filepath.Join(l.dir, TracesFile)
	next := filepath.Join(l.dir, rotatedName(l.rotated+1))
	if _, err := os.Lstat(next); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("learn: rotating %s: %s exists", TracesFile, next)
	}
	if err := os.Rename(path, next); err != nil {
		return fmt.Errorf("learn: rotating %s: %w", TracesFile, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		if f != nil {
			f.Close()
			os.Remove(path)
		}
		if rerr := os.Rename(next, path); rerr != nil {
			// The old descriptor still appends to the renamed file, which the next Open reads
			// in its place among the rotated ones: nothing is lost or reordered.
			l.rotated++
			return fmt.Errorf("learn: rotating %s: %w (and renaming it back: %v)", TracesFile, err, rerr)
		}
		return fmt.Errorf("learn: rotating %s: %w", TracesFile, err)
	}
	l.tf.Close()
	l.tf, l.tsize = f, 0
	l.rotated++
	l.opt.Logf("learn: %s rotated to %s", TracesFile, filepath.Base(next))
	return nil
}

// syncDir fsyncs the directory, so that a rename in it survives a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
