package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/ingest"
)

func runBuild(c *ctx, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	opt := builder.DefaultOptions()
	out := fs.String("o", "", "output artifact `path` (required)")
	strict := fs.Bool("strict", false, "fail the build on any bad skill instead of skipping it")
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
	lambdas := map[string]*float64{}
	for _, ch := range builder.Channels {
		v := opt.Lambda[ch]
		lambdas[ch] = &v
		fs.Float64Var(lambdas[ch], "lambda-"+ch, v, "weight λ of the "+ch+" channel")
	}
	fs.IntVar(&opt.BodyHead, "body-head", opt.BodyHead, "characters of each skill body kept in the artifact")
	traces := fs.String("traces", "", "JSONL `file` of successful runs {\"id\", \"skills\": [...]} for the trace channel")
	var lf llmFlags
	lf.register(fs)
	var ef embedFlags
	ef.register(fs)
	report := fs.String("report", "", "also write the build report as JSON to `file`")
	jsonOut := fs.Bool("json", false, "print the summary as JSON")
	quiet := fs.Bool("quiet", false, "no progress bars")
	libs, err := parse(c, fs, args, "LIBRARY... -o OUT.skg [flags]")
	if err != nil {
		return err
	}
	if len(libs) == 0 {
		return usagef("no LIBRARY given (a SKILL.md tree, an MCP tools/list .json, a JSON array of tools or a .jsonl of tools)")
	}
	if *out == "" && !lf.dryRun {
		return usagef("flag -o OUT.skg is required")
	}
	for ch, v := range lambdas {
		opt.Lambda[ch] = *v
	}
	if err := opt.Validate(); err != nil {
		return usagef("flag -%s", strings.TrimPrefix(err.Error(), "builder: "))
	}
	if *traces != "" {
		if opt.Traces, err = builder.ReadTraces(*traces); err != nil {
			return err
		}
	}
	if !*quiet && !*jsonOut {
		opt.Progress = newProgress(c.stderr)
	}
	opt.DryRun = lf.dryRun
	if err := lf.configure(&opt); err != nil {
		return err
	}
	if st, err := os.Stat(*out); err == nil && st.IsDir() {
		return fmt.Errorf("-o %s: is a directory", *out)
	}
	lib, err := ingest.LoadWith(ingest.Options{Strict: *strict}, libs...)
	if err != nil {
		if lib != nil && len(lib.Problems) > 0 {
			// An empty library: say what emptied it.
			var b strings.Builder
			for _, p := range lib.Problems {
				fmt.Fprintf(&b, "\n  skipped %s", p.Error())
			}
			return fmt.Errorf("%w%s", err, b.String())
		}
		return err
	}
	ef.cacheDir = lf.cacheDir
	sorted := append([]ingest.Skill(nil), lib.Skills...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	emb, err := ef.embedder(sorted)
	if err != nil {
		return err
	}
	if cl, ok := emb.(io.Closer); ok {
		defer cl.Close()
	}
	opt.Embedder = emb
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	data, rep, err := builder.BuildContext(ctx, lib.Skills, opt)
	if err != nil {
		return err
	}
	if opt.DryRun {
		fmt.Fprintf(c.stdout, "dry run: %d skills, %d candidates, frontier %d, %d probes and judge prompts, %d model calls not cached\n",
			rep.Skills, rep.Candidates, rep.Frontier, rep.PlannedProbes, rep.PlannedCalls)
		return nil
	}
	if err := atomicfile.Write(*out, data); err != nil {
		return fmt.Errorf("writing artifact %s: %w", *out, err)
	}
	skipped := make([]string, len(lib.Problems))
	for i, p := range lib.Problems {
		skipped[i] = p.Error()
	}
	summary := struct {
		*builder.Report
		Output  string   `json:"output"`
		Skipped []string `json:"skipped"`
	}{rep, *out, skipped}
	if *report != "" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		if err := atomicfile.Write(*report, append(b, '\n')); err != nil {
			return fmt.Errorf("writing report %s: %w", *report, err)
		}
	}
	if *jsonOut {
		b, _ := json.Marshal(summary)
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	w := c.stdout
	fmt.Fprintf(w, "read      %d skills from %s\n", rep.Skills, strings.Join(libs, ", "))
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped   %d:\n", len(skipped))
		for _, s := range skipped {
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
	fmt.Fprintf(w, "published %d edges (%s; %s) — variant %s\n", rep.Published, counts(rep.ByState), counts(rep.ByType), rep.Variant)
	fmt.Fprintf(w, "wrote     %s, %d bytes, in %.2fs (%s)\n", *out, rep.Bytes, rep.TotalSeconds, stageTimes(rep.StageSeconds))
	return nil
}

// stageTimes renders stage durations in pipeline order.
func stageTimes(m map[string]float64) string {
	var parts []string
	for _, st := range []string{"features", "embed", "candidates", "judge", "frontier", "probes", "publish", "encode"} {
		if v, ok := m[st]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", st, v))
		}
	}
	return strings.Join(parts, ", ")
}

// counts renders a count map as "a 3, b 1", keys sorted.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
