// Package cmdline holds what the caskg command (native/internal/cli) and the lab's command
// (native/lab/cmd/caskg-lab) share of a command line: flags that may come between the
// positional arguments, usage errors, "did you mean" and the cutoffs of -ks. The lab's command
// reuses them rather than import the CLI's internals, and the CLI never imports the lab.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/caskg/caskg/wasm/engine"
)

// ErrUsage marks an error that the command's usage should follow (exit status 2).
var ErrUsage = errors.New("usage")

// Usagef returns an error that prints the command's usage after the message.
func Usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Message is err's text without the mark of a usage error.
func Message(err error) string {
	return strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")
}

// Parse parses flags that may come before, between or after positional arguments, and returns
// the positional arguments. "--" ends flag parsing. On -h it prints "usage: prog NAME
// synopsis" and the flags to stdout and returns flag.ErrHelp.
func Parse(stdout io.Writer, prog string, fs *flag.FlagSet, args []string, synopsis string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fmt.Fprintf(stdout, "usage: %s %s %s\n", prog, fs.Name(), synopsis)
				fs.PrintDefaults()
				return nil, err
			}
			msg := err.Error()
			if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
				msg += DidYouMean(strings.TrimLeft(name, "-"), flagNames(fs), "-")
			}
			return nil, Usagef("%s", msg)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

// ParseKs parses the comma-separated cutoffs of -ks, ascending.
func ParseKs(flagValue string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(flagValue, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > engine.MaxK {
			return nil, Usagef("flag -ks: %q is not a cutoff in [1, %d]", f, engine.MaxK)
		}
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks, nil
}
