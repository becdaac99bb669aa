package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/cli/tracelog"
)

const tracesImportArgs = "LOG... --artifact A.skg -o TRACES.jsonl [--strict] [--json]"

// runTraces runs a traces subcommand; import is the only one, and "caskg traces -h" is its help.
func runTraces(c *ctx, args []string) error {
	fs := flag.NewFlagSet("traces import", flag.ContinueOnError)
	artifact := fs.String("artifact", "", "the artifact whose skill names the calls are matched against (required)")
	out := fs.String("o", "", "the trace JSONL to write (required)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	strict := fs.Bool("strict", false, "fail on any bad record or unreadable log instead of leaving it out and importing the rest")
	switch {
	case len(args) > 0 && args[0] == "import":
		args = args[1:]
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help"):
	default:
		return usagef("want a subcommand: import")
	}
	logs, err := parse(c, fs, args, tracesImportArgs)
	if err != nil {
		return err
	}
	switch {
	case len(logs) == 0:
		return usagef("want at least one LOG")
	case *artifact == "":
		return usagef("--artifact is required")
	case *out == "":
		return usagef("-o is required")
	}
	g, err := loadArtifact(*artifact)
	if err != nil {
		return err
	}
	names := make([]string, g.NumSkills())
	for i := range names {
		names[i] = g.Name(i)
	}
	im := tracelog.NewImporter(tracelog.NewMatcher(names))
	var unreadable []string
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		problems, err := im.Add(path, data)
		switch {
		case err != nil && *strict:
			return fmt.Errorf("%w (--strict)", err)
		case err != nil:
			unreadable = append(unreadable, err.Error())
			if !*jsonOut {
				fmt.Fprintf(c.stderr, "caskg traces import: %v; left out\n", err)
			}
		case len(problems) > 0 && *strict:
			return fmt.Errorf("%w (--strict; %d bad records in %s)", problems[0], len(problems), path)
		}
		if !*jsonOut {
			for i, p := range problems {
				if i == tracelog.MaxProblems {
					fmt.Fprintf(c.stderr, "caskg traces import: %s: %d more bad records left out\n", path, len(problems)-i)
					break
				}
				fmt.Fprintf(c.stderr, "caskg traces import: %v; left out\n", p)
			}
		}
	}
	rep := im.Report()
	if rep.Written > 0 {
		if err := atomicfile.Write(*out, tracelog.Encode(im.Traces())); err != nil {
			return err
		}
	}
	if *jsonOut {
		rec := struct {
			Output     string   `json:"output,omitempty"` // empty when nothing was written
			Unreadable []string `json:"unreadable_files,omitempty"`
			tracelog.Report
		}{Report: rep, Unreadable: unreadable}
		if rep.Written > 0 {
			rec.Output = *out
		}
		b, _ := json.MarshalIndent(rec, "", "  ")
		fmt.Fprintf(c.stdout, "%s\n", b)
	} else if err := printImport(c, rep, *out); err != nil {
		return err
	}
	if rep.Written == 0 {
		return errors.New("no call matched a skill of the artifact: nothing written")
	}
	return nil
}

func printImport(c *ctx, rep tracelog.Report, out string) error {
	w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%-16s\tfiles\ttraces\tcalls\texact\tnormalized\tunmatched\t\n", "format")
	for _, f := range rep.Formats {
		fmt.Fprintf(w, "%-16s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", f.Format, f.Files, f.Traces, f.Calls, f.Exact, f.Normalized, f.Unmatched)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if rep.Written > 0 {
		fmt.Fprintf(c.stdout, "\nwrote %d traces to %s", rep.Written, out)
	} else {
		fmt.Fprint(c.stdout, "\nwrote no traces")
	}
	fmt.Fprintf(c.stdout, " (%d left out with no matched call, %d repeated calls collapsed, %d records of no known format skipped",
		rep.Empty, rep.Collapsed, rep.Skipped)
	if rep.BadRecords > 0 {
		fmt.Fprintf(c.stdout, ", %d bad records left out", rep.BadRecords)
	}
	fmt.Fprintln(c.stdout, ")")
	if len(rep.Normalized) > 0 {
		fmt.Fprintln(c.stdout, "\nmatched after normalization:")
		w = tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		for _, n := range rep.Normalized {
			fmt.Fprintf(w, "  %s\t→ %s\t%d\n", n.Name, n.Skill, n.Count)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if len(rep.Unmatched) > 0 {
		fmt.Fprintln(c.stdout, "\nunmatched (the library may be missing these):")
		w = tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		for _, n := range rep.Unmatched {
			fmt.Fprintf(w, "  %s\t%d\n", n.Name, n.Count)
		}
		return w.Flush()
	}
	return nil
}
