package builder

import (
	"fmt"
	"slices"
	"sort"
)

// MinReporters is how many distinct reporters must agree before what they report counts: a
// skill's use, two skills used together, or failed runs that lacked a companion. One reporter
// (one feedback token, the one loopback source) can then neither make nor tip an edge, however
// often it reports; two that agree count as two runs, which is what two trusted runs count.
// docs/rationale.md says why two and not three.
const MinReporters = 2

// reports gathers the runs that came with a Source (Trace.Source), by reporter, before they
// become evidence. A reporter's runs count as at most one run per skill and per pair: the
// skills it ever used, the pairs it ever used together (in the order of the first run that
// used both), and, per pair, at most one failed run's weight. Each count is admitted only when
// MinReporters reporters give it (admit, admitFailures).
type reports struct {
	order []string // reporters in the order of their first run, so that sums are deterministic
	by    map[string]*reporter
}

type reporter struct {
	skills map[int]bool
	// pairs holds every pair {a, b} (a < b) the reporter's successful runs used together:
	// true when a ran first in the first run that used both.
	pairs  map[pair]bool
	failed [][]int
	// runs is how many runs the reporter sent, successful and failed; counted whether any of
	// them is evidence: a skill it used, or a pair its failures weigh on, that MinReporters agree on.
	runs    int
	counted bool
}

func newReports() *reports { return &reports{by: map[string]*reporter{}} }

// add records a run of source that used ids (known skills, in execution order, no repeats).
func (r *reports) add(source string, ids []int, failed bool) {
	rp := r.by[source]
	if rp == nil {
		rp = &reporter{skills: map[int]bool{}, pairs: map[pair]bool{}}
		r.by[source] = rp
		r.order = append(r.order, source)
	}
	rp.runs++
	if failed {
		rp.failed = append(rp.failed, ids)
		return
	}
	for p, a := range ids {
		rp.skills[a] = true
		for _, b := range ids[p+1:] {
			key := pk(min(a, b), max(a, b))
			if _, seen := rp.pairs[key]; !seen {
				rp.pairs[key] = a < b
			}
		}
	}
}

// admit adds to t the skills and pairs MinReporters or more reporters used, each reporter as
// one run, after the trusted runs.
func (r *reports) admit(t *traceStats) {
	skills := map[int]int{}
	pairs := map[pair]int{}
	forward := map[pair]int{} // reporters whose first run of the pair ran its lower id first
	for _, name := range r.order {
		rp := r.by[name]
		for a := range rp.skills {
			skills[a]++
		}
		for p, fwd := range rp.pairs {
			pairs[p]++
			if fwd {
				forward[p]++
			}
		}
	}
	for a, n := range skills {
		if n >= MinReporters {
			t.count[a] += n
		}
	}
	// Each reporter is one run to the prior's fit (traceStats.fitPrior): its admitted skills,
	// and as co-used the admitted pairs it used.
	for _, name := range r.order {
		rp := r.by[name]
		var v reportedRun
		for a := range rp.skills {
			if skills[a] >= MinReporters {
				v.skills = append(v.skills, a)
			}
		}
		if len(v.skills) == 0 {
			continue
		}
		rp.counted = true
		slices.Sort(v.skills)
		v.pairs = map[pair]bool{}
		for p := range rp.pairs {
			v.pairs[p] = pairs[p] >= MinReporters
		}
		t.reported = append(t.reported, v)
	}
	keys := make([]pair, 0, len(pairs))
	for p, n := range pairs {
		if n >= MinReporters {
			keys = append(keys, p)
		}
	}
	sortPairs(keys)
	for _, p := range keys {
		n, a, b := pairs[p], int(p.i), int(p.j)
		if t.co.add(a, b, n, forward[p], n-forward[p]) {
			t.neighbors[a] = append(t.neighbors[a], b)
			t.neighbors[b] = append(t.neighbors[b], a)
		}
	}
}

// admitFailures adds to t.failed the weight of the reporters' failed runs (shared as
// traceStats.addFailure shares it), at most 1 per reporter and pair, for the pairs
// MinReporters or more reporters' failures weigh on. It runs after every successful run is
// counted, as addFailure does.
func (r *reports) admitFailures(t *traceStats) {
	weights := map[pair][]float64{} // per pair, each reporter's capped weight, in reporter order
	from := map[pair][]*reporter{}  // per pair, the reporters of weights
	for _, name := range r.order {
		rp := r.by[name]
		if len(rp.failed) == 0 {
			continue
		}
		own := map[pair]float64{}
		for _, ids := range rp.failed {
			t.shareFailure(ids, own)
		}
		keys := make([]pair, 0, len(own))
		for p := range own {
			keys = append(keys, p)
		}
		sortPairs(keys)
		for _, p := range keys {
			weights[p] = append(weights[p], min(1, own[p]))
			from[p] = append(from[p], rp)
		}
	}
	keys := make([]pair, 0, len(weights))
	for p, ws := range weights {
		if len(ws) >= MinReporters {
			keys = append(keys, p)
		}
	}
	sortPairs(keys)
	for _, p := range keys {
		for _, w := range weights[p] {
			t.failed[p] += w
		}
		for _, rp := range from[p] {
			rp.counted = true
		}
	}
}

