// Package mdspan rewrites the generated span of a Markdown file: what lies between a begin and
// an end marker (HTML comments such as <!-- eval:begin --> and <!-- eval:end -->). make eval
// and make bench keep their generated sections (the README's results, docs/evaluation.md's
// benchmarks) this way; the text outside the markers is the authors' and is never touched.
// Figures are the same idea inside a sentence: a number between <!-- size:NAME --> and
// <!-- /size --> that make wasm and make worker write from the build.
package mdspan

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/caskg/caskg/native/internal/atomicfile"
)

// replace returns doc with what lies between begin and end replaced by body, the markers kept.
// Each marker must appear exactly once, begin first. The span always reads "begin\nbody\nend":
// body's trailing newlines are folded into one, so a second rewrite with the same body changes
// nothing.
func replace(doc []byte, begin, end string, body []byte) ([]byte, error) {
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
	out, err := replace(doc, begin, end, body)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return nil
	}
	return atomicfile.Write(path, out)
}

// A figure is a number inside prose that a measurement writes, so that it cannot drift from
// what it measures: "<!-- size:NAME -->VALUE<!-- /size -->" on one line. make wasm and make
// worker rewrite the values (caskg-sizes); a test builds the module and compares them.
const (
	figureOpen  = "<!-- size:"
	figureClose = "<!-- /size -->"
)

// Count writes n with thousands separators, as the prose writes figures: 2,364,715.
func Count(n int) string {
	if n < 0 {
		return "-" + Count(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Span is the figure name holding value, as a generator writes it into a document.
func Span(name, value string) string { return figureOpen + name + " -->" + value + figureClose }

// A Figure is one figure span: its name and the value the document holds.
type Figure struct {
	Name, Value string
	start, end  int // the value's offsets in the document
}

// Figures returns the figure spans of doc in the order they appear. A span that is not closed
// on its line, or whose name is not lowercase letters, digits and dashes, is an error naming
// its line.
func Figures(doc []byte) ([]Figure, error) {
	var figs []Figure
	for at := 0; ; {
		i := bytes.Index(doc[at:], []byte(figureOpen))
		if i < 0 {
			return figs, nil
		}
		i += at
		line := 1 + bytes.Count(doc[:i], []byte("\n"))
		rest := doc[i+len(figureOpen):]
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			eol = len(rest)
		}
		name, value, ok := bytes.Cut(rest[:eol], []byte(" -->"))
		if !ok || !figureName(name) {
			return nil, fmt.Errorf("mdspan: line %d: a figure opens without a name of [a-z0-9-] and \" -->\"", line)
		}
		n := bytes.Index(value, []byte(figureClose))
		if n < 0 || bytes.Contains(value[:n], []byte("<!--")) {
			return nil, fmt.Errorf("mdspan: line %d: figure %s is not closed by %s on its line", line, name, figureClose)
		}
		start := i + len(figureOpen) + len(name) + len(" -->")
		figs = append(figs, Figure{Name: string(name), Value: string(value[:n]), start: start, end: start + n})
		at = start + n + len(figureClose)
	}
}

func figureName(b []byte) bool {
	for _, c := range b {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return len(b) > 0
}

// setFigures returns doc with the value of every figure named in values replaced; the figures
// values does not name, and all the text around them, are kept.
func setFigures(doc []byte, values map[string]string) ([]byte, error) {
	figs, err := Figures(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	at := 0
	for _, f := range figs {
		v, ok := values[f.Name]
		if !ok {
			continue
		}
		if strings.ContainsAny(v, "\n<>") {
			return nil, fmt.Errorf("mdspan: figure %s: value %q holds a newline or an angle bracket", f.Name, v)
		}
		out.Write(doc[at:f.start])
		out.WriteString(v)
		at = f.end
	}
	out.Write(doc[at:])
	return out.Bytes(), nil
}

// UpdateFigures sets the figures of the file at path (setFigures), atomically; a file that
// already holds the values is not written.
func UpdateFigures(path string, values map[string]string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := setFigures(doc, values)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		return nil
	}
	return atomicfile.Write(path, out)
}
