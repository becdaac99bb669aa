package learn

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/caskg/caskg/native/internal/builder"
)

// UndoneFile holds the traces a Rollback took out of traces.jsonl, one a line as they were.
const UndoneFile = "traces.undone.jsonl"

// Rollback puts the previous graph (graph.prev.skg and its sidecars) back in place of the
// current one and undoes what the current one learned: the traces it learned beyond the
// previous graph's move from the trace files (rotated or not) to traces.undone.jsonl, so that
// the next start does not learn them again (Relearn takes them back). The undone graph is
// deleted, not kept as the previous one: a second Rollback finds no previous graph rather than
// swapping the two back.
// Traces recorded after the current graph was built stay in traces.jsonl and are learned at the
// next start. It refuses while a gateway has the directory open (stop the gateway first), and
// when there is no previous graph or it does not decode. It returns how many traces it undid.
//
// traces.jsonl stays what the graph learned, so the graph is still the one caskg build of the
// catalog and traces.jsonl makes. Each file is replaced whole, graph first: a kill midway leaves
// the previous graph in place with the undone traces still in traces.jsonl (the next start
// learns them again, as before this rollback), or in both files (Relearn skips a trace that
// traces.jsonl already has).
func Rollback(dir string) (int, error) {
	// The traces a killed gateway had open come after every graph's; recorded now (offline),
	// before the trace files change, a stale one (ended and learned since) is not taken for new
	// once this rollback has set it aside.
	unlock, err := offline(dir)
	if err != nil {
		return 0, rollbackError(err)
	}
	defer unlock()
	graph, prevPath := filepath.Join(dir, GraphFile), filepath.Join(dir, PrevFile)
	prev, problems, err := readTrio(prevPath)
	switch {
	case err != nil:
		return 0, rollbackError(err)
	case prev == nil && len(problems) > 0:
		return 0, fmt.Errorf("learn: rollback: %s", problems[0])
	case prev == nil:
		return 0, fmt.Errorf("learn: rollback: no previous graph in %s (there is one after each update, and none after a rollback)", dir)
	}
	cur, _, err := readTrio(graph)
	if err != nil {
		return 0, rollbackError(err)
	}
	if err := writeTrio(graph, prev.data, prev.stateRaw, prev.metaRaw); err != nil {
		return 0, rollbackError(err)
	}
	undone := 0
	if from, to := learnedBy(prev), learnedBy(cur); to > from {
		if undone, err = undoTraces(dir, from, to); err != nil {
			return 0, rollbackError(err)
		}
	}
	for _, p := range []string{prevPath, prevPath + builder.StateSuffix, prevPath + metaSuffix} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return undone, fmt.Errorf("learn: rollback: %w", err)
		}
	}
	return undone, nil
}

// learnedBy is how many of the first traces of traces.jsonl the graph c learned; 0 for none.
func learnedBy(c *current) int {
	switch {
	case c == nil:
		return 0
	case c.state != nil:
		return c.state.NumRuns()
	}
	return c.meta.Traces
}

// traceLines splits traces.jsonl into its lines, newline included, and tells which are traces
// (a line that is not, blank or bad, is kept where it is and never moved).
func traceLines(data []byte) (lines [][]byte, isTrace []bool) {
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n') + 1
		if end == 0 {
			end = len(data)
		}
		ln := data[:end]
		_, err := builder.ParseTrace(bytes.TrimSpace(ln))
		lines, isTrace = append(lines, ln), append(isTrace, err == nil && len(bytes.TrimSpace(ln)) > 0)
		data = data[end:]
	}
	return lines, isTrace
}

// undoTraces moves the traces from..to-1 (counting traces, not lines, across the rotated trace
// files and traces.jsonl in order) to the end of traces.undone.jsonl, and returns how many it
// moved. Each trace file it takes lines from is rewritten whole, in order; a rotated file left
// without a line is removed.
func undoTraces(dir string, from, to int) (int, error) {
	paths, _, err := traceFiles(dir)
	if err != nil {
		return 0, err
	}
	type rewrite struct {
		path string
		keep []byte
	}
	var rewrites []rewrite
	var undone []byte
	k, moved := 0, 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return 0, err
		}
		lines, isTrace := traceLines(data)
		var keep []byte
		took := false
		for i, ln := range lines {
			if isTrace[i] {
				k++
				if k > from && k <= to {
					undone = append(undone, withNewline(ln)...)
					moved++
					took = true
					continue
				}
			}
			keep = append(keep, ln...)
		}
		if took {
			rewrites = append(rewrites, rewrite{path, keep})
		}
	}
	if len(undone) == 0 {
		return 0, nil
	}
	if err := appendSynced(filepath.Join(dir, UndoneFile), undone); err != nil {
		return 0, err
	}
	for _, r := range rewrites {
		if len(r.keep) == 0 && filepath.Base(r.path) != TracesFile {
			if err := os.Remove(r.path); err != nil {
				return 0, err
			}
			continue
		}
		if err := atomicWrite(r.path, r.keep); err != nil {
			return 0, err
		}
	}
	return moved, nil
}