// ReportedRuns is what became of the reported runs (Trace.Source) of a build: how many came, from
// how many reporters, and how many were held back because no skill, pair or failure they
// report had MinReporters reporters agreeing on it.
type ReportedRuns struct {
	Runs          int `json:"runs"`
	Reporters     int `json:"reporters"`
	HeldRuns      int `json:"held_runs"`
	HeldReporters int `json:"held_reporters"`
}

// summary counts the reporters and their runs after admit and admitFailures.
func (r *reports) summary() *ReportedRuns {
	s := &ReportedRuns{Reporters: len(r.order)}
	for _, name := range r.order {
		rp := r.by[name]
		s.Runs += rp.runs
		if !rp.counted {
			s.HeldRuns += rp.runs
			s.HeldReporters++
		}
	}
	return s
}

// String says it in a line for people, with the rule that held runs back.
func (s *ReportedRuns) String() string {
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	rule := fmt.Sprintf("a skill, pair or word counts once %d reporters agree", MinReporters)
	switch s.HeldRuns {
	case 0:
		return fmt.Sprintf("%s from %s, all counted", plural(s.Runs, "reported run"), plural(s.Reporters, "reporter"))
	case s.Runs:
		return fmt.Sprintf("%s from %s held back: %s", plural(s.Runs, "reported run"), plural(s.Reporters, "reporter"), rule)
	}
	return fmt.Sprintf("%s from %s: %d counted, %d from %s held back (%s)", plural(s.Runs, "reported run"),
		plural(s.Reporters, "reporter"), s.Runs-s.HeldRuns, s.HeldRuns, plural(s.HeldReporters, "reporter"), rule)
}

// reportedRun is a reporter as one run, for the prior's fit: the skills it used that count,
// and for each pair it used together whether that pair counts.
type reportedRun struct {
	skills []int
	pairs  map[pair]bool // key {a, b}, a < b
}

func sortPairs(ps []pair) {
	sort.Slice(ps, func(x, y int) bool {
		if ps[x].i != ps[y].i {
			return ps[x].i < ps[y].i
		}
		return ps[x].j < ps[y].j
	})
}

// useEvidence is what the runs say about two skills, Source and Target, that they used
// together: what caskg inspect --learned shows for an edge learned from use.
type useEvidence struct {
	Source, Target string
	Runs           int // successful runs that used both, trusted and reported
	Failed         int // failed runs that used Target without Source
	// Reporters are the distinct sources of the reported runs among Runs, sorted; Trusted the
	// runs without a source.
	Reporters []string
	Trusted   int
	// Counted is whether the runs are evidence in the build: some trusted run, or
	// MinReporters reporters, used the two together.
	Counted bool
}

// LearnedFrom returns the evidence the runs of a build state give on each pair of skills
// (source → target, by index in the state's skills, which are the artifact's) that want
// selects, for the pairs some run used together. It is what the build read: the same
// skills, runs and rules.
func LearnedFrom(st *State, want func(source, target int) bool) ([]useEvidence, error) {
	index := make(map[string]int, len(st.Skills))
	for i, s := range st.Skills {
		index[s.Name] = i
	}
	runs, err := st.Runs()
	if err != nil {
		return nil, err
	}
	t, _ := newTraceStats(runs, index)
	type tally struct {
		runs, failed, trusted int
		reporters             map[string]bool
	}
	tallies := map[pair]*tally{}
	get := func(p pair) *tally {
		tl := tallies[p]
		if tl == nil {
			tl = &tally{reporters: map[string]bool{}}
			tallies[p] = tl
		}
		return tl
	}
	var failedRuns [][]int
	for _, tr := range runs {
		var ids []int
		seen := map[int]bool{}
		for _, name := range tr.Skills {
			if id, ok := index[name]; ok && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if tr.Failed {
			failedRuns = append(failedRuns, ids)
			continue
		}
		for _, a := range ids {
			for _, b := range ids {
				if a == b || !want(a, b) {
					continue
				}
				tl := get(pk(a, b))
				tl.runs++
				if tr.Source == "" {
					tl.trusted++
				} else {
					tl.reporters[tr.Source] = true
				}
			}
		}
	}
	for p, tl := range tallies {
		for _, ids := range failedRuns {
			if slices.Contains(ids, int(p.j)) && !slices.Contains(ids, int(p.i)) {
				tl.failed++
			}
		}
	}
	keys := make([]pair, 0, len(tallies))
	for p := range tallies {
		keys = append(keys, p)
	}
	sortPairs(keys)
	out := make([]useEvidence, 0, len(keys))
	for _, p := range keys {
		tl := tallies[p]
		ev := useEvidence{Source: st.Skills[p.i].Name, Target: st.Skills[p.j].Name, Runs: tl.runs,
			Failed: tl.failed, Trusted: tl.trusted, Counted: t != nil && t.co.co(int(p.i), int(p.j)) > 0}
		for r := range tl.reporters {
			ev.Reporters = append(ev.Reporters, r)
		}
		slices.Sort(ev.Reporters)
		out = append(out, ev)
	}
	return out, nil
}
