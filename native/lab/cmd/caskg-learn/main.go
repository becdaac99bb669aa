// Command caskg-learn measures how caskg learns from use, for make eval: on each dev set with
// training runs it builds the library without runs, replays the runs as feedback through caskg
// serve's POST /v1/feedback in batches (twice: without their task text, and with it as the
// report's query, kept in the log), runs caskg update after each batch beside a full
// rebuild with the same runs, scores both on the test tasks, and writes the learning curves
// into docs/evaluation-results.md (between <!-- learning:begin --> and <!-- learning:end -->) and as an SVG
// plot beside it. Then it replays the same runs through caskg gateway (native/lab/internal/gatewaycurve)
// and writes those curves between <!-- gateway-learning:begin --> and <!-- gateway-learning:end -->,
// with their plot.
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

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/eval"
	"github.com/caskg/caskg/native/lab/internal/gatewaycurve"
	"github.com/caskg/caskg/native/lab/internal/harness"
	"github.com/caskg/caskg/native/lab/internal/mdspan"
)

// Where make eval's learning figures go: the report and its two plots, side by side in docs/.
const (
	defaultEvaluation   = "docs/evaluation-results.md"
	defaultImage        = "docs/evaluation-learning.svg"
	defaultGatewayImage = "docs/evaluation-gateway.svg"
)

func main() {
	shared := flag.String("shared", "../shared/data", "the shared data folder")
	dir := flag.String("dir", "bin/eval/learn", "work folder")
	evaluation := flag.String("evaluation", defaultEvaluation, "the file whose learning span is rewritten")
	image := flag.String("svg", defaultImage, "the plot to write (its path relative to -evaluation's folder goes into the text)")
	gatewayImage := flag.String("gateway-svg", defaultGatewayImage, "the plot of the curves through caskg gateway")
	results := flag.String("results", "bin/eval", "folder of the caskg-lab compare results (LABEL.json), for the default + traces figures")
	flag.Parse()
	if err := run(*shared, *dir, *evaluation, *image, *gatewayImage, *results); err != nil {
		fmt.Fprintln(os.Stderr, "caskg-learn:", err)
		os.Exit(1)
	}
}

// sets are the dev sets with training runs: label, result file, catalog, test tasks, runs.
var sets = []learnSet{
	{"ToolLinkOS", "toollinkos", "eval/toollinkos/tools.json", "eval/toollinkos/tasks_test.jsonl", "eval/toollinkos/traces_train.jsonl"},
	{"Seal-Tools", "sealtools", "eval/sealtools/tools.json", "eval/sealtools/tasks.jsonl", "eval/sealtools/traces_train.jsonl"},
	{"NESTFUL", "nestful", "eval/nestful/tools.json", "eval/nestful/tasks.jsonl", "eval/nestful/traces_train.jsonl"},
}

type learnSet struct{ label, result, lib, tasks, runs string }

// load reads the set's test tasks and training runs from the shared data folder.
func (s learnSet) load(shared string) ([]eval.Task, []builder.Trace, error) {
	tasks, err := eval.ReadTasks(filepath.Join(shared, s.tasks), true)
	if err != nil {
		return nil, nil, err
	}
	runs, err := builder.ReadTraces(filepath.Join(shared, s.runs))
	if err != nil {
		return nil, nil, err
	}
	return tasks, runs, nil
}

func run(shared, dir, evaluation, image, gatewayImage, results string) error {
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
		tasks, runs, err := s.load(shared)
		if err != nil {
			return err
		}
		for _, taskText := range []bool{false, true} {
			label, sub := s.label, s.result
			if taskText {
				label, sub = s.label+", task text", s.result+"-task"
			}
			c, err := harness.Learn(context.Background(), harness.LearnSpec{Label: label, Library: filepath.Join(shared, s.lib),
				Tasks: tasks, TasksFile: s.tasks, Runs: runs, RunsFile: s.runs, Dir: filepath.Join(dir, sub), Caskg: caskg, TaskText: taskText})
			if err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			curves = append(curves, c)
			last := c.Points[len(c.Points)-1]
			fmt.Printf("%-22s", label)
			for _, p := range c.Points {
				fmt.Printf("  %d runs: update %.3f rebuild %.3f (%s, %.2fs vs %.2fs)", p.Seen, p.Update, p.Rebuild, p.Mode, p.UpdateSec, p.BuildSec)
			}
			fmt.Println()
			if math.Abs(last.Update-last.Rebuild) > 0.01 {
				return fmt.Errorf("%s: after all runs, update %.3f and rebuild %.3f differ by more than 0.01", label, last.Update, last.Rebuild)
			}
		}
		if r, err := harness.ReadResult(filepath.Join(results, s.result+".json")); err == nil {
			for _, row := range r.Rows {
				if row.Name == harness.RowTraces {
					notes = append(notes, fmt.Sprintf("%s %.3f", s.label, row.Summary.Complete[10]))
				}
			}
		}
	}
	rel, err := writeImage(image, evaluation, func(w io.Writer) error { return harness.WriteLearningSVG(w, curves) })
	if err != nil {
		return err
	}
	var md bytes.Buffer
	harness.WriteLearning(&md, curves, rel)
	if len(notes) > 0 {
		fmt.Fprintf(&md, "For comparison, `default + traces` above (`caskg build --traces traces_train.jsonl`, the same runs read from the file): %s.\n", strings.Join(notes, ", "))
	}
	if err := mdspan.UpdateFile(evaluation, harness.LearningBegin, harness.LearningEnd, md.Bytes()); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "learning.json"), curves); err != nil {
		return err
	}
	return gatewayCurves(shared, dir, evaluation, gatewayImage)
}

