package main

import (
	"flag"
	"fmt"

	"github.com/caskg/caskg/native/internal/builder"
	"github.com/caskg/caskg/native/internal/cli"
	"github.com/caskg/caskg/native/internal/cmdline"
	"github.com/caskg/caskg/native/lab/internal/oracle"
)

// oracleProber is the evaluation-only oracle prober of caskg-lab build (-prober oracle): it
// answers the probes from a gold edge file, wrong at a chosen rate, to show what calibration
// makes of a prober of known quality.
func oracleProber() cli.Prober {
	return cli.Prober{Name: "oracle", Usage: "(evaluation only: answers from -oracle-edges)", Register: oracleFlags}
}

// oracleFlags registers the oracle's flags and returns what makes the prober from them. The
// oracle costs nothing to ask, so the automatic frontier budget probes every candidate, as it
// does for the contract prober.
func oracleFlags(fs *flag.FlagSet) func(opt *builder.Options) error {
	edges := fs.String("oracle-edges", "", "evaluation only, with -prober oracle: JSONL `file` of gold edges {\"source\", \"target\"} the oracle answers from")
	rate := fs.Float64("oracle-error", 0, "evaluation only, with -prober oracle: the share of answers the oracle gets wrong, in [0, 1]")
	seed := fs.Uint64("oracle-seed", 1, "evaluation only, with -prober oracle: picks which answers are wrong")
	return func(opt *builder.Options) error {
		if *edges == "" {
			return cmdline.Usagef("the oracle prober (evaluation only) needs -oracle-edges FILE, JSONL gold edges {\"source\", \"target\"}")
		}
		if !(*rate >= 0 && *rate <= 1) {
			return cmdline.Usagef("flag -oracle-error: %v is outside [0, 1]", *rate)
		}
		p, err := oracle.Load(*edges, oracle.Options{ErrorRate: *rate, Seed: *seed})
		if err != nil {
			return fmt.Errorf("flag -oracle-edges: %w", err)
		}
		opt.Prober = p
		if opt.Budget == builder.BudgetAuto {
			opt.Budget = 0
		}
		return nil
	}
}
