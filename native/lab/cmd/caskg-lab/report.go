package main

import (
	"bytes"
	"flag"
	"io"

	"github.com/caskg/caskg/native/internal/atomicfile"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/lab/internal/harness"
)

// reportSynopsis is what report takes.
const reportSynopsis = "RESULT.json... [-o docs/evaluation-results.md] [--readme README.md]"

// runReport is caskg-lab report: it reads comparisons written by caskg-lab compare --json,
// writes docs/evaluation-results.md (to -o, or standard output) and rewrites the README's results span.
func runReport(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "", "write to this `file` (atomically) instead of standard output")
	readme := fs.String("readme", "", "rewrite the results between <!-- eval:begin --> and <!-- eval:end --> in this `file`")
	files, err := cmdline.Parse(stdout, "caskg-lab", fs, args, reportSynopsis)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return cmdline.Usagef("report needs at least one RESULT.json of caskg-lab compare --json")
	}
	var results []*harness.Result
	for _, f := range files {
		r, err := harness.ReadResult(f)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	var doc bytes.Buffer
	harness.WriteEvaluation(&doc, results)
	if *out == "" {
		if _, err := stdout.Write(doc.Bytes()); err != nil {
			return err
		}
	} else if err := atomicfile.Write(*out, doc.Bytes()); err != nil {
		return err
	}
	if *readme == "" {
		return nil
	}
	return harness.UpdateReadme(*readme, results)
}
