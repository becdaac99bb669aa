package cli

import (
	"flag"
	"fmt"

	"github.com/caskg/caskg/native/builder"
	"github.com/caskg/caskg/native/lab/oracle"
)

// oracleFlags configure the evaluation-only oracle prober (-prober oracle): it answers the
// probes from a gold edge file, wrong at a chosen rate, to show what calibration makes of a
// prober of known quality. It is never chosen by default.
type oracleFlags struct {
	edges string
	rate  float64
	seed  uint64
	fs    *flag.FlagSet // to tell flags given on the command line from defaults
}

// oracleFlagNames are the flags that only -prober oracle reads.
var oracleFlagNames = []string{"oracle-edges", "oracle-error", "oracle-seed"}

func (f *oracleFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.edges, "oracle-edges", "", "evaluation only, with -prober oracle: JSONL `file` of gold edges {\"source\", \"target\"} the oracle answers from")
	fs.Float64Var(&f.rate, "oracle-error", 0, "evaluation only, with -prober oracle: the share of answers the oracle gets wrong, in [0, 1]")
	fs.Uint64Var(&f.seed, "oracle-seed", 1, "evaluation only, with -prober oracle: picks which answers are wrong")
}

// given reports the oracle flags set on the command line.
func (f *oracleFlags) given() []string {
	set := map[string]bool{}
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	}
	var out []string
	for _, n := range oracleFlagNames {
		if set[n] {
			out = append(out, n)
		}
	}
	return out
}

// configure makes the oracle opt's prober. The oracle costs nothing to ask, so the automatic
// frontier budget probes every candidate, as it does for the contract prober.
func (f *oracleFlags) configure(opt *builder.Options) error {
	if f.edges == "" {
		return usagef("the oracle prober (evaluation only) needs -oracle-edges FILE, JSONL gold edges {\"source\", \"target\"}")
	}
	if !(f.rate >= 0 && f.rate <= 1) {
		return usagef("flag -oracle-error: %v is outside [0, 1]", f.rate)
	}
	p, err := oracle.Load(f.edges, oracle.Options{ErrorRate: f.rate, Seed: f.seed})
	if err != nil {
		return fmt.Errorf("flag -oracle-edges: %w", err)
	}
	opt.Prober = p
	if opt.Budget == builder.BudgetAuto {
		opt.Budget = 0
	}
	return nil
}
