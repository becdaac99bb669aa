package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/lab/synth"
	"github.com/caskg/caskg/native/lab/internal/bench"
)

// updateStage is the incremental-update stage: it grows the library to c.updateSpec.skills
// skills, makes its old and new runs with synth.Runs (JSONL files in -dir/update-N), builds the
// old artifact and its build state with the old runs, then times a full build with every run and
// the update of the old build by the new runs (timeUpdate).
func updateStage(c *config) (bench.Update, error) {
	u, _, err := timeUpdate(c, c.updateSpec)
	return u, err
}

// updateSpec is the library and runs of one timeUpdate, and of the stage named by name, whose
// flags set it.
type updateSpec struct {
	name          string // the stage's name, its flags' prefix and its folder, -dir/<name>-<skills>
	skills        int    // skills grown from -base
	runs, newRuns int    // old and new runs
	rounds        int
	flows         int // 0: runs of synth.Runs, without task text; else synth.TaskRuns over flows workflows
}

// flags declares -NAME-skills, -NAME-runs, -NAME-new and -NAME-rounds on fs, and -NAME-flows
// when s makes runs with task text; s's values are their defaults.
func (s *updateSpec) flags(fs *flag.FlagSet) {
	stage := "the " + s.name + " stage's "
	runs := "runs"
	if s.flows > 0 {
		runs = "runs with task text"
		fs.IntVar(&s.flows, s.name+"-flows", s.flows, "the workflows "+stage+"runs repeat")
	}
	fs.IntVar(&s.skills, s.name+"-skills", s.skills, stage+"library: skills grown from -base")
	fs.IntVar(&s.runs, s.name+"-runs", s.runs, stage+runs+" in the old build")
	fs.IntVar(&s.newRuns, s.name+"-new", s.newRuns, stage+"new runs")
	fs.IntVar(&s.rounds, s.name+"-rounds", s.rounds, stage+"rounds: each side timed that many times, alternating; the median kept")
}

// check fails unless s's library, runs and rounds are each at least 1.
func (s *updateSpec) check() error {
	if s.skills < 1 || s.runs < 1 || s.newRuns < 1 || s.rounds < 1 {
		n := s.name
		return fmt.Errorf("-%s-skills %d, -%s-runs %d, -%s-new %d, -%s-rounds %d: each must be at least 1",
			n, s.skills, n, s.runs, n, s.newRuns, n, s.rounds)
	}
	return nil
}

