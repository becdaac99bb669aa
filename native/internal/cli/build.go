package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/ingest"
	"github.com/caskg/caskg/native/internal/memlimit"
	"github.com/caskg/caskg/wasm/engine"
)

// buildFlags are the flags of caskg build. The builder options are bound to opt in place, so
// a buildFlags is not copied once registered.
type buildFlags struct {
	opt      builder.Options
	out      string
	strict   bool
	lambdas  map[string]*float64 // per channel, copied into opt.Lambda after parsing
	traces   string
	runs     []builder.Trace // read from traces
	llm      llmFlags
	embed    embedFlags
	report   string
	jsonOut  bool
	quiet    bool
	state    bool   // also write OUT.skg.state for caskg update (update.go)
	synonyms string // a synonyms file, read into opt.Synonyms
}

func (f *buildFlags) register(fs *flag.FlagSet) {
	opt := &f.opt
	fs.StringVar(&f.out, "o", "", "output artifact `path` (required)")
	fs.BoolVar(&f.strict, "strict", false, "fail the build on any bad skill instead of skipping it")
	fs.StringVar(&opt.Variant, "variant", opt.Variant, "pipeline: "+strings.Join(builder.Variants, ", "))
	fs.IntVar(&opt.Cap, "cap", opt.Cap, "most candidate targets per source skill")
	fs.IntVar(&opt.PerChannel, "per-channel", opt.PerChannel, "most targets each signal channel proposes per source")
	fs.Float64Var(&opt.TauStr, "tau-str", opt.TauStr, "structural floor threshold τ_str")
	fs.Float64Var(&opt.EtaStr, "eta-str", opt.EtaStr, "structural floor factor η_str")
	fs.Float64Var(&opt.JudgeGate, "judge-gate", opt.JudgeGate, "the LLM judge scores only candidates with preliminary A above this")
	fs.IntVar(&opt.Budget, "budget", opt.Budget, "frontier size: how many candidates get probed (0: all; -1: all with the free contract prober, 500 with a model prober)")
	fs.Float64Var(&opt.FrontierMin, "frontier-min", opt.FrontierMin, "least association A of a probed candidate")
	fs.Float64Var(&opt.EpsE, "eps-e", opt.EpsE, "least evidence weight δ of one probe (ε_e)")
	fs.Float64Var(&opt.TauConfirm, "tau-c", opt.TauConfirm, "posterior above this: confirmed (τ_c)")
	fs.Float64Var(&opt.TauReject, "tau-reject", opt.TauReject, "posterior below this: rejected")
	fs.Float64Var(&opt.RhoConfirmed, "rho-confirmed", opt.RhoConfirmed, "publication factor ρ of confirmed edges")
	fs.Float64Var(&opt.RhoUncertain, "rho-uncertain", opt.RhoUncertain, "publication factor ρ of uncertain edges")
	fs.Float64Var(&opt.RhoScaffold, "rho-scaffold", opt.RhoScaffold, "publication factor ρ of scaffold edges")
	fs.IntVar(&opt.ScaffoldOut, "scaffold-out", opt.ScaffoldOut, "most scaffold edges out of one skill")
	fs.IntVar(&opt.ScaffoldIn, "scaffold-in", opt.ScaffoldIn, "most scaffold edges into one skill")
	fs.Float64Var(&opt.EpsWeight, "eps-w", opt.EpsWeight, "least published weight ε_w")
	f.lambdas = map[string]*float64{}
	for _, ch := range slices.Sorted(maps.Keys(opt.Lambda)) { // the defaults weigh every channel
		v := opt.Lambda[ch]
		f.lambdas[ch] = &v
		fs.Float64Var(f.lambdas[ch], "lambda-"+ch, v, "weight λ of the "+ch+" channel")
	}
	fs.IntVar(&opt.BodyHead, "body-head", opt.BodyHead, "characters of each skill body kept in the artifact")
	fs.StringVar(&f.traces, "traces", "", "JSONL `file` of successful runs {\"id\", \"skills\": [...], \"task\"?} for the trace channel and the memory of past tasks")
	registerTaskFlags(fs, &opt.TaskMinRuns, &opt.NoTaskText)
	registerSynonymsFlag(fs, &f.synonyms, "")
	f.llm.register(fs)
	f.embed.register(fs)
	fs.StringVar(&f.report, "report", "", "also write the build report as JSON to `file`")
	fs.BoolVar(&f.jsonOut, "json", false, "print the summary as JSON")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bars, and warnings only counted (--report lists them)")
	fs.BoolVar(&f.state, "state", false, "also write the build state beside the artifact (OUT.skg"+builder.StateSuffix+"), from which caskg update makes the next artifact without a full build")
}

