package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/caskg/caskg/native/atomicfile"
	"github.com/caskg/caskg/native/tracelog"
)

const tracesImportArgs = "LOG... --artifact A.skg -o TRACES.jsonl [--json]"

// runTraces runs a traces subcommand; import is the only one, and "caskg traces -h" is its help.
func runTraces(c *ctx, args []string) error {
	fs := flag.NewFlagSet("traces import", flag.ContinueOnError)
	artifact := fs.String("artifact", "", "the artifact whose skill names the calls are matched against (required)")
	out := fs.String("o", "", "the trace JSONL to write (required)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
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
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := im.Add(path, data); err != nil {
			return err
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
			Output string `json:"output,omitempty"` // empty when nothing was written
			tracelog.Report
		}{Report: rep}
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
	fmt.Fprintf(c.stdout, " (%d left out with no matched call, %d repeated calls collapsed, %d records of no known format skipped)\n",
		rep.Empty, rep.Collapsed, rep.Skipped)
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