// timeUpdate grows the library of s, makes its old and new runs (JSONL files runs-old.jsonl and
// runs-new.jsonl in the stage's folder, which it returns), builds the old artifact and its build
// state with the old runs, then times a full build with every run (full.skg) and the update of
// the old build by the new runs, each in a process of its own (updateOne), s.rounds times,
// alternating, so that a change in the machine's load falls on both; each side is its median
// round. It fails unless the update is incremental and, every round, the two artifacts are
// byte-identical.
func timeUpdate(c *config, s updateSpec) (bench.Update, string, error) {
	u := bench.Update{Skills: s.skills, OldRuns: s.runs, NewRuns: s.newRuns}
	dir := filepath.Join(c.dir, fmt.Sprintf("%s-%d", s.name, s.skills))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return u, dir, err
	}
	lib, err := ingest.Load(c.base)
	if err != nil {
		return u, dir, err
	}
	skills, err := synth.Grow(lib.Skills, s.skills)
	if err != nil {
		return u, dir, err
	}
	makeRuns := func(n, first int) ([]synth.Run, error) {
		if s.flows > 0 {
			return synth.TaskRuns(skills, len(lib.Skills), n, first, s.flows)
		}
		return synth.Runs(skills, len(lib.Skills), n, first)
	}
	oldRuns, err := makeRuns(s.runs, 0)
	if err != nil {
		return u, dir, err
	}
	newRuns, err := makeRuns(s.newRuns, s.runs)
	if err != nil {
		return u, dir, err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := writeRuns(p("runs-old.jsonl"), oldRuns); err != nil {
		return u, dir, err
	}
	if err := writeRuns(p("runs-new.jsonl"), newRuns); err != nil {
		return u, dir, err
	}
	common := []string{"-n", strconv.Itoa(s.skills), "-base", c.base, "-runs", p("runs-old.jsonl"), "-new", p("runs-new.jsonl")}
	if _, err := updateChild(append(common, "-mode", "old", "-o", p("old.skg"))); err != nil {
		return u, dir, err
	}
	st, err := os.Stat(p("old.skg") + builder.StateSuffix)
	if err != nil {
		return u, dir, err
	}
	u.StateBytes = int(st.Size())
	fmt.Fprintf(os.Stderr, "%s stage: old build of %d skills with %d runs and its state (%.1f MB) written\n",
		s.name, s.skills, s.runs, float64(u.StateBytes)/1e6)
	var fulls, ups []bench.UpdateSide
	var full []byte
	for round := range s.rounds {
		f, err := updateChild(append(common, "-mode", "full", "-o", p("full.skg")))
		if err != nil {
			return u, dir, err
		}
		up, err := updateChild(append(common, "-mode", "update", "-old", p("old.skg"), "-o", p("update.skg")))
		if err != nil {
			return u, dir, err
		}
		if up.Mode != "incremental" {
			return u, dir, fmt.Errorf("%s stage: the update made a %q build, want an incremental one", s.name, up.Mode)
		}
		if full, err = sameArtifact(p("full.skg"), p("update.skg")); err != nil {
			return u, dir, err
		}
		fulls, ups = append(fulls, f), append(ups, up)
		fmt.Fprintf(os.Stderr, "%s stage: round %d: full build %.1f s, update %.2f s; artifacts identical\n", s.name, round+1, f.Seconds, up.Seconds)
	}
	u.Full, u.Update = medianSide(fulls), medianSide(ups)
	u.Bytes, u.SHA256 = len(full), fmt.Sprintf("%x", sha256.Sum256(full))
	fmt.Fprintf(os.Stderr, "%s stage: median full build %.1f s, update %.2f s: %.3f of the full build\n",
		s.name, u.Full.Seconds, u.Update.Seconds, u.Ratio())
	return u, dir, nil
}

// sameArtifact returns the full build's artifact when the update's is byte-identical to it.
func sameArtifact(fullPath, updatePath string) ([]byte, error) {
	full, err := os.ReadFile(fullPath)
	up, err2 := os.ReadFile(updatePath)
	if err := errors.Join(err, err2); err != nil {
		return nil, err
	}
	if !bytes.Equal(full, up) {
		return nil, fmt.Errorf("update stage: the update's artifact (%d bytes, sha256 %x) differs from the full build's (%d bytes, sha256 %x)",
			len(up), sha256.Sum256(up), len(full), sha256.Sum256(full))
	}
	return full, nil
}

// medianSide is the round of median time (the lower of the two middle ones for an even count),
// with every round's time in Rounds.
func medianSide(rounds []bench.UpdateSide) bench.UpdateSide {
	times := make([]float64, len(rounds))
	for i, r := range rounds {
		times[i] = r.Seconds
	}
	order := slices.Clone(rounds)
	slices.SortStableFunc(order, func(a, b bench.UpdateSide) int { return cmp.Compare(a.Seconds, b.Seconds) })
	m := order[(len(order)-1)/2]
	m.Rounds = times
	return m
}

// writeRuns writes runs as a trace file ({"id", "skills", "task"} per line, no "task" for a run
// without one), as builder.ReadTraces reads.
func writeRuns(path string, runs []synth.Run) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range runs {
		if err := enc.Encode(builder.Trace{ID: r.ID, Skills: r.Skills, Task: r.Task}); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, buf.Bytes())
}

// updateChild runs updateOne in a child process and returns its measurement.
func updateChild(args []string) (bench.UpdateSide, error) {
	var side bench.UpdateSide
	if _, err := child(&side, append([]string{"update-one"}, args...)...); err != nil {
		return bench.UpdateSide{}, fmt.Errorf("update stage: %v: %w", args, err)
	}
	return side, nil
}