// registerTaskFlags binds the flags of the memory of past tasks, which build, update and
// gateway share: the words of runs' tasks that enough runs share become a memory in the
// artifact (engine.BuildMemory), and none of a task said once.
func registerTaskFlags(fs *flag.FlagSet, minRuns *int, noText *bool) {
	fs.IntVar(minRuns, "task-min-runs", *minRuns, "a word of the runs' tasks enters the artifact's memory of past tasks only when at least `N` distinct tasks share it (a reporter's runs count once, and only where "+fmt.Sprint(builder.MinReporters)+" reporters agree)")
	fs.BoolVar(noText, "no-task-text", *noText, "leave the runs' task texts out: no memory of past tasks in the artifact, none kept in the build state (nor, by the gateway, in traces.jsonl)")
}

// registerSynonymsFlag binds --synonyms, which build, update and gateway share; more says what
// the command does without it.
func registerSynonymsFlag(fs *flag.FlagSet, path *string, more string) {
	fs.StringVar(path, "synonyms", "", "a `file` of synonyms in the Solr format (a, b, c and a, b => c lines) whose words the index also holds, beside the built-in aliases"+more)
}

// checkTaskMinRuns is the usage error of a --task-min-runs below 1.
func checkTaskMinRuns(n int) error {
	if n < 1 {
		return usagef("flag --task-min-runs %d: must be at least 1", n)
	}
	return nil
}

// options completes opt from the parsed flags: the channel weights, validation, the traces, the
// progress bars and the prober.
func (f *buildFlags) options(c *ctx) error {
	for ch, v := range f.lambdas {
		f.opt.Lambda[ch] = *v
	}
	if err := checkTaskMinRuns(f.opt.TaskMinRuns); err != nil {
		return err
	}
	if err := f.opt.Validate(); err != nil {
		return usagef("flag -%s", strings.TrimPrefix(err.Error(), "builder: "))
	}
	if f.traces != "" {
		var err error
		if f.runs, err = builder.ReadTraces(f.traces); err != nil {
			return err
		}
	}
	if f.synonyms != "" {
		var err error
		if f.opt.Synonyms, err = builder.ReadSynonyms(f.synonyms); err != nil {
			return err
		}
	}
	if !f.quiet && !f.jsonOut {
		f.opt.Progress = newProgress(c.stderr)
	}
	f.opt.DryRun = f.llm.dryRun
	return f.llm.configure(&f.opt)
}

