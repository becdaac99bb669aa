package synth

import (
	"fmt"
	"slices"

	"github.com/caskg/caskg/native/internal/ingest"
)

// Run is one synthetic run: its id and the names of the skills it used, in order. It is a plain
// type so that package builder's tests can use this package: callers convert it to their own
// run type (builder.Trace).
type Run struct {
	ID     string
	Skills []string
	Task   string // what the run was asked; "" from Runs, set by TaskRuns
}

// Runs returns n runs over skills, a library Grow made from a base library of base skills. The
// library falls into variant groups of base consecutive skills (skill k in group k / base: the
// base skills, then the -v1 variants, and so on; the last group may be short). Each run picks a
// group, then 3 to 5 distinct skills of it (by position) (fewer when the group is smaller), so the runs repeat
// procedures within a group as real runs do. The choices come from a 64-bit linear congruential
// generator seeded by first; the runs are named run-<first>, run-<first+1>, …. The same
// arguments always give the same runs.
func Runs(skills []ingest.Skill, base, n, first int) ([]Run, error) {
	switch {
	case len(skills) == 0:
		return nil, fmt.Errorf("synth: runs over an empty library")
	case base < 1:
		return nil, fmt.Errorf("synth: base size %d must be at least 1", base)
	case n < 0:
		return nil, fmt.Errorf("synth: %d runs: the count must not be negative", n)
	case first < 0:
		return nil, fmt.Errorf("synth: first run id %d must not be negative", first)
	}
	groups := (len(skills) + base - 1) / base
	next := lcg(uint64(first)*2862933555777941757 + 3037000493)
	out := make([]Run, 0, n)
	for r := range n {
		g := next(groups)
		size := min(base, len(skills)-g*base)
		want := min(3+next(3), size)
		picked := make([]int, 0, want)
		for len(picked) < want {
			if k := g*base + next(size); !slices.Contains(picked, k) {
				picked = append(picked, k)
			}
		}
		names := make([]string, len(picked))
		for i, k := range picked {
			names[i] = skills[k].Name
		}
		out = append(out, Run{ID: fmt.Sprintf("run-%d", first+r), Skills: names})
	}
	return out, nil
}

// lcg returns a fixed linear congruential generator started at seed: each call gives the next
// number below m. The same seed gives the same numbers on every machine.
func lcg(seed uint64) func(m int) int {
	x := seed
	return func(m int) int {
		x = x*6364136223846793005 + 1442695040888963407
		return int(x>>33) % m
	}
}