// updateOne is the update stage's child; it prints its measurement as JSON. -mode plain builds
// the library without runs and -mode notask with the old and new runs stripped of their task
// text (the memory stage's baselines), and writes the artifact. -mode old builds
// the library with the old runs and writes the artifact and its build state (-o and
// -o.state). -mode full times a full build with the old runs and the new, as caskg build
// makes it: learning the builtin embedder and building (growing the library and reading the
// runs come before the clock starts). -mode update times what caskg update does with the old
// artifact -old, its state -old.state and the new runs: reading both files, decoding the state,
// updating, encoding the new state (reading the runs comes before, writing the files after).
func updateOne(args []string) error {
	fs := flag.NewFlagSet("update-one", flag.ContinueOnError)
	mode := fs.String("mode", "", "plain, notask, old, full or update")
	n := fs.Int("n", 0, "skills to synthesize from -base")
	base := fs.String("base", "", "base library")
	oldRuns := fs.String("runs", "", "the old runs (JSONL)")
	newRuns := fs.String("new", "", "the new runs (JSONL)")
	old := fs.String("old", "", "the old artifact (-mode update)")
	out := fs.String("o", "", "artifact to write")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed part to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *out == "" {
		return fmt.Errorf("update-one: -o is required")
	}
	ctx := context.Background()
	var data []byte
	var rep *builder.Report
	var secs, cpu float64
	switch *mode {
	case "plain", "notask", "old", "full":
		lib, err := ingest.Load(*base)
		if err != nil {
			return err
		}
		skills, err := synth.Grow(lib.Skills, *n)
		if err != nil {
			return err
		}
		var runs []builder.Trace
		if *mode != "plain" {
			if runs, err = builder.ReadTraces(*oldRuns); err != nil {
				return err
			}
		}
		if *mode == "full" || *mode == "notask" {
			more, err := builder.ReadTraces(*newRuns)
			if err != nil {
				return err
			}
			runs = append(runs, more...)
		}
		if *mode == "notask" {
			for i := range runs {
				runs[i].Task = ""
			}
		}
		start, cpu0 := time.Now(), cpuSeconds()
		var state []byte
		res, err := builder.Build(ctx, builder.Input{Skills: skills, Runs: runs, State: *mode == "old"})
		if err != nil {
			return err
		}
		data, rep = res.Artifact, res.Report
		if res.State != nil {
			if state, err = builder.EncodeState(res.State); err != nil {
				return err
			}
		}
		secs, cpu = time.Since(start).Seconds(), cpuSeconds()-cpu0
		if state != nil {
			if err := atomicfile.Write(*out+builder.StateSuffix, state); err != nil {
				return err
			}
		}
	case "update":
		runs, err := builder.ReadTraces(*newRuns)
		if err != nil {
			return err
		}
		start, cpu0 := time.Now(), cpuSeconds()
		oldData, err := os.ReadFile(*old)
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(*old + builder.StateSuffix)
		if err != nil {
			return err
		}
		st, err := builder.DecodeState(raw)
		if err != nil {
			return err
		}
		res, err := builder.Build(ctx, builder.Input{Runs: runs, Previous: st, Old: oldData, State: true})
		if err != nil {
			return err
		}
		if _, err := builder.EncodeState(res.State); err != nil {
			return err
		}
		secs, cpu = time.Since(start).Seconds(), cpuSeconds()-cpu0
		data, rep = res.Artifact, res.Report
	default:
		return fmt.Errorf("update-one: -mode %q is not plain, notask, old, full or update", *mode)
	}
	if err := atomicfile.Write(*out, data); err != nil {
		return err
	}
	side := bench.UpdateSide{Seconds: secs, CPUSeconds: cpu, PeakRSSMB: peakRSSMB(), Stages: rep.StageSeconds,
		ProbesRun: rep.ProbesRun, ProbesCached: rep.ProbesCached}
	if rep.Update != nil {
		side.Mode = rep.Update.Mode
	}
	return json.NewEncoder(os.Stdout).Encode(side)
}
