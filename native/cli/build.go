package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/caskg/caskg/native/build"
	"github.com/caskg/caskg/native/ingest"
)

func runBuild(c *ctx, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	def := build.DefaultOptions()
	out := fs.String("o", "", "output artifact `path` (required)")
	strict := fs.Bool("strict", false, "fail the build on any bad skill instead of skipping it")
	variant := fs.String("variant", def.Variant, "publication rule")
	capFlag := fs.Int("cap", def.Cap, "most candidate targets per source skill")
	perChan := fs.Int("per-channel", def.PerChannel, "most targets each signal channel proposes per source")
	tauStr := fs.Float64("tau-str", def.TauStr, "structural floor threshold τ_str")
	etaStr := fs.Float64("eta-str", def.EtaStr, "structural floor factor η_str")
	lamLex := fs.Float64("lambda-lex", def.Lambda[build.ChanLexical], "weight λ of the lexical channel")
	lamIO := fs.Float64("lambda-io", def.Lambda[build.ChanIO], "weight λ of the I/O channel")
	lamStruct := fs.Float64("lambda-struct", def.Lambda[build.ChanStructural], "weight λ of the structural channel")
	bodyHead := fs.Int("body-head", def.BodyHead, "characters of each skill body kept in the artifact")
	report := fs.String("report", "", "also write the build report as JSON to `file`")
	jsonOut := fs.Bool("json", false, "print the summary as JSON")
	libs, err := parse(c, fs, args, "LIBRARY... -o OUT.skg [flags]")
	if err != nil {
		return err
	}
	if len(libs) == 0 {
		return usagef("no LIBRARY given (a SKILL.md tree, an MCP tools/list .json, a JSON array of tools or a .jsonl of tools)")
	}
	if *out == "" {
		return usagef("flag -o OUT.skg is required")
	}
	for name, v := range map[string]float64{"tau-str": *tauStr, "eta-str": *etaStr, "lambda-lex": *lamLex,
		"lambda-io": *lamIO, "lambda-struct": *lamStruct} {
		if v < 0 || v > 1 {
			return usagef("flag -%s: %v is outside [0, 1]", name, v)
		}
	}
	if *bodyHead < 0 {
		return usagef("flag -body-head: %d is negative", *bodyHead)
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
	opt := def
	opt.Variant, opt.Cap, opt.PerChannel, opt.TauStr, opt.EtaStr, opt.BodyHead =
		*variant, *capFlag, *perChan, *tauStr, *etaStr, *bodyHead
	opt.Lambda = map[string]float64{build.ChanLexical: *lamLex, build.ChanIO: *lamIO, build.ChanStructural: *lamStruct}
	data, rep, err := build.Build(lib.Skills, opt)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(*out, data); err != nil {
		return fmt.Errorf("writing artifact %s: %w", *out, err)
	}
	skipped := make([]string, len(lib.Problems))
	for i, p := range lib.Problems {
		skipped[i] = p.Error()
	}
	summary := struct {
		*build.Report
		Output  string   `json:"output"`
		Skipped []string `json:"skipped"`
	}{rep, *out, skipped}
	if *report != "" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		if err := writeFileAtomic(*report, append(b, '\n')); err != nil {
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
	fmt.Fprintf(w, "candidates %d (%s)\n", rep.Candidates, counts(rep.PerChannel))
	fmt.Fprintf(w, "published %d edges (%s; %s)\n", rep.Published, counts(rep.ByState), counts(rep.ByType))
	fmt.Fprintf(w, "wrote     %s, %d bytes, in %.2fs\n", *out, rep.Bytes, rep.TotalSecond)
	return nil
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