func runBuild(c *ctx, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	f := &buildFlags{opt: builder.DefaultOptions()}
	f.register(fs)
	libs, err := parse(c, fs, args, "LIBRARY... -o OUT.skg [flags]")
	if err != nil {
		return err
	}
	if len(libs) == 0 {
		return usagef("no LIBRARY given (a SKILL.md tree, an MCP tools/list .json, a JSON array of tools or a .jsonl of tools)")
	}
	if f.out == "" && !f.llm.dryRun {
		return usagef("flag -o OUT.skg is required")
	}
	if err := f.options(c); err != nil {
		return err
	}
	start := time.Now() // the build's time: reading the library, fitting the embedder, building, writing
	if !f.llm.dryRun {
		if err := checkOutput("-o", f.out); err != nil {
			return err
		}
	}
	if f.report != "" {
		if err := checkOutput("--report", f.report); err != nil {
			return err
		}
	}
	lib, err := loadLibrary(f.strict, libs)
	if err != nil {
		return err
	}
	memlimit.ForSkills(len(lib.Skills))
	f.embed.cacheDir = f.llm.cacheDir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := builder.Build(ctx, builder.Input{Skills: lib.Skills, Options: &f.opt, Runs: f.runs,
		Embedder: f.embed.embedder, State: f.state})
	if err != nil {
		return err
	}
	data, st, rep := res.Artifact, res.State, res.Report
	if f.opt.DryRun {
		fmt.Fprintf(c.stdout, "dry run: %d skills, %d candidates, frontier %d, %d probes and judge prompts, %d model calls not cached\n",
			rep.Skills, rep.Candidates, rep.Frontier, rep.PlannedProbes, rep.PlannedCalls)
		return nil
	}
	if err := atomicfile.Write(f.out, data); err != nil {
		return fmt.Errorf("writing artifact %s: %w", f.out, err)
	}
	if err := writeState(f.out, st); err != nil {
		return err
	}
	rep.TotalSeconds = time.Since(start).Seconds()
	return f.summarize(c, rep, lib.Problems, libs)
}

// checkOutput refuses an output path before any work is done on it: a folder, or a path in a
// folder that does not exist (atomicfile would fail only at the end, after the whole build).
func checkOutput(flag, out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a directory", flag, out)
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: folder %s does not exist; create it first", flag, out, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, out, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a folder", flag, out, dir)
	}
	return nil
}

// loadLibrary reads the libraries. When nothing is left of them, the error lists what was
// skipped: the reason the library is empty.
func loadLibrary(strict bool, libs []string) (*ingest.Library, error) {
	lib, err := ingest.LoadWith(ingest.Options{Strict: strict}, libs...)
	if err != nil && lib != nil && len(lib.Problems) > 0 {
		var b strings.Builder
		for _, p := range lib.Problems {
			fmt.Fprintf(&b, "\n  skipped %s", p.Error())
		}
		return nil, fmt.Errorf("%w%s", err, b.String())
	}
	return lib, err
}

// summarize writes the build report file when asked, and prints the summary: as JSON, or as
// lines for people. Every ingest problem is in it once: under skipped when its entry or file was
// left out, under warnings when the entry was kept.
func (f *buildFlags) summarize(c *ctx, rep *builder.Report, problems []ingest.Problem, libs []string) error {
	skipped, warnings := []string{}, []string{}
	for _, p := range problems {
		if p.Warning {
			warnings = append(warnings, p.Error())
		} else {
			skipped = append(skipped, p.Error())
		}
	}
	summary := struct {
		*builder.Report
		Output   string   `json:"output"`
		Skipped  []string `json:"skipped"`
		Warnings []string `json:"warnings"`
	}{rep, f.out, skipped, warnings}
	if f.report != "" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		if err := atomicfile.Write(f.report, append(b, '\n')); err != nil {
			return fmt.Errorf("writing report %s: %w", f.report, err)
		}
	}
	if f.jsonOut {
		b, _ := json.Marshal(summary)
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	shown := maxWarnings
	if f.quiet {
		shown = 0
	}
	printSummary(c.stdout, rep, libs, skipped, warnings, shown, f.out)
	return nil
}

// maxWarnings is how many warnings a build's summary lists; the rest are counted. A real
// library repeats the same few (859 skills: 48 names off the Agent Skills convention) on every
// build, and they would bury what the build did. Skipped entries, which are lost, are all
// listed.
const maxWarnings = 5

