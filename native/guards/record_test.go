package guards

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/testlib/fixture"
)

var updateFigures = flag.Bool("update", false, "rewrite the documentation's eval- figures from the measured record")

// A recordCell is where a figure of the documentation stands in the measured record: a cell of
// the table in a generated span of a report, found by its column's header and the leading cells
// of its row (the last such row when last is set, else the one).
type recordCell struct {
	file, span string
	row        []string
	last       bool
	column     string
}

// recordFigures maps each eval- figure to its cell. make eval writes the record; the figure is
// the record's, so this test fails when either changes without the other.
var recordFigures = map[string]recordCell{
	"eval-gateway-toollinkos-runs":     {"docs/evaluation-results.md", "gateway-learning", []string{"ToolLinkOS", "scripted"}, true, "runs seen"},
	"eval-gateway-toollinkos-before":   {"docs/evaluation-results.md", "gateway-learning", []string{"ToolLinkOS", "scripted", "0"}, false, "COMP@10"},
	"eval-gateway-toollinkos-after":    {"docs/evaluation-results.md", "gateway-learning", []string{"ToolLinkOS", "scripted"}, true, "COMP@10"},
	"eval-gateway-toollinkos-cautious": {"docs/evaluation-results.md", "gateway-learning", []string{"ToolLinkOS", "cautious"}, true, "COMP@10"},
	"eval-gateway-nestful-before":      {"docs/evaluation-results.md", "gateway-learning", []string{"NESTFUL", "scripted", "0"}, false, "COMP@10"},
	"eval-gateway-nestful-50":          {"docs/evaluation-results.md", "gateway-learning", []string{"NESTFUL", "scripted", "50"}, false, "COMP@10"},
	"eval-gateway-nestful-after":       {"docs/evaluation-results.md", "gateway-learning", []string{"NESTFUL", "scripted"}, true, "COMP@10"},
}

// lookup returns the cell's text in doc.
func (c recordCell) lookup(doc []byte) (string, error) {
	begin, end := []byte("<!-- "+c.span+":begin -->"), []byte("<!-- "+c.span+":end -->")
	b, e := bytes.Index(doc, begin), bytes.Index(doc, end)
	if b < 0 || e < b {
		return "", fmt.Errorf("%s has no span %s", c.file, c.span)
	}
	col := -1
	var found []string
	for _, line := range strings.Split(string(doc[b:e]), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if col < 0 {
			if col = slices.Index(cells, c.column); col < 0 {
				return "", fmt.Errorf("%s, span %s: the table has no column %q", c.file, c.span, c.column)
			}
			continue
		}
		if len(cells) > col && len(cells) >= len(c.row) && slices.Equal(cells[:len(c.row)], c.row) {
			found = append(found, cells[col])
		}
	}
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("%s, span %s: no row %q", c.file, c.span, c.row)
	case c.last:
		return found[len(found)-1], nil
	case len(found) > 1:
		return "", fmt.Errorf("%s, span %s: %d rows %q, want one", c.file, c.span, len(found), c.row)
	}
	return found[0], nil
}

// TestRecordFigures holds every eval- figure of the documentation to its cell of the measured
// record that make eval writes (docs/evaluation-results.md), and every cell of recordFigures to a figure of the
// documentation. -update rewrites the figures from the record (make eval does, last).
func TestRecordFigures(t *testing.T) {
	want := map[string]string{}
	for name, cell := range recordFigures {
		doc, err := os.ReadFile(filepath.Join(root, cell.file))
		if err != nil {
			t.Fatal(err)
		}
		v, err := cell.lookup(doc)
		if err != nil {
			t.Errorf("figure %s: %v", name, err)
			continue
		}
		want[name] = v
	}
	fixture.CheckFigures(t, root, fixture.DocFigures(t, root, "eval"), sortedKeys(recordFigures), want, *updateFigures, "./native/guards")
}

func TestRecordLookup(t *testing.T) {
	doc := []byte("# r\n\n| set | x |\n|---|---|\n| A | 9 |\n\n<!-- t:begin -->\ntext\n\n| set | agent | runs | COMP@10 |\n|---|---|---:|---:|\n" +
		"| A | s | 0 | 0.060 |\n| A | s | 785 | 0.861 |\n| A | c | 0 | 0.060 |\n| B | s | 0 | 0.819 |\n<!-- t:end -->\n")
	for _, tc := range []struct {
		name string
		cell recordCell
		want string // or the error's start
	}{
		{"one row", recordCell{"R.md", "t", []string{"A", "s", "0"}, false, "COMP@10"}, "0.060"},
		{"the last row", recordCell{"R.md", "t", []string{"A", "s"}, true, "COMP@10"}, "0.861"},
		{"another column", recordCell{"R.md", "t", []string{"A", "s"}, true, "runs"}, "785"},
		{"only inside the span", recordCell{"R.md", "t", []string{"A"}, true, "x"}, `R.md, span t: the table has no column "x"`},
		{"two rows, want one", recordCell{"R.md", "t", []string{"A", "s"}, false, "COMP@10"}, "R.md, span t: 2 rows"},
		{"no row", recordCell{"R.md", "t", []string{"C"}, false, "COMP@10"}, `R.md, span t: no row ["C"]`},
		{"no span", recordCell{"R.md", "u", []string{"A"}, false, "COMP@10"}, "R.md has no span u"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cell.lookup(doc)
			if err != nil {
				got = err.Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