// offline takes the state directory for a command that runs while no gateway has it open
// (Rollback, Relearn): it locks it, then records the traces a killed gateway had open
// (traces.open.jsonl), so that the command sees every trace. unlock releases the lock.
func offline(dir string) (unlock func(), err error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if _, err := recoverOpen(dir, func(string, ...any) {}); err != nil {
		unlockDir(lock)
		return nil, err
	}
	return func() { unlockDir(lock) }, nil
}

// Relearn moves the traces that rollbacks undid (traces.undone.jsonl) back to the end of
// traces.jsonl, so that the next start learns them; a trace a trace file (rotated or not)
// already has is left out. It refuses while a gateway has the directory open, and returns how
// many traces it moved.
func Relearn(dir string) (int, error) {
	unlock, err := offline(dir)
	if err != nil {
		return 0, relearnError(err)
	}
	defer unlock()
	undonePath := filepath.Join(dir, UndoneFile)
	undone, err := os.ReadFile(undonePath)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, relearnError(err)
	}
	n, err := appendMissing(dir, undone, builder.Trace.Key, func(string, ...any) {})
	if err != nil {
		return 0, relearnError(err)
	}
	if err := os.Remove(undonePath); err != nil {
		return n, relearnError(err)
	}
	return n, nil
}

// appendMissing appends to traces.jsonl the trace lines of extra whose key no trace file
// (rotated or not) has, each key once, and returns how many. A torn last line of traces.jsonl
// is cut off first, as Open would (reported through logf), so that an appended line does not
// continue it; a whole last line without its newline gets one.
func appendMissing(dir string, extra []byte, key func(builder.Trace) string, logf func(string, ...any)) (int, error) {
	paths, _, err := traceFiles(dir)
	if err != nil {
		return 0, fmt.Errorf("learn: %w", err)
	}
	have := map[string]bool{}
	var active []byte // traces.jsonl's, the last of paths
	for _, p := range paths {
		active, err = os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("learn: %w", err)
		}
		lines, isTrace := traceLines(active)
		for i, ln := range lines {
			if isTrace[i] {
				t, _ := builder.ParseTrace(bytes.TrimSpace(ln))
				have[key(t)] = true
			}
		}
	}
	var add []byte
	n := 0
	lines, isTrace := traceLines(extra)
	for i, ln := range lines {
		if !isTrace[i] {
			continue
		}
		t, _ := builder.ParseTrace(bytes.TrimSpace(ln))
		if !have[key(t)] {
			have[key(t)] = true
			add = append(add, withNewline(ln)...)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	path := filepath.Join(dir, TracesFile)
	r := recoverTraces(active)
	if r.keep < int64(len(active)) {
		if r.torn > 0 {
			logf("learn: %s:%d: cut off a torn last line of %d bytes (the gateway was killed while writing it)", path, r.torn, int64(len(active))-r.keep)
		}
		if err := os.Truncate(path, r.keep); err != nil {
			return 0, fmt.Errorf("learn: repairing %s: %w", path, err)
		}
	}
	if r.newline {
		add = append([]byte{'\n'}, add...)
	}
	if err := appendSynced(path, add); err != nil {
		return 0, fmt.Errorf("learn: %w", err)
	}
	return n, nil
}

func withNewline(ln []byte) []byte {
	if len(ln) > 0 && ln[len(ln)-1] != '\n' {
		return append(ln[:len(ln):len(ln)], '\n')
	}
	return ln
}

// appendSynced appends data to the file at path, creating it, and fsyncs it.
func appendSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// rollbackError words err, a learn error, as Rollback's.
func rollbackError(err error) error {
	return errors.New("learn: rollback: " + strings.TrimPrefix(err.Error(), "learn: "))
}

// relearnError words err, a learn error, as Relearn's.
func relearnError(err error) error {
	return errors.New("learn: relearn: " + strings.TrimPrefix(err.Error(), "learn: "))
}
