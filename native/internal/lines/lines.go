// Package lines reads line-oriented input (JSONL task sets, traces, batch queries) for the
// builder, eval, the CLI and the lab: one reader, so that a blank line, a line's number and the
// limit on a line's length mean the same in every file caskg reads.
package lines

import (
	"bufio"
	"bytes"
	"io"
)

// Each calls fn for every line of r that is not blank, white space trimmed, with its
// 1-based number, up to 16 MiB a line. It stops at the first error, fn's or the reader's, and
// returns it with the number of its line, for the caller to name in its own words.
func Each(r io.Reader, fn func(line int, data []byte) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		data := bytes.TrimSpace(sc.Bytes())
		if len(data) == 0 {
			continue
		}
		if err := fn(line, data); err != nil {
			return line, err
		}
	}
	if err := sc.Err(); err != nil {
		return line + 1, err
	}
	return 0, nil
}
