package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"time"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/memlimit"
	"github.com/caskg/caskg/wasm/engine"
)

const updateArgs = "OLD.skg [LIBRARY...] --traces NEW.jsonl -o NEW.skg"

// writeState writes st beside the artifact at out, atomically; nothing for a nil st.
func writeState(out string, st *builder.State) error {
	if st == nil {
		return nil
	}
	data, err := builder.EncodeState(st)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out+builder.StateSuffix, data); err != nil {
		return fmt.Errorf("writing build state %s: %w", out+builder.StateSuffix, err)
	}
	return nil
}

// updateFlags are the flags of caskg update. The build options are the old build's, from its
// state; the embedder and prober flags are build's, for a prober that needs configuring and
// for the full build a changed library needs.
type updateFlags struct {
	out     string
	traces  string
	state   string
	strict  bool
	llm     llmFlags
	embed   embedFlags
	report  string
	jsonOut bool
	quiet   bool
	// The memory of past tasks: the old build's options unless given (taskSet).
	taskMinRuns int
	noTaskText  bool
	synonyms    string // replaces the old build's synonyms when given
}

func (f *updateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.out, "o", "", "output artifact `path` (required); its build state is written beside it")
	fs.StringVar(&f.traces, "traces", "", "JSONL `file` of new runs {\"id\", \"skills\": [...]}, e.g. a caskg serve --feedback log; runs the old build already had are left out")
	fs.StringVar(&f.state, "state", "", "the old build's state `file` (default OLD.skg"+builder.StateSuffix+", written by caskg build --state and by caskg update)")
	fs.BoolVar(&f.strict, "strict", false, "fail on any bad skill of a LIBRARY instead of skipping it")
	f.llm.register(fs)
	f.embed.register(fs)
	fs.StringVar(&f.report, "report", "", "also write the build report as JSON to `file`")
	fs.BoolVar(&f.jsonOut, "json", false, "print the summary as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bars, and warnings only counted (--report lists them)")
	f.taskMinRuns = engine.DefaultTaskMinRuns
	registerTaskFlags(fs, &f.taskMinRuns, &f.noTaskText)
	registerSynonymsFlag(fs, &f.synonyms, "; default the old build's (its state keeps them), another file makes a full build, an empty one drops them")
}

// taskOptions sets the options of the memory of past tasks that were given on opt, the old
// build's: a change of them alone keeps the update incremental (the memory is made anew from
// every run in each build).
func (f *updateFlags) taskOptions(fs *flag.FlagSet, opt *builder.Options) error {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "task-min-runs":
			opt.TaskMinRuns = f.taskMinRuns
		case "no-task-text":
			opt.NoTaskText = f.noTaskText
		}
	})
	return checkTaskMinRuns(opt.TaskMinRuns)
}

// runUpdate makes a new artifact from an old one, its build state and new runs (and the library
// as it is now, when LIBRARY is given): the artifact caskg build would make from the library,
// the old runs and the new, reusing what the old build computed. When the state cannot be
// reused (the library or the caskg changed), it says why and makes a full build.
func runUpdate(c *ctx, args []string) error {
	flags := flag.NewFlagSet("update", flag.ContinueOnError)
	f := &updateFlags{}
	f.register(flags)
	pos, err := parse(c, flags, args, updateArgs+" [flags]")
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("no OLD.skg given")
	case f.out == "":
		return usagef("flag -o NEW.skg is required")
	case f.traces == "" && len(pos) == 1:
		return usagef("nothing to update: give --traces NEW.jsonl, a LIBRARY, or both")
	case f.llm.dryRun:
		return usagef("flag -dry-run is build's")
	case f.taskMinRuns < 1:
		return checkTaskMinRuns(f.taskMinRuns)
	}
	start := time.Now()
	oldPath, libs := pos[0], pos[1:]
	if err := checkOutput("-o", f.out); err != nil {
		return err
	}
	if f.report != "" {
		if err := checkOutput("--report", f.report); err != nil {
			return err
		}
	}
	old, err := os.ReadFile(oldPath)
	if err != nil {
		return err
	}
	statePath := f.state
	if statePath == "" {
		statePath = oldPath + builder.StateSuffix
	}
	raw, err := os.ReadFile(statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no build state for %s: make the old artifact with caskg build --state (or caskg update), or rebuild with caskg build LIBRARY --traces ALL_RUNS.jsonl", statePath, oldPath)
	} else if err != nil {
		return err
	}
	st, err := builder.DecodeState(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", statePath, err)
	}
	var runs []builder.Trace
	if f.traces != "" {
		if runs, err = builder.ReadTraces(f.traces); err != nil {
			return err
		}
	}
	var skills []ingest.Skill
	var problems []ingest.Problem
	if len(libs) > 0 {
		lib, err := loadLibrary(f.strict, libs)
		if err != nil {
			return err
		}
		skills, problems = lib.Skills, lib.Problems
	}
	opt := st.Options()
	if err := f.taskOptions(flags, &opt); err != nil {
		return err
	}
	if f.synonyms != "" {
		if opt.Synonyms, err = builder.ReadSynonyms(f.synonyms); err != nil {
			return err
		}
	}
	if !f.quiet && !f.jsonOut {
		opt.Progress = newProgress(c.stderr)
	}
	if err := f.llm.configure(&opt); err != nil {
		return err
	}
	now := skills
	if now == nil {
		now = st.Skills
	}
	memlimit.ForSkills(len(now)) // as caskg build does
	f.embed.cacheDir = f.llm.cacheDir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := builder.Build(ctx, builder.Input{Skills: skills, Options: &opt, Runs: runs,
		Previous: st, Old: old, Embedder: f.embed.embedder, State: true})
	if err != nil {
		return err
	}
	data, nst, rep := res.Artifact, res.State, res.Report
	if u := rep.Update; u.Reason != "" && !f.jsonOut {
		fmt.Fprintf(c.stderr, "caskg update: a full build: %s\n", u.Reason)
	}
	if err := atomicfile.Write(f.out, data); err != nil {
		return fmt.Errorf("writing artifact %s: %w", f.out, err)
	}
	if err := writeState(f.out, nst); err != nil {
		return err
	}
	rep.TotalSeconds = time.Since(start).Seconds()
	if !f.jsonOut {
		u := rep.Update
		fmt.Fprintf(c.stdout, "update    %s: %d runs of %s + %d new", u.Mode, u.OldTraces, oldPath, u.NewTraces)
		if u.Duplicates > 0 {
			fmt.Fprintf(c.stdout, " (%d already in it, left out)", u.Duplicates)
		}
		if u.Reason != "" {
			fmt.Fprintf(c.stdout, "; full build: %s", u.Reason)
		}
		fmt.Fprintln(c.stdout)
	}
	from := libs
	if len(from) == 0 {
		from = []string{oldPath + " (its build state)"}
	}
	bf := &buildFlags{out: f.out, report: f.report, jsonOut: f.jsonOut, quiet: f.quiet}
	return bf.summarize(c, rep, problems, from)
}