// gatewayCurves replays the training runs through caskg gateway (gatewaycurve): the scripted
// agent on every set, the cautious one where every run has its task (the run's "task", or for
// ToolLinkOS, whose runs are the gold sets of tasks.jsonl's even-numbered tasks, that task), and
// writes their span of docs/evaluation-results.md and their plot.
func gatewayCurves(shared, dir, evaluation, image string) error {
	build := func(args ...string) error {
		var stderr bytes.Buffer
		if code := cli.Run(append([]string{"build"}, args...), io.Discard, &stderr); code != 0 {
			return fmt.Errorf("caskg build: exit %d: %s", code, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	var curves []*gatewaycurve.Curve
	var panels []*harness.LearnCurve
	for _, s := range sets {
		tasks, runs, err := s.load(shared)
		if err != nil {
			return err
		}
		queries := map[string]string{}
		if all, err := eval.ReadTasks(filepath.Join(shared, filepath.Dir(s.runs), "tasks.jsonl"), false); err == nil {
			for _, t := range all {
				queries[t.ID] = t.Query
			}
		}
		panel := &harness.LearnCurve{Label: s.label}
		agents := []string{gatewaycurve.Scripted}
		withQuery := 0
		for _, r := range runs {
			if r.Task != "" || queries[r.ID] != "" {
				withQuery++
			}
		}
		if withQuery == len(runs) {
			agents = append(agents, gatewaycurve.Cautious)
		}
		for _, agent := range agents {
			c, err := gatewaycurve.Run(context.Background(), gatewaycurve.Spec{Label: s.label, Catalog: filepath.Join(shared, s.lib),
				Tasks: tasks, Runs: runs, Queries: queries, Agent: agent, LearnEvery: 50,
				Dir: filepath.Join(dir, "gateway", s.result+"-"+agent), Build: build})
			if err != nil {
				return fmt.Errorf("%s, %s agent: %w", s.label, agent, err)
			}
			if c.SameAsBuild != nil && !*c.SameAsBuild {
				return fmt.Errorf("%s, %s agent: the gateway's graph.skg is not what caskg build makes from its catalog and traces", s.label, agent)
			}
			curves = append(curves, c)
			fmt.Printf("%-10s gateway, %s agent:", s.label, agent)
			for i, p := range c.Points {
				fmt.Printf("  %d runs %.3f", p.Seen, p.Comp10)
				if agent == gatewaycurve.Scripted {
					panel.Points = append(panel.Points, harness.LearnPoint{Seen: p.Seen, Update: p.Comp10, Rebuild: math.NaN()})
				} else if i < len(panel.Points) {
					panel.Points[i].Rebuild = p.Comp10
				}
			}
			fmt.Println()
		}
		panels = append(panels, panel)
	}
	rel, err := writeImage(image, evaluation, func(w io.Writer) error {
		return harness.WriteCurvesSVG(w, panels, harness.PlotText{XLabel: "runs replayed through caskg gateway",
			Solid: "scripted agent: every tool of a run", Dashed: "cautious agent: only tools its search showed"})
	})
	if err != nil {
		return err
	}
	var md bytes.Buffer
	gatewaycurve.WriteMarkdown(&md, curves, rel)
	if err := mdspan.UpdateFile(evaluation, harness.GatewayLearningBegin, harness.GatewayLearningEnd, md.Bytes()); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "gateway.json"), curves)
}

// writeImage writes the SVG plot draws to image and returns the path evaluation links it by.
func writeImage(image, evaluation string, plot func(io.Writer) error) (string, error) {
	var svg bytes.Buffer
	if err := plot(&svg); err != nil {
		return "", err
	}
	if err := atomicfile.Write(image, svg.Bytes()); err != nil {
		return "", err
	}
	rel, err := filepath.Rel(filepath.Dir(evaluation), image)
	if err != nil {
		rel = image
	}
	return filepath.ToSlash(rel), nil
}

// writeJSON writes v to path, indented, with a final newline.
func writeJSON(path string, v any) error {
	raw, _ := json.MarshalIndent(v, "", "  ")
	return atomicfile.Write(path, append(raw, '\n'))
}
