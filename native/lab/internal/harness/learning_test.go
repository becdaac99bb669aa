package harness_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/lab/internal/harness"
	"github.com/caskg/caskg/native/testlib/fixture"
)

// caskg runs a caskg command line in process, as caskg-learn does.
func caskg(args ...string) error {
	var stderr bytes.Buffer
	if code := cli.Run(args, io.Discard, &stderr); code != 0 {
		return fmt.Errorf("caskg %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return nil
}

// TestLearn replays the sample tasks' gold sets as feedback and checks the curve: a point at
// each step and at all runs, every update the same bytes as the rebuild, an incremental
// update, a refused report (a skill the library does not have) counted apart, more complete
// bundles with the runs than without, and the section and plot written from it.
func TestLearn(t *testing.T) {
	tasks, err := eval.ReadTasks(fixture.LabSampleTasks, true)
	if err != nil {
		t.Fatal(err)
	}
	var runs []builder.Trace
	for _, tk := range tasks {
		runs = append(runs, builder.Trace{ID: tk.ID, Skills: tk.Gold})
	}
	runs = append(runs[:12], append([]builder.Trace{{ID: "bad", Skills: []string{"no-such-skill"}}}, runs[12:]...)...)
	c, err := harness.Learn(context.Background(), harness.LearnSpec{Label: "sample", Library: fixture.LabSampleLib,
		Tasks: tasks, TasksFile: "sample-tasks.jsonl", Runs: runs, Steps: []int{0, 10, 500}, Dir: t.TempDir(), Caskg: caskg})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	for _, p := range c.Points {
		seen = append(seen, p.Seen)
		if !p.Identical || p.Update != p.Rebuild {
			t.Errorf("after %d runs: update %.3f, rebuild %.3f, same bytes %v", p.Seen, p.Update, p.Rebuild, p.Identical)
		}
		if p.Seen > 0 && p.Mode != "incremental" {
			t.Errorf("after %d runs: update mode %q", p.Seen, p.Mode)
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint([]int{0, 10, len(runs)}) {
		t.Errorf("points at %v, want 0, 10 and %d", seen, len(runs))
	}
	if c.Accepted != len(runs)-1 || c.Refused != 1 {
		t.Errorf("accepted %d, refused %d; want %d and 1", c.Accepted, c.Refused, len(runs)-1)
	}
	if first, last := c.Points[0], c.Points[len(c.Points)-1]; last.Update <= first.Update {
		t.Errorf("COMP@10 %.3f with all runs, %.3f without: nothing learnt", last.Update, first.Update)
	}

	var md, svg bytes.Buffer
	harness.WriteLearning(&md, []*harness.LearnCurve{c}, "learning.svg")
	for _, want := range []string{"![learning curve](learning.svg)", "| runs seen | caskg update | full rebuild | same bytes | update |",
		"| 10 | ", "1 refused by the server"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, md.String())
		}
	}
	if err := harness.WriteLearningSVG(&svg, []*harness.LearnCurve{c, c}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName   xml.Name   `xml:"svg"`
		Polylines []struct{} `xml:"polyline"`
		Circles   []struct{} `xml:"circle"`
	}
	if err := xml.Unmarshal(svg.Bytes(), &doc); err != nil {
		t.Fatalf("plot is not well-formed SVG: %v", err)
	}
	// Two panels of two series, a marker a point, and the legend's two markers.
	if len(doc.Polylines) != 4 || len(doc.Circles) != 4*len(c.Points)+2 {
		t.Errorf("plot has %d lines and %d markers, want 4 and %d", len(doc.Polylines), len(doc.Circles), 4*len(c.Points)+2)
	}
}
