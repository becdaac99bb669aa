// Package mdspan rewrites the generated span of a Markdown file: what lies between a begin and
// an end marker (HTML comments such as <!-- eval:begin --> and <!-- eval:end -->). make eval
// and make bench keep their README sections this way; the text outside the markers is the
// authors' and is never touched.
package mdspan

import (
	"bytes"
	"fmt"
	"os"

	"github.com/caskg/caskg/native/atomicfile"
)

// Replace returns doc with what lies between begin and end replaced by body, the markers kept.
// Each marker must appear exactly once, begin first. The span always reads "begin\nbody\nend":
// body's trailing newlines are folded into one, so a second rewrite with the same body changes
// nothing.
func Replace(doc []byte, begin, end string, body []byte) ([]byte, error) {
	for _, m := range []string{begin, end} {
		if n := bytes.Count(doc, []byte(m)); n != 1 {
			return nil, fmt.Errorf("mdspan: marker %s appears %d times, want once", m, n)
		}
	}
	b, e := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if e < b {
		return nil, fmt.Errorf("mdspan: marker %s comes before %s", end, begin)
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(begin)])
	out.WriteByte('\n')
	out.Write(bytes.TrimRight(body, "\n"))
	out.WriteByte('\n')
	out.Write(doc[e:])
	return out.Bytes(), nil
}

// UpdateFile rewrites the span between begin and end of the file at path with body,
// atomically. A file whose span already holds body is not written; a file whose markers are
// wrong is left alone and named in the error.
func UpdateFile(path, begin, end string, body []byte) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := Replace(doc, begin, end, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return nil
	}
	return atomicfile.Write(path, out)
}
