// Command caskg-lab is the lab's side of the caskg command line, for make eval:
//
//	caskg-lab compare LIBRARY... --tasks TASKS.jsonl [--gold-edges E [--oracle-errors 0.1,0.3]] ...
//	caskg-lab report RESULT.json... [-o docs/evaluation-results.md] [--readme README.md]
//	caskg-lab build LIBRARY... -o OUT.skg --prober oracle --oracle-edges GOLD.jsonl [--oracle-error R]
//	caskg-lab verboseapi TOOLS.json TASKS.jsonl -o DIR [--seed N] [--tools N] [--parts N --part I] [--short]
//
// compare builds a library the ways the harness compares (native/lab/internal/harness) and scores them;
// report writes docs/evaluation-results.md and the README's results from the comparisons; build is caskg
// build with the evaluation-only oracle prober (native/lab/internal/oracle) among the -prober choices;
// verboseapi writes a dev catalog in the shape of a verbose REST-API collection
// (native/lab/internal/verboseapi). The product command caskg knows none of them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/cmdline"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func init() {
	cli.AddProber(oracleProber())
}

type command struct {
	name, args string
	run        func(stdout io.Writer, args []string) error
}

var commands = []command{
	{"compare", compareSynopsis, runCompare},
	{"report", reportSynopsis, runReport},
	{"verboseapi", verboseSynopsis, runVerbose},
}

// run runs the command line args (without the program name) and returns the exit status: 0 on
// success, 1 on a failure, 2 on a usage error. build is caskg's, run by cli.Run.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "build" {
		return cli.Run(args, stdout, stderr)
	}
	names := []string{"build"}
	for _, cmd := range commands {
		names = append(names, cmd.name)
		if len(args) > 0 && cmd.name == args[0] {
			err := cmd.run(stdout, args[1:])
			if err == nil || errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return fail(stderr, "caskg-lab "+cmd.name, "caskg-lab "+cmd.name+" "+cmd.args, err)
		}
	}
	what := "no command given"
	if len(args) > 0 {
		what = fmt.Sprintf("unknown command %q%s", args[0], cmdline.DidYouMean(args[0], names, ""))
	}
	return fail(stderr, "caskg-lab", "caskg-lab build|compare|report|verboseapi [flags]", cmdline.Usagef("%s", what))
}

// fail reports err of the command prefix on stderr, the synopsis after a usage error, and
// returns the exit status.
func fail(stderr io.Writer, prefix, synopsis string, err error) int {
	fmt.Fprintln(stderr, prefix+": "+cmdline.Message(err))
	if !errors.Is(err, cmdline.ErrUsage) {
		return 1
	}
	fmt.Fprintf(stderr, "usage: %s\n", synopsis)
	return 2
}