// printSummary prints what a build read, skipped, probed and published, and where it wrote it:
// every skipped entry, and the first shown warnings.
func printSummary(w io.Writer, rep *builder.Report, libs, skipped, warnings []string, shown int, out string) {
	fmt.Fprintf(w, "read      %s from %s\n", countOf(rep.Skills, "skill"), strings.Join(libs, ", "))
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped   %d:\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(w, "          %s\n", s)
		}
	}
	if len(warnings) > 0 {
		fmt.Fprintf(w, "warnings  %d", len(warnings))
		if len(warnings) > shown {
			fmt.Fprintf(w, " (%d listed; --report FILE or --json lists every one)", shown)
		}
		fmt.Fprintln(w, ":")
		for _, s := range warnings[:min(shown, len(warnings))] {
			fmt.Fprintf(w, "          %s\n", s)
		}
	}
	fmt.Fprintf(w, "candidates %d (%s; active channels: %s)\n", rep.Candidates, counts(rep.PerChannel), strings.Join(rep.Channels, ", "))
	if rep.Variant != builder.VariantPublishAll {
		fmt.Fprintf(w, "frontier  %d probed by %s: %d probes run, %d cached, %d failed",
			rep.Frontier, rep.Prober, rep.ProbesRun, rep.ProbesCached, rep.ProbesFailed)
		if rep.ProbesAbstained > 0 {
			fmt.Fprintf(w, ", %d abstained (nothing to go on)", rep.ProbesAbstained)
		}
		fmt.Fprintln(w)
		for _, f := range rep.FailedSamples {
			fmt.Fprintf(w, "          failed: %s\n", f)
		}
		fmt.Fprintf(w, "calibrated %s\n", counts(rep.Calibrated))
	}
	if rep.JudgeCalls > 0 {
		fmt.Fprintf(w, "judge     %d candidates scored\n", rep.JudgeCalls)
	}
	if rep.Published == 0 {
		fmt.Fprintf(w, "published 0 edges — variant %s\n", rep.Variant)
	} else {
		fmt.Fprintf(w, "published %d edges (%s; %s) — variant %s\n", rep.Published, counts(rep.ByState), counts(rep.ByType), rep.Variant)
	}
	if r := rep.Reported; r != nil {
		fmt.Fprintf(w, "reports   %s\n", r)
	}
	if m := rep.Memory; m != nil {
		fmt.Fprintln(w, memorySummary(m))
	}
	fmt.Fprintf(w, "wrote     %s, %d bytes, in %.2fs (%s)\n", out, rep.Bytes, rep.TotalSeconds, stageTimes(rep.StageSeconds))
}

// memorySummary is the build summary's line on the memory of past tasks: what the runs' task
// texts gave, what the privacy rule dropped, and whether calibration let it speak.
func memorySummary(m *engine.MemoryStats) string {
	if m.Runs == 0 {
		return fmt.Sprintf("memory    none: no word of the runs' tasks is shared by enough distinct tasks (%d terms dropped by the privacy rule)", m.TermsDropped)
	}
	s := fmt.Sprintf("memory    %d runs with a task in %d tool sets; %d terms kept, %d dropped (too few distinct tasks); ", m.Runs, m.Sets, m.TermsKept, m.TermsDropped)
	if m.Weight == 0 {
		return s + fmt.Sprintf("silent: no weight did better than none on %d held-out runs, so the artifact leaves it out", m.HeldOut)
	}
	return s + fmt.Sprintf("weight %g, calibrated on %d held-out runs", m.Weight, m.HeldOut)
}

// stageTimes renders stage durations in pipeline order.
func stageTimes(m map[string]float64) string {
	var parts []string
	for _, st := range []string{"fit", "features", "embed", "candidates", "judge", "frontier", "probes", "publish", "encode", "memory"} {
		if v, ok := m[st]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", st, v))
		}
	}
	return strings.Join(parts, ", ")
}

// counts renders a count map as "a 3, b 1", keys sorted.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
