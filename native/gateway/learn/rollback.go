package learn

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Rollback puts the previous graph (graph.prev.skg and its sidecars) back in place of the
// current one, which becomes the previous: a second Rollback undoes the first. It refuses while
// a gateway has the directory open (stop the gateway first), and when there is no previous
// graph or it does not decode.
//
// The traces stay in traces.jsonl: the restored graph learned fewer of them, and the next
// update learns the rest again (remove them from the file to forget them). A previous graph
// built from another catalog than catalog.json is rebuilt once the gateway sets its catalog.
//
// Each file is replaced whole. A kill midway leaves the previous graph in place and possibly
// also as the previous one; the current graph is then lost, but it is rebuilt from the traces.
func Rollback(dir string) error {
	lock, err := lockDir(dir)
	if err != nil {
		return rollbackError(err)
	}
	defer unlockDir(lock)
	graph, prevPath := filepath.Join(dir, GraphFile), filepath.Join(dir, PrevFile)
	prev, problems, err := readTrio(prevPath)
	switch {
	case err != nil:
		return rollbackError(err)
	case prev == nil && len(problems) > 0:
		return fmt.Errorf("learn: rollback: %s", problems[0])
	case prev == nil:
		return fmt.Errorf("learn: rollback: no previous graph in %s (there is one after the first update)", dir)
	}
	cur, _, err := readTrio(graph)
	if err != nil {
		return rollbackError(err)
	}
	if err := writeTrio(graph, prev.data, prev.stateRaw, prev.metaRaw); err != nil {
		return rollbackError(err)
	}
	if cur != nil {
		if err := writeTrio(prevPath, cur.data, cur.stateRaw, cur.metaRaw); err != nil {
			return rollbackError(err)
		}
	}
	return nil
}

// rollbackError words err, a learn error, as Rollback's.
func rollbackError(err error) error {
	return errors.New("learn: rollback: " + strings.TrimPrefix(err.Error(), "learn: "))
}
