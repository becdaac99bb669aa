package builder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/caskg/caskg/native/internal/lines"
)

// Trace is one run: the skills it used, in execution order, and whether it failed.
type Trace struct {
	ID     string   `json:"id"`
	Skills []string `json:"skills"`
	// Failed marks a run reported with "outcome": "failure". Co-use in a failed run is no
	// evidence that the skills belong together; what a failed run lacked is (traceStats.failed).
	Failed bool `json:"failed,omitempty"`
	// Source names who reported the run ("token:NAME", "loopback", "mcp:stdio"), as caskg's
	// feedback logs write it; "" for a run no one reported: a trace file a user gives, or the
	// calls a gateway saw itself. Reported runs are evidence once per reporter, and only where
	// MinReporters reporters agree (reporters.go); the others are trusted as they are.
	Source string `json:"source,omitempty"`
	// Task is what the run was asked: the search query a gateway session began with, the first
	// user message of an imported log, the query a feedback report gave. "" when unknown (trace
	// files written before runs kept their words). Only its words that enough runs share reach
	// the artifact (engine.BuildMemory); the text itself never does.
	Task string `json:"task,omitempty"`
}

// ReadTraces reads a JSONL trace file ({"id", "skills": [...], "outcome"?, "source"?, "task"?}
// per line), naming the file and line of any bad entry. A line with "outcome": "failure" (a failed run
// reported through caskg's feedback) is kept as a failed run; any other outcome must be
// "success". "source" names the reporter of a run that came through feedback.
func ReadTraces(path string) ([]Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("builder: traces: %w", err)
	}
	defer f.Close()
	var out []Trace
	line, err := lines.Each(f, func(_ int, data []byte) error {
		t, err := ParseTrace(data)
		if err == nil {
			out = append(out, t)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("builder: traces %s:%d: %w", path, line, err)
	case len(out) == 0:
		return nil, fmt.Errorf("builder: traces %s: no traces", path)
	}
	return out, nil
}

// ParseTrace reads one line of a trace file as ReadTraces does (its error names the field, not
// the file and line), for readers that go through a file themselves: the gateway's learning
// loop reads what it appended with it, so both read a line the same way.
func ParseTrace(data []byte) (Trace, error) {
	var raw struct {
		ID      json.RawMessage `json:"id"`
		Skills  []string        `json:"skills"`
		Outcome string          `json:"outcome"`
		Source  string          `json:"source"`
		Task    string          `json:"task"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Trace{}, fmt.Errorf("not a JSON trace: %w", err)
	}
	if raw.Skills == nil {
		return Trace{}, errors.New(`field "skills" missing`)
	}
	failed := false
	switch raw.Outcome {
	case "", "success":
	case "failure":
		failed = true
	default:
		return Trace{}, fmt.Errorf(`field "outcome": %q is not "success" or "failure"`, raw.Outcome)
	}
	return Trace{ID: string(bytes.Trim(raw.ID, `"`)), Skills: raw.Skills, Failed: failed, Source: raw.Source, Task: raw.Task}, nil
}

type pair struct{ i, j int32 }

// traceStats counts, over the successful runs, how often each skill ran, how often two ran
// together and how often one ran before the other; and, over the failed runs, the companions a
// skill ran without (failed).
type traceStats struct {
	count     map[int]int
	uses      []int    // count by skill id, once stats has made it: the pairs' hot path reads it
	co        *coTable // co-uses, and how many ran i before j
	neighbors map[int][]int
	traces    int
	ordered   bool // whether the runs' order carries information (see newTraceStats)
	// trustedCount and trustedCo are count and co of the trusted runs alone, while the prior
	// is fitted (the same maps when no reporter added to them).
	trustedCount map[int]int
	trustedCo    *coTable
	// The Beta prior of P(s_i used | s_j used), fitted to the runs themselves (fitPrior).
	priorA, priorB float64
	// failed[{i, j}] is the weight of the failed runs that used s_j without s_i, a companion of
	// s_j in the successful runs: each such run gives its weight 1 to s_j's missing companions
	// in equal shares (addFailure).
	failed   map[pair]float64
	failures int // failed runs that used a known skill
	// reported are the reporters, each as one run, that the prior is also fitted to.
	reported []reportedRun
}

// traceRead is what newTraceStats says of the runs beside their statistics: the skill names
// not in the library it skipped, and what became of the reported runs (nil without any).
type traceRead struct {
	unknown  int
	reported *ReportedRuns
}

// newTraceStats indexes traces by skill id; names not in the library are skipped and counted.
func newTraceStats(traces []Trace, index map[string]int) (*traceStats, traceRead) {
	if len(traces) == 0 {
		return nil, traceRead{}
	}
	tl := newRunTally(len(index))
	for i := range traces {
		tl.add(&traces[i], i, index)
	}
	t, read, _ := tl.stats(index, func(i int) (Trace, error) { return traces[i], nil }) // no error: the runs are at hand
	return t, read
}

// runTally is what the trusted successful runs add up to, in the order they came, and which
// other runs (failed or reported) there are: what a build state keeps of its runs for the
// statistics (encodeTally), so that an update adds its new runs to it rather than reading
// every run again. The other runs are read again by every build: what they count depends on
// every successful run (addFailure) or on the other reporters (admit).
type runTally struct {
	traces    int
	sorted    bool // every trusted successful run lists its skills in name order
	unknown   int  // names not in the library, of the trusted successful runs
	count     map[int]int
	co        *coTable
	neighbors map[int][]int
	others    []int32 // the failed and reported runs, by index
}

// newRunTally returns an empty tally for a library of n skills.
func newRunTally(n int) *runTally {
	return &runTally{sorted: true, count: map[int]int{}, co: newCoTable(n), neighbors: map[int][]int{}}
}

// add counts run tr, the run numbered at.
func (tl *runTally) add(tr *Trace, at int, index map[string]int) {
	if tr.Source != "" || tr.Failed {
		tl.others = append(tl.others, int32(at))
		return
	}
	for k := 1; k < len(tr.Skills); k++ {
		tl.sorted = tl.sorted && tr.Skills[k-1] <= tr.Skills[k]
	}
	ids, unknown := runIDs(tr, index)
	tl.unknown += unknown
	if len(ids) == 0 {
		return
	}
	tl.traces++
	for p, a := range ids {
		tl.count[a]++
		for _, b := range ids[p+1:] {
			if tl.co.add(a, b, 1, 1, 0) {
				tl.neighbors[a] = append(tl.neighbors[a], b)
				tl.neighbors[b] = append(tl.neighbors[b], a)
			}
		}
	}
}

// runIDs are the known skills of a run, in its order, each once, and how many names it gave
// that are not in the library.
func runIDs(tr *Trace, index map[string]int) ([]int, int) {
	var ids []int
	unknown := 0
	for _, name := range tr.Skills {
		id, ok := index[name]
		if !ok {
			unknown++
			continue
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, unknown
}

// stats makes the statistics of the tallied runs, reading the others with run; it takes over
// the tally's maps.
func (tl *runTally) stats(index map[string]int, run func(i int) (Trace, error)) (*traceStats, traceRead, error) {
	t := &traceStats{count: tl.count, co: tl.co, neighbors: tl.neighbors,
		failed: map[pair]float64{}, traces: tl.traces}
	unknown := tl.unknown
	var failedRuns [][]int
	var reported *reports
	reportedSorted := true
	for _, i := range tl.others {
		tr, err := run(int(i))
		if err != nil {
			return nil, traceRead{}, err
		}
		if tr.Source != "" {
			// Reported runs never decide whether the trusted runs' order means anything.
			for k := 1; k < len(tr.Skills) && !tr.Failed; k++ {
				reportedSorted = reportedSorted && tr.Skills[k-1] <= tr.Skills[k]
			}
		}
		ids, unk := runIDs(&tr, index)
		unknown += unk
		if len(ids) == 0 {
			continue
		}
		if tr.Source != "" {
			if reported == nil {
				reported = newReports()
			}
			reported.add(tr.Source, ids, tr.Failed)
			continue
		}
		failedRuns = append(failedRuns, ids)
	}
	trusted := t.traces > 0
	// The prior is fitted to the trusted runs as they are (trustedCount, trustedCo) and to the
	// reporters that admit adds to count and co.
	t.trustedCount, t.trustedCo = t.count, t.co
	if reported != nil {
		t.trustedCount, t.trustedCo = maps.Clone(t.count), t.co.clone()
		reported.admit(t)
	}
	read := traceRead{unknown: unknown}
	if t.traces == 0 && len(t.count) == 0 {
		if reported != nil {
			read.reported = reported.summary()
		}
		return nil, read, nil
	}
	// Runs that all list their skills in sorted order were sorted by whoever wrote them, not
	// executed that way: their order is no evidence of which skill comes first. A gateway's runs
	// are in the order they ran, and one run out of name order among them is enough to tell;
	// a gateway whose every run happens to sort by name loses the direction until one does not
	// (docs/rationale.md). Reported runs say so only when no trusted run does.
	if trusted {
		t.ordered = !tl.sorted
	} else {
		t.ordered = !reportedSorted
	}
	// The prior is fitted to the trusted runs and to each reporter as one run of what counts
	// of it: one reporter weighs on how far a co-use is trusted as one run does.
	t.priorA, t.priorB = t.fitPrior()
	t.trustedCount, t.trustedCo = nil, nil
	for _, ids := range failedRuns {
		t.addFailure(ids)
	}
	if reported != nil {
		reported.admitFailures(t)
		read.reported = reported.summary()
	}
	n := len(index) // every id the runs name is an index of the library
	for a := range t.count {
		n = max(n, a+1)
	}
	t.uses = make([]int, n)
	for a, n := range t.count {
		t.uses[a] = n
	}
	return t, read, nil
}

// addFailure records a failed run that used the skills ids. A run that used s_j without s_i,
// where the successful runs of s_j used s_i, failed as the counterfactual "remove s_i" predicts
// if s_i is a prerequisite of s_j: it is a trial of s_j that needed s_i. Which missing companion
// the run needed is unknown, so the run's weight 1 is shared equally among the companions of
// s_j it lacked. A companion it did use gets nothing: with both present, the failure says
// nothing about the pair. A failed run never adds a pair the successful runs did not use.
func (t *traceStats) addFailure(ids []int) {
	t.shareFailure(ids, t.failed)
}

// shareFailure counts the failed run ids and adds its weight to into, shared as addFailure
// describes; a reporter's failures go to the reporter's own tally before they are admitted.
func (t *traceStats) shareFailure(ids []int, into map[pair]float64) {
	t.failures++
	in := make(map[int]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	for _, j := range ids {
		var missing []int
		for _, i := range t.neighbors[j] {
			if !in[i] {
				missing = append(missing, i)
			}
		}
		for _, i := range missing {
			into[pk(i, j)] += 1 / float64(len(missing))
		}
	}
}

// fitPrior chooses the Beta prior (a, b) of P(s_v used | s_u used) that best predicts each run
// from the others (leave one out): for every run r, skill u in r and companion v the other runs
// used with u, it predicts v ∈ r with (co' + a) / (n' + a + b), where co' and n' count the other
// runs, and keeps the (a, b) of the highest likelihood on a fixed grid. Runs that repeat the
// same procedures fit a prior that trusts one co-use; runs that combine skills at random fit one
// that does not, so a companion seen once stays weak there. Without any skill used twice there
// is nothing to hold out and the prior is uniform, Beta(1, 1).
func (t *traceStats) fitPrior() (a, b float64) {
	type cell struct{ co, n int }
	type tally struct{ hit, all float64 }
	cells := map[cell]*tally{}
	tallyOf := func(k cell) *tally {
		c := cells[k]
		if c == nil {
			c = &tally{}
			cells[k] = c
		}
		return c
	}
	// count tallies one prediction: the pair's co-uses co, less the held-out run's own when it
	// used the companion (hit), among n other runs of the skill.
	count := func(co, n int, hit bool) {
		if hit {
			co--
		}
		if co < 1 {
			return
		}
		c := cells[cell{co, n}]
		if c == nil {
			c = &tally{}
			cells[cell{co, n}] = c
		}
		c.all++
		if hit {
			c.hit++
		}
	}
	// Every trusted run of u asks the same question of each companion v: the tc(u) runs of u
	// hold v in h(u, v) of them (hits) and lack it in the rest, so the tallies are counted per
	// pair, not per run, member and companion: the same sums, in a small part of the time at
	// 100,000 runs (whole numbers in float64 add up exactly in any order).
	// The pairs of u are read from its row of the table (the companions the runs used it
	// with), not looked up one by one: the same pairs as t.neighbors[u].
	// For one u, n is the same for every companion and most co-uses are small: they are
	// added up by co in a short array first, and each co that occurs goes to its cell once.
	const dense = 256
	var byCo [dense]struct{ hit, all float64 }
	var seen []int
	add := func(co, n int, hit, all float64) {
		if co >= dense {
			c := tallyOf(cell{co, n})
			c.hit += hit
			c.all += all
			return
		}
		if byCo[co].all == 0 {
			seen = append(seen, co)
		}
		byCo[co].hit += hit
		byCo[co].all += all
	}
	for u, runs := range t.trustedCount {
		n := t.count[u] - 1
		if n < 1 || u >= len(t.co.rows) {
			continue
		}
		var trusted []coUse // u's row of trustedCo, when it is another table
		if t.trustedCo != t.co && u < len(t.trustedCo.rows) {
			trusted = t.trustedCo.rows[u]
		}
		for _, e := range t.co.rows[u] {
			co, hits := int(e.co), int(e.co)
			if t.trustedCo != t.co {
				hits = 0
				if k, ok := search(trusted, e.j); ok {
					hits = int(trusted[k].co)
				}
			}
			if co-1 >= 1 && hits > 0 {
				add(co-1, n, float64(hits), float64(hits))
			}
			if co >= 1 && runs > hits {
				add(co, n, 0, float64(runs-hits))
			}
		}
		for _, co := range seen {
			c := tallyOf(cell{co, n})
			c.hit += byCo[co].hit
			c.all += byCo[co].all
			byCo[co].hit, byCo[co].all = 0, 0
		}
		seen = seen[:0]
	}
	// A reporter is held out as one run: it added 1 to each of its counted skills and pairs.
	for _, r := range t.reported {
		for _, u := range r.skills {
			n := t.count[u] - 1
			if n < 1 {
				continue
			}
			for _, v := range t.neighbors[u] {
				counted, used := r.pairs[pk(min(u, v), max(u, v))]
				if used && !counted {
					continue // its co-use of the two is not evidence: neither a hit nor a miss
				}
				count(t.co.co(u, v), n, used)
			}
		}
	}
	if len(cells) == 0 {
		return 1, 1
	}
	keys := make([]cell, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(x, y int) bool {
		if keys[x].n != keys[y].n {
			return keys[x].n < keys[y].n
		}
		return keys[x].co < keys[y].co
	})
	// The grid reads the cells in key order from a slice: a map look-up per cell and grid point
	// was most of the fit at 100,000 runs.
	entries := make([]priorEntry, len(keys))
	for i, k := range keys {
		c := cells[k]
		entries[i] = priorEntry{float64(k.co), float64(k.n), c.hit, c.all - c.hit}
	}
	return gridPrior(entries)
}

// priorEntry is one cell of fitPrior's tally: co-uses co of a pair among n other runs of a
// skill, with the predictions it got right (hit) and wrong (miss).
type priorEntry struct {
	co, n, hit, miss float64
}

// gridPrior returns the (a, b) of the Beta prior on fitPrior's grid (a 0.01 … 10, b 0.01 … 100,
// ten steps a decade) under which the cells are likeliest, the first on a tie.
//
// Each cell adds hit·log p + miss·log(1−p), p = (co+a)/(n+a+b). With 1 ≤ co ≤ n, p stays inside
// the clip [1e-9, 1−1e-9] and the sum splits into Σ H(co)·log(co+a) + Σ M(n−co)·log(n−co+b) −
// Σ T(n)·log(n+a+b), whose tallies H, M, T gather the cells by co, n−co and n: the first two
// depend on one grid axis each, and n takes at most one value per skill. At 100,000 runs that is
// 19,000 cells against a few hundred values of each, so the fit costs a small part of what
// two logarithms per cell and grid point did (docs/rationale.md, "What does an update keep").
func gridPrior(entries []priorEntry) (a, b float64) {
	as, bs := make([]float64, 31), make([]float64, 41)
	for i := range as {
		as[i] = math.Pow(10, -2+float64(i)/10) // 0.01 … 10
	}
	for i := range bs {
		bs[i] = math.Pow(10, -2+float64(i)/10) // 0.01 … 100
	}
	split := true
	for _, c := range entries {
		split = split && c.co >= 1 && c.co <= c.n && c.n <= 1e6 && c.hit >= 0 && c.miss >= 0
	}
	best := math.Inf(-1)
	a, b = 1, 1
	if !split {
		for _, ca := range as {
			for _, cb := range bs {
				var ll float64
				for _, c := range entries {
					p := (c.co + ca) / (c.n + ca + cb)
					p = min(max(p, 1e-9), 1-1e-9)
					ll += c.hit*math.Log(p) + c.miss*math.Log(1-p)
				}
				if ll > best {
					best, a, b = ll, ca, cb
				}
			}
		}
		return a, b
	}
	// The tallies in increasing order of their key, so that the sums do not depend on a map's.
	tally := func(key func(priorEntry) float64, val func(priorEntry) float64) (keys, vals []float64) {
		m := map[float64]float64{}
		for _, c := range entries {
			if v := val(c); v != 0 {
				m[key(c)] += v
			}
		}
		for k := range m {
			keys = append(keys, k)
		}
		sort.Float64s(keys)
		for _, k := range keys {
			vals = append(vals, m[k])
		}
		return keys, vals
	}
	hk, hv := tally(func(c priorEntry) float64 { return c.co }, func(c priorEntry) float64 { return c.hit })
	mk, mv := tally(func(c priorEntry) float64 { return c.n - c.co }, func(c priorEntry) float64 { return c.miss })
	tk, tv := tally(func(c priorEntry) float64 { return c.n }, func(c priorEntry) float64 { return c.hit + c.miss })
	sum := func(keys, vals []float64, add float64) float64 {
		var s float64
		for i, k := range keys {
			s += vals[i] * math.Log(k+add)
		}
		return s
	}
	byB := make([]float64, len(bs))
	for i, cb := range bs {
		byB[i] = sum(mk, mv, cb)
	}
	for _, ca := range as {
		byA := sum(hk, hv, ca)
		for i, cb := range bs {
			if ll := byA + byB[i] - sum(tk, tv, ca+cb); ll > best {
				best, a, b = ll, ca, cb
			}
		}
	}
	return a, b
}

// ahead is how many co-uses of s_i and s_j are evidence for the edge s_i → s_j. Runs that
// record their order (traceStats.ordered) are evidence for the order they ran the two in, never
// the reverse: a run that called s_j and then s_i did not need s_i for s_j. A pair that always
// ran s_j first therefore has none; a pair that ran in both orders is a workflow without a
// direction (twoWay), and every co-use counts for both edges, as it does for runs whose order
// means nothing.
func (t *traceStats) ahead(i, j int) int {
	e := t.co.get(i, j)
	if e.co == 0 || !t.ordered || e.ahead > 0 {
		return int(e.co)
	}
	return 0
}

// twoWay reports whether runs that record their order used s_i and s_j in both orders: the two
// belong together, but neither comes first (relation makes their edges workflows).
func (t *traceStats) twoWay(i, j int) bool {
	if t == nil || !t.ordered {
		return false
	}
	e := t.co.get(i, j)
	return e.ahead > 0 && e.behind > 0
}

// given is P(i ran before j | j ran), smoothed as ahead(i, j)/(n_j + 1) so that a single run is
// not taken as certainty: how often the runs that needed s_j used s_i first (or at all, when the
// runs' order says nothing: ahead).
func (t *traceStats) given(i, j int) float64 {
	if t == nil {
		return 0
	}
	if n := t.ahead(i, j); n > 0 {
		return float64(n) / float64(t.uses[j]+1)
	}
	return 0
}

// predictive is the posterior that a companion seen in the one run of a skill is used with it
// again, under the prior fitted to the runs (fitPrior): near 1 for runs that repeat procedures,
// near 0 for runs that combine skills at random.
func (t *traceStats) predictive() float64 {
	return (1 + t.priorA) / (1 + t.priorA + t.priorB)
}

// posterior is the posterior mean of P(s_i needed | s_j used) under the fitted Beta prior (a, b):
// (co(i, j) + f + a) / (n_j + f + a + b), 0 for a pair the successful runs never used together
// or, in runs that record their order, only ever used s_j first (ahead): the order of calls
// decides the direction the runs confirm. Every successful run of s_j is one trial, a success
// when it used s_i, so a companion seen in 50 of 52 runs is near certain and one seen once in
// one run stays uncertain; f, the weight of the failed runs of s_j without s_i
// (traceStats.failed), counts as that many more trials in which s_i was needed.
func (t *traceStats) posterior(i, j int) float64 {
	if t == nil {
		return 0
	}
	co := t.ahead(i, j)
	if co == 0 {
		return 0
	}
	f := t.failed[pk(i, j)]
	return (float64(co) + f + t.priorA) / (float64(t.uses[j]) + f + t.priorA + t.priorB)
}

// pk is the pair (i, j). A pair is two int32s, 8 bytes, so that the maps keyed by pairs take
// the runtime's fast path for 8-byte keys. The co-uses, looked up for every scored pair, are
// not in such a map but in a coTable.
func pk(i, j int) pair { return pair{int32(i), int32(j)} }
