// Command caskg-learn measures how caskg learns from use, for make eval: on each dev set with
// training runs it builds the library without runs, replays the runs as feedback through caskg
// serve's POST /v1/feedback in batches, runs caskg update after each batch beside a full
// rebuild with the same runs, scores both on the test tasks, and writes the learning curves
// into EVALUATION.md (between <!-- learning:begin --> and <!-- learning:end -->) and as an SVG
// plot beside it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/cli"
	"github.com/caskg/caskg/native/eval"
	"github.com/caskg/caskg/native/harness"
	"github.com/caskg/caskg/native/mdspan"
)

func main() {
	shared := flag.String("shared", "../shared/data", "the shared data folder")
	dir := flag.String("dir", "bin/eval/learn", "work folder")
	evaluation := flag.String("evaluation", "EVALUATION.md", "the file whose learning span is rewritten")
	image := flag.String("svg", "EVALUATION-learning.svg", "the plot to write (its path relative to -evaluation's folder goes into the text)")
	results := flag.String("results", "bin/eval", "folder of the eval --compare results (LABEL.json), for the default + traces figures")
	flag.Parse()
	if err := run(*shared, *dir, *evaluation, *image, *results); err != nil {
		fmt.Fprintln(os.Stderr, "caskg-learn:", err)
		os.Exit(1)
	}
}

// sets are the dev sets with training runs: label, result file, catalog, test tasks, runs.
var sets = []struct{ label, result, lib, tasks, runs string }{
	{"ToolLinkOS", "toollinkos", "eval/toollinkos/tools.json", "eval/toollinkos/tasks_test.jsonl", "eval/toollinkos/traces_train.jsonl"},
	{"Seal-Tools", "sealtools", "eval/sealtools/tools.json", "eval/sealtools/tasks.jsonl", "eval/sealtools/traces_train.jsonl"},
	{"NESTFUL", "nestful", "eval/nestful/tools.json", "eval/nestful/tasks.jsonl", "eval/nestful/traces_train.jsonl"},
}

func run(shared, dir, evaluation, image, results string) error {
	caskg := func(args ...string) error {
		var stderr bytes.Buffer
		if code := cli.Run(args, io.Discard, &stderr); code != 0 {
			return fmt.Errorf("caskg %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	var curves []*harness.LearnCurve
	var notes []string
	for _, s := range sets {
		tasks, err := eval.ReadTasks(filepath.Join(shared, s.tasks), true)
		if err != nil {
			return err
		}
		runs, err := builder.ReadTraces(filepath.Join(shared, s.runs))
		if err != nil {
			return err
		}
		c, err := harness.Learn(context.Background(), harness.LearnSpec{Label: s.label, Library: filepath.Join(shared, s.lib),
			Tasks: tasks, TasksFile: s.tasks, Runs: runs, RunsFile: s.runs, Dir: filepath.Join(dir, s.result), Caskg: caskg})
		if err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
		curves = append(curves, c)
		last := c.Points[len(c.Points)-1]
		fmt.Printf("%-10s", s.label)
		for _, p := range c.Points {
			fmt.Printf("  %d runs: update %.3f rebuild %.3f (%s, %.2fs vs %.2fs)", p.Seen, p.Update, p.Rebuild, p.Mode, p.UpdateSec, p.BuildSec)
		}
		fmt.Println()
		if math.Abs(last.Update-last.Rebuild) > 0.01 {
			return fmt.Errorf("%s: after all runs, update %.3f and rebuild %.3f differ by more than 0.01", s.label, last.Update, last.Rebuild)
		}
		if r, err := harness.ReadResult(filepath.Join(results, s.result+".json")); err == nil {
			for _, row := range r.Rows {
				if row.Name == harness.RowTraces {
					notes = append(notes, fmt.Sprintf("%s %.3f", s.label, row.Summary.Complete[10]))
				}
			}
		}
	}
	var svg bytes.Buffer
	if err := harness.WriteLearningSVG(&svg, curves); err != nil {
		return err
	}
	if err := atomicfile.Write(image, svg.Bytes()); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(evaluation), image)
	if err != nil {
		rel = image
	}
	var md bytes.Buffer
	harness.WriteLearning(&md, curves, filepath.ToSlash(rel))
	if len(notes) > 0 {
		fmt.Fprintf(&md, "For comparison, `default + traces` above (`caskg build --traces traces_train.jsonl`, the same runs read from the file): %s.\n", strings.Join(notes, ", "))
	}
	if err := mdspan.UpdateFile(evaluation, harness.LearningBegin, harness.LearningEnd, md.Bytes()); err != nil {
		return err
	}
	raw, _ := json.MarshalIndent(curves, "", "  ")
	return atomicfile.Write(filepath.Join(dir, "learning.json"), append(raw, '\n'))
}
